// What a running gateway reports about itself: a plain copy of its state,
// taken on the I/O thread (Gateway::snapshot()) and handed to the metrics
// exporter (Prometheus text) and the status socket (`ensemble-gw status`).
// Nothing here points into the live gateway, so it may cross threads.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/content_class.h"

namespace egw::proxy {

// Per content class, indexed by ContentClass.
template <class T>
using PerClass = std::array<T, kContentClassCount>;

// An ssthresh this large means none was set yet (the first slow start).
inline constexpr std::uint64_t kNoSsthresh = std::uint64_t{1} << 62;

struct StreamSnapshot {
  std::uint64_t stream_id = 0;
  std::string client;       // "10.1.0.5:51234" (branch) or the peer's name (hub)
  std::string destination;  // "93.184.216.34:443"
  ContentClass content_class = ContentClass::bulk;
  std::string state;        // "connecting", "open", "half-closed", "closing"
  std::uint64_t bytes_to_server = 0;
  std::uint64_t bytes_to_client = 0;
  double age_seconds = 0;
};

// A UDP flow carried as datagrams (the `udp` section), as `status` lists it.
struct UdpFlowSnapshot {
  std::string peer;         // the peer's configured name
  std::uint64_t flow_id = 0;
  std::string source;       // branch: the LAN client; hub: its socket toward the server
  std::string destination;  // the server
  ContentClass content_class = ContentClass::bulk;
  // Into the tunnel (sent to the peer) and out of it (received), datagrams
  // and payload bytes; datagrams dropped before sending, past the class's
  // deadline or the oldest of a full queue.
  std::uint64_t datagrams_sent = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t datagrams_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t dropped_deadline = 0;
  std::uint64_t dropped_queue = 0;
  double idle_seconds = 0;  // since the last datagram either way
};

struct EnsembleSnapshot {
  std::string peer;          // the peer's configured name
  std::string key;           // the ensemble (cache) key
  bool up = false;           // a keyed connection is live
  std::string peer_address;  // "203.0.113.7:51900"
  // The data AEAD of the keys in use ("aes-256-gcm", "chacha20-poly1305";
  // empty before the first handshake), and what this side offers.
  std::string cipher;
  std::string ciphers_offered;  // "aes-256-gcm,chacha20-poly1305"
  // Congestion state (the live ensemble's, or the last one's).
  std::uint64_t cwnd_bytes = 0;
  std::uint64_t ssthresh_bytes = 0;  // kNoSsthresh: still in the first slow start
  std::uint64_t bytes_in_flight = 0;
  double srtt_seconds = 0;
  double min_rtt_seconds = 0;
  std::string law_state;                 // e.g. "avoidance", "probe_bw/cruise" (window_law.h)
  double pacing_rate_bytes_per_s = 0;    // 0: unpaced
  double bottleneck_bytes_per_s = 0;     // the model law's bw; 0 for loss-based laws
  double ack_path_delay_seconds = 0;     // the model law's: the wait of our ACKs' replies on the way back
  std::uint64_t probe_extensions = 0;    // the model law's UP probes that found room and went on
  bool ack_decimating = false;           // this side's ACKs decimated now (ensemble.ack_decimation)
  // Counters since the gateway started (monotonic).
  std::uint64_t packets_sent = 0;
  std::uint64_t packets_lost = 0;
  std::uint64_t loss_rounds = 0;
  std::uint64_t random_loss_rounds = 0;  // of loss_rounds: the lighter cut (`random_loss: veno`)
  std::uint64_t tail_probes = 0;         // silent tails probed (no window change)
  std::uint64_t small_packets_sent = 0;  // stream packets built small while a call ran on a slow path
  std::uint64_t urgent_packets_sent = 0;  // on the tunnel's urgent lane
  std::uint64_t rtos = 0;                // retransmission timeouts (window to one packet)
  std::uint64_t stream_bytes_retransmitted = 0;
  std::uint64_t thin_stream_copies = 0;  // a thin stream's tail sent twice on a lossy path
  std::uint64_t handshakes = 0;
  std::uint64_t ensembles_started = 0;
  std::uint64_t ensembles_resumed = 0;  // started from the temporal cache
  // Streams open now, and stream bytes carried (both directions), by class.
  PerClass<std::uint64_t> streams_by_class{};
  PerClass<std::uint64_t> bytes_by_class{};
  std::uint64_t streams_total = 0;  // streams ever opened
  // bytes_by_class's rate over GatewaySnapshot::rate_window_seconds (filled
  // by the status server from its own samples; zero when there are none).
  PerClass<double> bytes_per_second_by_class{};
};

struct GatewaySnapshot {
  std::string role;  // "branch" or "hub"
  double uptime_seconds = 0;
  std::vector<EnsembleSnapshot> ensembles;
  // The open streams (capped: the status socket lists at most this many).
  std::vector<StreamSnapshot> streams;
  std::uint64_t streams_omitted = 0;  // open streams not listed above

