// The gateway's whole configuration: one YAML file (docs/config.md documents
// every key with its unit and default; config/examples/ has a branch and a
// hub). load_gateway_config reads and checks it; errors name the file, the
// line and the key ("branch.yaml:14: interception.lan[1]: bad IP address"),
// and unknown keys are errors.
//
// What a SIGHUP may change without dropping connections is `Reloadable`
// (priorities, classification, limits, log level); the rest needs a restart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "config/classify_config.h"
#include "config/net_prefix.h"
#include "congestion/ensemble_config.h"
#include "congestion/temporal_cache.h"
#include "tunnel/session/endpoint.h"

namespace egw::config {

enum class InterceptionMode {
  nftables,  // the gateway installs (and removes) its own nftables table
  print,     // it prints the rules for the admin and installs nothing
  none,      // no rules: clients (or the admin's own rules) reach the listener
};

struct InterceptionConfig {
  InterceptionMode mode = InterceptionMode::nftables;
  // The transparent TCP listener the rules redirect to (both families when
  // the address is [::]).
  std::string listen = "[::]:15001";
  std::vector<IpPrefix> lan;     // client prefixes to intercept (required unless mode none)
  PortRanges ports;              // TCP destination ports; default every port
  std::vector<IpPrefix> bypass;  // destinations never intercepted
  bool reject_quic = false;      // UDP 443 from the LAN gets an ICMP error
  std::string table = "ensemble_gw";
  // How long the branch waits for a client's first bytes so they travel with
  // the stream open (and classify it by TLS SNI); server-first protocols
  // wait this long once per connection.
  std::uint32_t first_bytes_wait_ms = 10;
};

struct PeerPolicy {
  std::string name;
  std::vector<DestinationRule> allow;  // hub: where this peer's streams may go
};

struct Limits {
  std::uint32_t connections_per_peer = 16'384;
  // Relay buffering per direction of one connection beyond the kernel's
  // socket buffers (the tunnel stream's send buffer and receive window).
  std::uint64_t stream_buffer_bytes = 256 * 1024;
  // All stream buffers of the gateway together; new connections are refused
  // (reset) while memory in use is above it.
  std::uint64_t memory_bytes = std::uint64_t{512} << 20;
  std::uint32_t connect_timeout_ms = 5'000;    // hub: TCP connect to the server
  std::uint32_t drain_timeout_ms = 10'000;     // SIGTERM: time open streams get to finish
};

// Reloaded by SIGHUP.
struct Reloadable {
  congestion::SchedulerConfig scheduler;
  ClassifyConfig classify;
  std::vector<PeerPolicy> peers;  // allow lists, by peer index
  Limits limits;
  std::string log_level = "info";  // trace, debug, info, warn, error
};

struct GatewayConfig {
  std::string path;  // the file it came from
  bool is_hub = false;
  std::string tunnel_listen;  // "0.0.0.0:51900"; branch: may be empty (any port)
  tunnel::session::EndpointConfig endpoint;  // keys, peers, connection and ensemble settings
  InterceptionConfig interception;           // branch only
  congestion::TemporalCacheConfig cache;
  std::string cache_file;  // empty: not persisted
  // Hub: each peer's greatest accepted handshake timestamp, kept across
  // restarts so a captured initiation is never answered twice
  // (proxy/timestamp_file.h); empty: in memory only.
  std::string handshake_state_file;
  std::string metrics_listen = "127.0.0.1:9470";  // empty: no metrics
  std::string status_socket;                      // default: /run/ensemble-gw/<role>.sock
  Reloadable reloadable;
};

// Sets the tunnel's stream and connection buffers from the limits.
void apply_limits(const Limits& limits, tunnel::ConnectionConfig& connection);

// The config, or an error "FILE:LINE: KEY: what is wrong".
std::variant<GatewayConfig, std::string> load_gateway_config(const std::string& path);
// The same from the file's text (`path` names it in errors; the key files it
// names are read from disk): the config fuzz target's entry.
std::variant<GatewayConfig, std::string> parse_gateway_config(const std::string& path, const std::string& text);

// Whether `next` may replace `current` by a reload (same role, keys, peers,
// listeners); otherwise the reason it needs a restart. (Interception
// prefixes and ports, ensemble and cache settings also need a restart: a
// reload keeps them as they are.)
std::optional<std::string> reload_incompatibility(const GatewayConfig& current, const GatewayConfig& next);

}  // namespace egw::config
