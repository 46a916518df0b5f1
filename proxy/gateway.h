// Gateway: the running product, branch or hub, on one Boost.Asio I/O thread.
//
//   branch: clients --TCP--> intercepted listener --Relay--> stream --+
//                                                                     | TunnelSocket (UDP, Noise)
//   hub:                 servers <--TCP-- connect <--Relay-- stream <-+
//
// Branch. Every accepted connection's original destination comes from the
// NAT entry (SO_ORIGINAL_DST). The gateway waits up to first_bytes_wait_ms
// for the client's first bytes so they classify the stream (TLS SNI) and go
// out in the same packet as STREAM_OPEN: the hub learns destination, class
// and request together, and connecting adds no WAN round trip. While the
// tunnel is down (start-up, a hub restart) new clients wait for it up to
// connect_timeout, then get a reset.
//
// Hub. STREAM_OPEN names the destination; the peer's allow list decides
// (DestinationPolicy: never loopback, link-local or the hub itself unless
// listed); the hub connects with a deadline and resets the stream on
// failure, so the branch resets its client. The stream's data waits in the
// tunnel's receive window meanwhile. The server's first bytes are sniffed
// for an HTTP Content-Type, which reclassifies the stream (STREAM_CLASS).
//
// Admission: beyond limits.connections_per_peer or limits.memory_bytes new
// connections are refused with a reset, counted and logged; running ones
// carry on. Reload (SIGHUP) swaps priorities, classes, allow lists and
// limits; drain (SIGTERM) stops accepting and lets streams finish.
#pragma once

#include <utility>  // before Boost 1.74 asio (see tunnel_socket.h)
#include <boost/asio.hpp>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/gateway_config.h"
#include "congestion/temporal_cache.h"
#include "proxy/classifier.h"
#include "proxy/destination_policy.h"
#include "proxy/gateway_snapshot.h"
#include "proxy/relay.h"
#include "proxy/tunnel_socket.h"

namespace egw::proxy {

class TimestampFile;

class Gateway final : public RelayOwner {
 public:
  // Loads the temporal cache; binds nothing yet.
  Gateway(boost::asio::io_context& io, config::GatewayConfig config);
  ~Gateway() override;
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Binds the tunnel socket (and the branch's listener), starts the
  // handshakes. Throws std::runtime_error with a one-line reason.
  void start();
  // SIGHUP: applies what may change at run time; the rest is reported.
  void reload(const config::GatewayConfig& next);
  // SIGTERM: stop accepting; `done` runs when every relay ended or after
  // drain_timeout (the rest are reset).
  void drain(std::function<void()> done);
  // SIGHUP with a file that did not load: counted (the old config stays).
  void count_reload_failure();
  // Called every second on the I/O thread (the metrics exporter publishes).
  void set_on_tick(std::function<void()> f) { on_tick_ = std::move(f); }
  // Where an accepted client meant to go: by default the NAT entry
  // (SO_ORIGINAL_DST); tests on loopback, which have no NAT, set their own.
  using DestinationResolver = std::function<std::optional<tunnel::Destination>(int fd)>;
  void set_destination_resolver(DestinationResolver resolve) { resolve_destination_ = std::move(resolve); }
  // Saves the temporal cache (if a file is configured); returns an error.
  std::optional<std::string> save_cache();

  GatewaySnapshot snapshot() const;
  const config::GatewayConfig& config() const { return config_; }
  // The TCP listener's and the tunnel's bound addresses (tests bind port 0).
  boost::asio::ip::tcp::endpoint listener_endpoint() const;
  boost::asio::ip::udp::endpoint tunnel_endpoint() const;

  // RelayOwner
  tunnel::Connection* connection(std::size_t session) override;
  void service_soon(std::size_t session) override;
  std::span<std::byte> scratch() override { return scratch_; }
  Instant now() const override;
  void relay_finished(Relay& relay) override;
  void on_response_bytes(Relay& relay, std::span<const std::byte> bytes) override;
  void relay_pending_changed(std::int64_t delta) override {
    relay_pending_bytes_ += static_cast<std::uint64_t>(delta);  // modulo 2^64: exact as long as the sum is
  }

 private:
  std::unique_ptr<TimestampFile> timestamp_file() const;
  struct Peer;
  struct Counters {
    std::uint64_t accepted = 0;
    std::map<std::string, std::uint64_t> refused;
    std::map<std::string, std::uint64_t> destinations_refused;
    std::uint64_t reloads = 0;
    std::uint64_t reload_failures = 0;
  };

  // Branch
  void accept_next();
  void on_accepted(boost::asio::ip::tcp::socket socket);
  void await_first_bytes(const std::shared_ptr<Relay>& relay);
  void open_stream(const std::shared_ptr<Relay>& relay);
  // Hub
  void on_peer_stream(Peer& peer, const tunnel::StreamOpened& opened);
  void connect_to_server(Peer& peer, StreamId id, const tunnel::StreamOpened& opened);

  // Admission: the reason to refuse a new connection, or empty.
  std::string admission_refusal(const Peer& peer) const;
  bool windows_held(const Peer& peer) const;
  void refuse(const std::string& reason);
  std::uint64_t memory_in_use() const;
  void every_second();
  void drain_tick();

  boost::asio::io_context& io_;
  config::GatewayConfig config_;
  std::chrono::steady_clock::time_point started_;
  congestion::TemporalCache cache_;
  std::unique_ptr<TunnelSocket> tunnel_;
  std::vector<std::unique_ptr<Peer>> peers_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::unique_ptr<Classifier> classifier_;
  std::vector<config::Ip16> own_addresses_;
  std::vector<std::byte> scratch_;
  boost::asio::steady_timer tick_;
  std::function<void()> drained_;
  std::function<void()> on_tick_;
  DestinationResolver resolve_destination_;
  std::optional<Instant> drain_deadline_;
  bool draining_ = false;
  std::uint64_t ticks_ = 0;  // every_second() calls: the cache is saved every kCacheSaveEverySeconds
  Counters counters_;
  // memory_in_use()'s parts that live in the relays, kept as running totals
  // (admission asks for every new connection: visiting every relay made
  // opening N connections O(N^2)).
  std::uint64_t relay_pending_bytes_ = 0;  // sum of the relays' pending_bytes()
  std::uint64_t sniff_bytes_ = 0;         // hub: capacity of the response heads kept

};

}  // namespace egw::proxy
