// TunnelSocket: runs a tunnel Endpoint (tunnel/session/endpoint.h) on one
// Boost.Asio UDP socket. The thin driver of the sans-IO core:
//
//   socket readable  -> recvmmsg() a batch -> endpoint.on_datagram() each ->
//                       service every session the batch touched
//   urgent lane      -> a second socket on the same port takes the peer's
//                       PacketType::data_urgent datagrams (a request, ACKs,
//                       a call), steered by the kernel (SO_REUSEPORT and a
//                       classic BPF program on the first byte); it is read
//                       before each batch of the first and after every 64
//                       datagrams within one, so they do not wait behind a
//                       queue of bulk datagrams (issue 22). Without kernel
//                       support: one socket, as before (urgent_lane_error())
//   session timer    -> its ConnectionDriver's on_timer()
//   app wrote/read   -> service(session)
//   transmits        -> collected per service round, sent with sendmmsg()
//                       (proxy/udp_batch.h); a hub bound to 0.0.0.0 or ::
//                       sends from the local address the peer wrote to
//   socket full      -> the unsent rest waits in order for wait_write, and
//                       every service with it (timers, app, received
//                       datagrams' replies): nothing is produced that could
//                       not be sent, and nothing is polled
//
// Each Session is driven by the same service loop the simulator uses
// (BasicConnectionDriver<Session>, tunnel/connection_driver.h), with one
// steady_timer. Time: Instant = steady_clock since this object was made;
// the wall clock is read once, at construction, for handshake timestamps.
//
// The application gets each session's stream events through a
// SessionHandler it registers per session.
#pragma once

// <utility> first: Boost 1.74's asio/awaitable.hpp uses std::exchange without it (C++20).
#include <utility>
#include <boost/asio.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "congestion/temporal_cache.h"
#include "proxy/udp_batch.h"
#include "tunnel/connection_driver.h"
#include "tunnel/session/endpoint.h"

namespace egw::proxy {

// Stream events of one session, plus its coming up and going down.
class SessionHandler : public tunnel::ConnectionEventHandler {
 public:
  virtual void on_session_up(tunnel::session::Session&, Instant) {}
  virtual void on_session_down(tunnel::session::Session&, const std::string& /*reason*/, Instant) {}
};

struct TunnelSocketStats {
  std::uint64_t datagrams_received = 0;
  std::uint64_t datagrams_sent = 0;
  std::uint64_t receive_batches = 0;
  std::uint64_t send_batches = 0;
  std::uint64_t dropped_truncated = 0;  // larger than our receive buffer
  std::uint64_t send_errors = 0;
  std::uint64_t send_blocked = 0;              // waits for a full socket buffer to drain
  std::uint64_t dropped_send_buffer_full = 0;  // past the queue's bound while waiting
  std::uint64_t sources_refused = 0;  // a peer's source address the host no longer has
  std::uint64_t urgent_datagrams_received = 0;  // of datagrams_received: on the urgent lane's socket
};

class TunnelSocket {
 public:
  // Binds `local` (port 0: any). Does not send anything until start().
  // `timestamps` (a responder's replay memory across restarts) is owned here.
  TunnelSocket(boost::asio::io_context& io, const tunnel::session::EndpointConfig& config,
               const boost::asio::ip::udp::endpoint& local, congestion::TemporalCache* cache,
               std::unique_ptr<tunnel::session::TimestampStore> timestamps = nullptr);
  ~TunnelSocket();
  TunnelSocket(const TunnelSocket&) = delete;
  TunnelSocket& operator=(const TunnelSocket&) = delete;

  void set_handler(std::size_t session_index, SessionHandler* handler);
  // Starts receiving; an initiator also starts its handshakes.
  void start();
  // "Send now": after the app wrote, read, finished or reset a stream.
  void service(std::size_t session_index);
  // Initiator: (re)connect a session whose handshake gave up or whose connection ended.
  void connect(std::size_t session_index);

  Instant now() const;
  tunnel::session::Endpoint& endpoint() { return endpoint_; }
  boost::asio::ip::udp::endpoint local_endpoint() const { return socket_.local_endpoint(); }
  int native_handle() { return socket_.native_handle(); }  // tests: socket options
  // Is the urgent lane's socket open? If not, why (a kernel without
  // SO_REUSEPORT's BPF steering): one line for the log.
  bool urgent_lane() const { return urgent_socket_.is_open(); }
  const std::string& urgent_lane_error() const { return urgent_lane_error_; }
  const TunnelSocketStats& stats() const { return stats_; }

 private:
  struct Peer;

  void bind_sockets(const boost::asio::ip::udp::endpoint& local);
  std::string open_urgent_lane();
  void receive();
  void on_readable();
  void receive_urgent();
  // One batch from the urgent lane's socket, opened and serviced at once;
  // the messages it held.
  int read_urgent();
  // Opens the datagrams of message i of `from`; adds the sessions they
  // concerned to `touched`; returns how many datagrams it held.
  std::size_t open_message(UdpBatch& from, int i, Instant t, std::vector<Peer*>& touched);
  void after_service(Peer& peer, Instant now);
  void queue(const tunnel::session::PeerAddress& to, const LocalAddress& from,
             std::span<const std::byte> datagram, bool urgent = false);
  void flush();
  std::span<std::byte> next_slot();  // where the next queued datagram goes (UdpBatch::next_slot)
  void wait_writable();
  void on_writable();
  void defer(Peer& peer);

  boost::asio::io_context& io_;
  boost::asio::ip::udp::socket socket_;
  boost::asio::ip::udp::socket urgent_socket_;  // closed: no urgent lane
  std::string urgent_lane_error_;
  std::chrono::steady_clock::time_point origin_;
  std::unique_ptr<tunnel::session::TimestampStore> timestamps_;  // before endpoint_: it uses it
  tunnel::session::Endpoint endpoint_;
  std::vector<std::unique_ptr<Peer>> peers_;
  std::unordered_map<const tunnel::session::Session*, Peer*> by_session_;
  std::vector<Peer*> touched_;  // sessions a receive batch concerned (few peers: a vector)
  int family_ = AF_INET;
  std::unique_ptr<UdpBatch> batch_;
  std::unique_ptr<UdpBatch> urgent_batch_;  // the urgent lane's receive slots
  std::vector<Peer*> urgent_touched_;
  bool send_blocked_ = false;   // waiting for the socket to be writable
  std::vector<Peer*> deferred_;  // services that wait with it
  TunnelSocketStats stats_;
  bool resuming_ = false;  // in a driver's resumed turn (Peer::resume_soon)
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // posted resumes check it
};

// Conversions between Asio endpoints and the core's addresses.
tunnel::session::PeerAddress to_peer_address(const boost::asio::ip::udp::endpoint& e);
boost::asio::ip::udp::endpoint to_udp_endpoint(const tunnel::session::PeerAddress& a);

}  // namespace egw::proxy
