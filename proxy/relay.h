// Relay: one proxied TCP connection joined to one tunnel stream, both ways,
// on the gateway's single I/O thread. The branch's relay holds the client's
// socket, the hub's the server's; the code is the same.
//
// No buffer of its own, and no copy of its own: the kernel copies between
// the socket and the stream's buffers. TCP -> stream reads from the socket
// only as much as the stream takes now (Connection::stream_write_room),
// straight into the stream's send buffer: a full stream stops reading the
// socket, so the kernel's receive window pushes back on the sender. Stream
// -> TCP sends straight from the stream's receive buffer
// (Connection::stream_peek) and consumes what the socket took; the rest
// stays in the stream until the socket is writable, so the stream's receive
// window pushes back on the far side through the tunnel. (Before, each read
// went through the gateway's scratch buffer, and each stream read was copied
// again into a vector allocated for it: two copies and a malloc per read.)
// An idle relay holds a socket, a few flags and one pending readiness wait.
//
// Endings. EOF from the socket finishes the stream (FIN); the stream's FIN
// shuts the socket's write side once everything before it was sent: half-close
// works both ways. A socket error or RST resets the stream; a stream reset
// (or the tunnel connection ending) resets the socket (SO_LINGER 0), so a
// client never mistakes a truncated transfer for a complete one. The relay is
// done when the stream closed and both directions finished, or after a reset.
//
// Timeouts. The relay remembers when a byte last moved either way; the
// gateway closes one idle for too long (close_quietly), but only when
// nothing_in_flight(): no byte in the stream's buffers or the socket's
// queues, so a timeout never drops a byte unseen.
//
// Lifetime: owned by the gateway's table (shared_ptr); every pending Asio
// operation holds a shared_ptr too, so a finished relay is freed when its
// last wait completes (with operation_aborted after close()).
#pragma once

#include <utility>  // before Boost 1.74 asio (see tunnel_socket.h)
#include <boost/asio.hpp>

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/content_class.h"
#include "common/units.h"
#include "config/net_prefix.h"
#include "tunnel/connection.h"

namespace egw::proxy {

class Relay;

// An address as the per-client key: IPv4 as ::ffff:a.b.c.d, so a dual-stack
// listener's IPv4 clients and a v4 listener's are the same client.
config::Ip16 ip16_of(const boost::asio::ip::address& address);

// The first max_bytes of a stream's two pieces: one write turn's share.
std::array<std::span<const std::byte>, 2> first_bytes(const std::array<std::span<const std::byte>, 2>& pieces,
                                                      std::size_t max_bytes);

// What a relay needs from the gateway that owns it.
class RelayOwner {
 public:
  virtual ~RelayOwner() = default;
  // The session's live connection, or null (it went down).
  virtual tunnel::Connection* connection(std::size_t session) = 0;
  // The connection has something to send: drive it soon (coalesced).
  virtual void service_soon(std::size_t session) = 0;
  // A new burst on a stream that held nothing (a request, an answer): drive
  // it now, not behind the handlers that are ready (a bulk sender's turns
  // held a request ~20 us; docs/architecture.md, "A new burst is sealed at once").
  virtual void service_now(std::size_t session) = 0;
  // The shared scratch buffer (one I/O thread, so one buffer).
  virtual std::span<std::byte> scratch() = 0;
  virtual Instant now() const = 0;
  // The relay ended (normally or by a reset): take it out of the tables.
  virtual void relay_finished(Relay& relay) = 0;
  // Hub: the server's first bytes, for classification by Content-Type.
  virtual void on_response_bytes(Relay& relay, std::span<const std::byte> bytes) = 0;
};

struct RelayCounters {
  std::uint64_t bytes_to_server = 0;  // client -> server, whichever side we are
  std::uint64_t bytes_to_client = 0;
};

class Relay : public std::enable_shared_from_this<Relay> {
 public:
  enum class Side { branch, hub };
  Relay(RelayOwner& owner, boost::asio::ip::tcp::socket socket, std::size_t session, Side side,
        tunnel::Destination destination, Instant created);
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // Hub: the stream exists while the socket still connects (abort resets it).
  void assign_stream(StreamId id) {
    id_ = id;
    stream_assigned_ = true;
  }
  // The stream exists and the socket is connected: start both directions.
  void start(StreamId id, ContentClass cls);

