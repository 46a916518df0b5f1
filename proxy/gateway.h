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
// carry on. The branch also bounds each LAN client address
// (connections_per_client, memory_per_client_bytes), and when it is full,
// a lighter client takes the place of the heaviest client's longest-idle
// connections (reset: "reclaimed") before it is refused, as Envoy's
// overload manager and HAProxy's per-source limits do. Relays idle past
// idle_timeout_ms (half-closed: half_closed_timeout_ms) with nothing in
// flight are closed, on both gateways; both legs use TCP keepalive. Log
// lines about refusals are rate-limited: a flood is one event.
// Reload (SIGHUP) swaps priorities, classes, allow lists (peers matched by
// public key) and limits, and names what needs a restart; drain (SIGTERM)
// stops accepting and lets streams finish. The hub's own addresses are
// followed as they change (LocalAddresses).
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
#include "proxy/local_addresses.h"
#include "proxy/relay.h"
#include "proxy/tunnel_socket.h"
#include "proxy/udp_branch.h"
#include "proxy/udp_hub.h"

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
  // SIGHUP: applies plan.applied (what may change at run time) and warns
  // about plan.restart_needed. The nftables table is the caller's.
  void reload(const config::ReloadPlan& plan);
  void reload(const config::GatewayConfig& next) { reload(config::plan_reload(config_, next)); }
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
  void service_now(std::size_t session) override;
  std::span<std::byte> scratch() override { return scratch_; }
  Instant now() const override;
  void relay_finished(Relay& relay) override;
  // Hub: the server's response head; branch: a client's first bytes that
  // came after its stream opened (a late ClientHello).
  void on_response_bytes(Relay& relay, std::span<const std::byte> bytes) override;

 private:
  std::unique_ptr<TimestampFile> timestamp_file() const;
  struct Peer;
  struct Counters {
    std::uint64_t accepted = 0;
    std::map<std::string, std::uint64_t> refused;
    std::map<std::string, std::uint64_t> closed;  // by the gateway: idle, half-closed, reclaimed
    std::map<std::string, std::uint64_t> destinations_refused;
    std::uint64_t reloads = 0;
    std::uint64_t reload_failures = 0;
    // Classification (branch): streams by the stage that decided, by
    // application (the first kMaxApplicationLabels names seen, "other"
    // beyond: a bounded label set), and decays to bulk.
    std::map<std::string, std::uint64_t> classified_by_stage;
    std::map<std::string, std::uint64_t> by_application;
    std::uint64_t decayed_to_bulk = 0;
  };
  static constexpr std::size_t kMaxApplicationLabels = 32;
  void count_classification(const Classifier::Decision& d);
  bool on_response_head(Relay& relay, const std::vector<std::byte>& head);
  bool on_late_client_bytes(Relay& relay, const std::vector<std::byte>& head);

  // Branch
  void accept_next();
  void on_accepted(boost::asio::ip::tcp::socket socket);
  void await_first_bytes(const std::shared_ptr<Relay>& relay);
  void open_stream(const std::shared_ptr<Relay>& relay);
  // Hub
  void on_peer_stream(Peer& peer, const tunnel::StreamOpened& opened);
  // UDP flows, both roles (gateway_udp.cc)
  void start_udp();
  void on_peer_flow_opened(Peer& peer, const tunnel::FlowOpened& opened);
  void on_peer_flow_closed(Peer& peer, const tunnel::FlowClosed& closed);
  void on_peer_datagram(Peer& peer, const tunnel::DatagramReceived& datagram);
  void on_peer_connection_closed(Peer& peer);
  void sweep_udp(Instant now);
  void snapshot_udp(GatewaySnapshot& s) const;
  void snapshot_udp_flows(GatewaySnapshot& s) const;  // the open flows, with the tunnel's counts
  void connect_to_server(Peer& peer, StreamId id, const tunnel::StreamOpened& opened);

  // Peer `peer`'s allow list with the hub's live addresses.
  DestinationPolicy policy_of(std::size_t peer) const;
  // Admission: the reason to refuse a new connection, or empty.
  std::string admission_refusal(const Peer& peer) const;
  // Branch: the same for a client at `client`, which may reclaim slots.
  std::string admit_client(Peer& peer, const config::Ip16& client);
  // gateway_limits.cc
  using RelayTable = std::unordered_map<Relay*, std::shared_ptr<Relay>>;
  std::size_t reclaim_for(RelayTable& relays, const config::Ip16& client);
  // Once a second: idle and half-closed timeouts, each client's memory.
  void sweep_relays(RelayTable& relays, const tunnel::Connection* connection);
  // E-TCP's decay by behaviour: streams past classify.bulk_after_bytes fall to bulk.
  void decay_to_bulk(Peer& peer);
  void set_keepalive(boost::asio::ip::tcp::socket& socket) const;
  // At most kLogLinesPerSecond lines of one kind a second; the rest summed
  // up by log_held_back() once a second.
  bool log_allowed(const std::string& kind);
  void log_held_back();
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
  std::unique_ptr<LocalAddresses> local_;  // hub: its own addresses, kept current
  std::unique_ptr<UdpHub> udp_hub_;        // with a `udp` section
  std::unique_ptr<UdpBranch> udp_branch_;  // with udp.ports
  std::vector<std::byte> scratch_;
  boost::asio::steady_timer tick_;
  std::function<void()> drained_;
  std::function<void()> on_tick_;
  DestinationResolver resolve_destination_;
  std::optional<Instant> drain_deadline_;
  bool draining_ = false;
  std::uint64_t ticks_ = 0;  // every_second() calls: the cache is saved every kCacheSaveEverySeconds
  Counters counters_;
  struct ClientUsage {
    std::uint32_t connections = 0;
    std::uint64_t memory_bytes = 0;  // as of the last sweep_relays()
  };
  std::map<config::Ip16, ClientUsage> clients_;  // branch: by LAN client address
  Instant reclaim_barren_until_{};               // reclaim_for(): no rescan before
  struct LogLimit {
    std::uint32_t lines = 0;      // this second
    std::uint64_t held_back = 0;  // this second
  };
  std::map<std::string, LogLimit> log_limits_;
  // memory_in_use()'s part that lives in the relays, kept as a running total
  // (admission asks for every new connection: visiting every relay made
  // opening N connections O(N^2)).
  std::uint64_t sniff_bytes_ = 0;         // hub: capacity of the response heads kept

};

}  // namespace egw::proxy
