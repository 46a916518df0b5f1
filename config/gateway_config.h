// The gateway's whole configuration: one YAML file (docs/config.md documents
// every key with its unit and default; config/examples/ has a branch and a
// hub). load_gateway_config reads and checks it; errors name the file, the
// line and the key ("branch.yaml:14: interception.lan[1]: bad IP address"),
// and unknown keys are errors.
//
// What a SIGHUP may change without dropping connections is `Reloadable`
// (priorities, classification, limits, log level, allow lists) and the
// interception rules; the rest needs a restart (plan_reload says which).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "config/classify_config.h"
#include "config/net_prefix.h"
#include "config/udp_config.h"
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
  // What that buffering may auto-tune up to on a long fat path (receive
  // window grown while the reader keeps up within two RTTs, send buffer
  // following the peer's credit): 256 KiB per RTT is 21 Mbit/s at 100 ms.
  // Also at most memory_per_client_bytes / 4 (apply_limits).
  std::uint64_t stream_buffer_max_bytes = std::uint64_t{16} << 20;
  // All stream buffers of the gateway together; new connections are refused
  // (reset) while memory in use is above it.
  std::uint64_t memory_bytes = std::uint64_t{512} << 20;
  std::uint32_t connect_timeout_ms = 5'000;    // hub: TCP connect to the server
  std::uint32_t drain_timeout_ms = 10'000;     // SIGTERM: time open streams get to finish
  // Branch: per LAN client address (one client must not take every slot of
  // connections_per_peer or of memory_bytes). A hub's clients are its peers.
  std::uint32_t connections_per_client = 4'096;
  std::uint64_t memory_per_client_bytes = std::uint64_t{128} << 20;
  // A relay with nothing in flight closed after this long without a byte
  // either way (0: never); half-closed (one direction finished) sooner.
  std::uint32_t idle_timeout_ms = 600'000;
  std::uint32_t half_closed_timeout_ms = 15'000;
  // TCP keepalive on both legs (client and server sockets): a peer that
  // vanished without a FIN is found; 0 idle: off. The kernel counts seconds.
  std::uint32_t keepalive_idle_ms = 60'000;
  std::uint32_t keepalive_interval_ms = 10'000;
  std::uint32_t keepalive_probes = 6;
};

// Reloaded by SIGHUP.
struct Reloadable {
  congestion::SchedulerConfig scheduler;
  ClassifyConfig classify;
  std::vector<PeerPolicy> peers;  // allow lists, by peer index (endpoint.peers' order)
  Limits limits;
  std::string log_level = "info";  // trace, debug, info, warn, error
};

struct GatewayConfig {
  std::string path;  // the file it came from
  bool is_hub = false;
  std::string tunnel_listen;  // "0.0.0.0:51900"; branch: may be empty (any port)
  // `cipher`; endpoint.aeads is what it means on this CPU.
  tunnel::crypto::CipherSetting cipher = tunnel::crypto::CipherSetting::automatic;
  tunnel::session::EndpointConfig endpoint;  // keys, peers, connection and ensemble settings
  InterceptionConfig interception;           // branch only
  UdpConfig udp;                             // UDP flows as datagrams (restart to change)
  congestion::TemporalCacheConfig cache;
  std::string cache_file;  // empty: not persisted
  // Hub: each peer's greatest accepted handshake timestamp, kept across
  // restarts so a captured initiation is never answered twice
  // (proxy/timestamp_file.h); empty: in memory only.
  std::string handshake_state_file;
  std::string metrics_listen = "127.0.0.1:9470";  // empty: no metrics
  std::string status_socket;                      // default: /run/ensemble-gw/<role>.sock
  // The user to run as after start (only CAP_NET_ADMIN kept); empty: the
  // user it was started as (proxy/privileges.h).
  std::string user;
  Reloadable reloadable;
  // What loaded but deserves a word ("FILE:LINE: private_key_file: ...
  // mode 0644 ..."): `check` prints them, `run` logs them at start and reload.
  std::vector<std::string> warnings;
};

// The longest path a Unix socket address holds (sun_path is 108 bytes with
// its terminating NUL).
inline constexpr std::size_t kMaxUnixSocketPathBytes = 107;

// Sets the tunnel's stream and connection buffers from the limits.
void apply_limits(const Limits& limits, tunnel::ConnectionConfig& connection);

// The config, or an error "FILE:LINE: KEY: what is wrong".
std::variant<GatewayConfig, std::string> load_gateway_config(const std::string& path);
// The same from the file's text (`path` names it in errors; the key files it
// names are read from disk): the config fuzz target's entry.
std::variant<GatewayConfig, std::string> parse_gateway_config(const std::string& path, const std::string& text);

// What a SIGHUP does with `next` (the file as it is now) while `current` runs.
struct ReloadPlan {
  // `current` with what a reload can change taken from `next`: scheduler,
  // classes, limits, log level; each peer's allow list, peers matched by
  // public key (never by position), a peer gone from the file allowing
  // nothing from now on; the interception rules (lan, ports, bypass,
  // reject_quic, first_bytes_wait_ms). Everything else stays as it runs.
  GatewayConfig applied;
  // What differs but needs a restart, by key: "ensemble.window_law",
  // "peers: 'b3' added", "peers['hub'].endpoint". Empty: all applied.
  std::vector<std::string> restart_needed;
  // The branch's nftables table must be replaced for `applied`.
  bool interception_changed = false;
};
ReloadPlan plan_reload(const GatewayConfig& current, const GatewayConfig& next);

// plan_reload's restart_needed, joined ("listen, ensemble.window_law"), or
// nullopt if a reload applies all of `next`.
std::optional<std::string> reload_incompatibility(const GatewayConfig& current, const GatewayConfig& next);

}  // namespace egw::config