  // Stream events from the tunnel (by the gateway's dispatch).
  void on_stream_readable();
  void on_stream_writable();
  void on_stream_reset(std::uint64_t error_code);
  void on_stream_closed();
  // The tunnel connection ended: every stream is gone.
  void on_connection_closed();
  // Ends the relay at once: resets the stream (if any) with `error_code` and
  // the socket with an RST.
  void abort(std::uint64_t error_code);
  // Ends an idle relay (nothing_in_flight()): the socket gets a FIN as after
  // a normal end (an RST if its side had finished and it waits for the far
  // side's rest), the stream a reset with `error_code`.
  void close_quietly(std::uint64_t error_code);
  // Started, and no byte held anywhere on the way: the stream's buffers,
  // the socket's send and receive queues.
  bool nothing_in_flight();
  // Started and a direction finished (a FIN seen one way, or both ways and
  // the stream not yet closed).
  bool half_closed() const { return stream_started_ && (!socket_read_open_ || stream_fin_read_); }
  // When a byte (or a FIN) last moved either way; creation before any.
  Instant last_activity() const { return last_activity_; }

  boost::asio::ip::tcp::socket& socket() { return socket_; }
  std::size_t session() const { return session_; }
  Side side() const { return side_; }
  bool has_stream() const { return stream_started_; }
  StreamId stream_id() const { return id_; }
  const tunnel::Destination& destination() const { return destination_; }
  // The client's address (branch; kept: the socket forgets it once closed).
  const boost::asio::ip::tcp::endpoint& client() const { return client_; }
  // Branch: the client's address (IPv4 as ::ffff:a.b.c.d), its per-client key.
  const config::Ip16& client_address() const { return client_address_; }
  ContentClass content_class() const { return class_; }
  // Bytes carried from now on count under `cls`; those before stay with the
  // class they were counted under (bytes_by_class()).
  void set_content_class(ContentClass cls);
  const RelayCounters& counters() const { return counters_; }
  // Stream bytes carried (both directions) by the class the relay had while
  // they passed: a reclassification moves no bytes, so per-class byte
  // counters summed over relays never go back.
  std::array<std::uint64_t, kContentClassCount> bytes_by_class() const;
  Instant created() const { return created_; }
  bool finished() const { return finished_; }
  // For status: "open", "half-closed", "closing".
  const char* state() const;
  // Hub: keep passing the server's first bytes to the owner for
  // classification until this is cleared.
  bool sniffing_response = false;
  // A destination rule named the class: neither a Content-Type nor the
  // decay to bulk (classify.bulk_after_bytes) changes it.
  bool class_final = false;

 private:
  void pump_socket_to_stream();
  void pump_stream_to_socket();
  ssize_t read_socket_into_stream(tunnel::Connection& c);
  ssize_t read_socket_via_scratch(tunnel::Connection& c);  // while sniffing_response
  ssize_t send_pieces(const std::array<std::span<const std::byte>, 2>& pieces);
  void wait_readable();
  void wait_writable();
  void write_soon();  // the write turn's budget ran out: the rest in a posted turn
  void maybe_finish();
  void reset_socket();
  void finish();
  void touch() { last_activity_ = owner_.now(); }

  RelayOwner& owner_;
  boost::asio::ip::tcp::socket socket_;
  std::size_t session_;
  Side side_;
  tunnel::Destination destination_;
  boost::asio::ip::tcp::endpoint client_;
  config::Ip16 client_address_{};
  Instant created_;
  Instant last_activity_;
  StreamId id_ = 0;
  ContentClass class_ = ContentClass::bulk;
  RelayCounters counters_;
  std::array<std::uint64_t, kContentClassCount> bytes_by_earlier_class_{};
  std::uint64_t bytes_before_class_ = 0;  // carried before class_ was set

  bool stream_assigned_ = false;  // the stream exists (it may not be started yet)
  bool stream_started_ = false;
  bool socket_read_open_ = true;    // no EOF or error from the socket yet
  bool waiting_readable_ = false;
  bool waiting_writable_ = false;
  bool write_posted_ = false;       // write_soon's turn is queued
  bool blocked_on_stream_ = false;  // the stream had no room: StreamWritable resumes
  bool stream_fin_read_ = false;    // the peer's FIN came out of the stream
  bool socket_write_shut_ = false;
  bool stream_done_ = false;        // closed or reset: the stream is gone
  bool finished_ = false;
};

}  // namespace egw::proxy