  // Connections: accepted from clients (branch) or connected to servers (hub).
  std::uint64_t connections_open = 0;
  std::uint64_t connections_accepted = 0;
  // Refused before any byte moved, by reason ("destination_not_allowed",
  // "connect_failed", "connect_timeout", "limit_connections", "limit_memory",
  // "tunnel_down", ...): a reset reached the client.
  std::map<std::string, std::uint64_t> connections_refused;
  // Open connections the gateway closed itself, by reason: idle_timeout,
  // half_closed_timeout, reclaimed (reset for a lighter client).
  std::map<std::string, std::uint64_t> connections_closed;
  // Branch: streams by the classifier stage that decided them, and by the
  // application detected (bounded: the first 32 names, then "other").
  std::map<std::string, std::uint64_t> streams_classified;
  std::map<std::string, std::uint64_t> streams_by_application;
  std::uint64_t streams_decayed_to_bulk = 0;  // past classify.bulk_after_bytes
  // Branch: LAN client addresses with a connection open, and the most
  // connections one of them has.
  std::uint64_t clients = 0;
  std::uint64_t client_connections_max = 0;
  // Destinations the hub refused, by reason ("not_allowed", "loopback",
  // "link_local", "own_address").
  std::map<std::string, std::uint64_t> destinations_refused;
  // Datagrams dropped by reason (the endpoint's and the connections' counters:
  // "malformed", "bad_mac1", "unknown_index", "unknown_peer", "handshake",
  // "rate_limited", "forged", "duplicate", "oversized", "truncated",
  // "send_buffer_full": past the driver's queue while the socket was full).
  std::map<std::string, std::uint64_t> datagrams_dropped;
  // Times the tunnel socket's buffer was full and the driver waited for room.
  std::uint64_t tunnel_send_blocked = 0;
  // Handshake initiations that cost Diffie-Hellman, and those answered with a
  // cookie instead (the hub under a flood: more than
  // under_load_initiations_per_second passed mac1).
  std::uint64_t initiations_processed = 0;
  std::uint64_t cookie_replies_sent = 0;
  // Handshakes dropped for want of a common AEAD (`cipher` on both sides).
  std::uint64_t handshake_aead_mismatches = 0;
  std::uint64_t cache_hits = 0;    // ensembles resumed from the temporal cache
  std::uint64_t cache_misses = 0;  // ensembles that started from slow start
  std::uint64_t cache_entries = 0;
  // Memory the gateway accounts for: relay buffers plus the tunnel's stream
  // buffers (send and reassembly), against limits.memory_bytes.
  std::uint64_t memory_in_use_bytes = 0;
  std::uint64_t memory_limit_bytes = 0;
  // UDP flows carried as datagrams (the `udp` section): open now, opened,
  // datagrams into the tunnel (sent) and out of it (received), dropped by
  // reason (the gateway's: refused, flow_limit, client_limit, tunnel_down,
  // send_error, too_large; the tunnel's: deadline, queue, unknown_flow,
  // too_large, lost), and flows closed by reason (idle, peer_closed, refused).
  std::uint64_t udp_flows_open = 0;
  std::uint64_t udp_flows_opened = 0;
  std::uint64_t udp_datagrams_sent = 0;
  std::uint64_t udp_datagrams_received = 0;
  std::map<std::string, std::uint64_t> udp_datagrams_dropped;
  std::map<std::string, std::uint64_t> udp_flows_closed;
  // The open UDP flows (capped like the streams), and those left out.
  std::vector<UdpFlowSnapshot> udp_flows;
  std::uint64_t udp_flows_omitted = 0;
  std::uint64_t config_reloads = 0;
  std::uint64_t config_reload_failures = 0;
  // The span the ensembles' bytes_per_second_by_class were measured over
  // (proxy/status_rates.h); 0 when no earlier sample was at hand.
  double rate_window_seconds = 0;
};

}  // namespace egw::proxy
