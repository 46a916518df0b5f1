// Gateway::snapshot(): the counters, gauges and streams that the metrics
// exporter and the status socket publish.
#include <algorithm>
#include <chrono>

#include "proxy/gateway_peer.h"

namespace egw::proxy {

namespace {
// The status lists at most this many streams (the rest are counted).
constexpr std::size_t kMaxListedStreams = 1000;
}  // namespace

GatewaySnapshot Gateway::snapshot() const {
  GatewaySnapshot s;
  s.role = config_.is_hub ? "hub" : "branch";
  s.uptime_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  s.connections_accepted = counters_.accepted;
  s.connections_refused = counters_.refused;
  s.connections_closed = counters_.closed;
  s.streams_classified = counters_.classified_by_stage;
  s.streams_by_application = counters_.by_application;
  s.streams_decayed_to_bulk = counters_.decayed_to_bulk;
  s.clients = clients_.size();
  for (const auto& [address, usage] : clients_) {
    s.client_connections_max = std::max<std::uint64_t>(s.client_connections_max, usage.connections);
  }
  s.destinations_refused = counters_.destinations_refused;
  snapshot_udp(s);
  s.config_reloads = counters_.reloads;
  s.config_reload_failures = counters_.reload_failures;
  s.memory_limit_bytes = config_.reloadable.limits.memory_bytes;
  s.memory_in_use_bytes = tunnel_ ? memory_in_use() : 0;
  s.cache_entries = cache_.size();
  if (!tunnel_) return s;
  const Instant t = now();
  const auto& es = tunnel_->endpoint().stats();
  s.datagrams_dropped = {{"malformed", es.dropped_malformed},         {"bad_mac1", es.dropped_bad_mac1},
                         {"unknown_index", es.dropped_unknown_index}, {"unknown_peer", es.dropped_unknown_peer},
                         {"handshake", es.dropped_handshake},         {"rate_limited", es.dropped_rate_limited},
                         {"handshake_budget", es.dropped_over_budget},
                         {"truncated", tunnel_->stats().dropped_truncated},
                         {"send_buffer_full", tunnel_->stats().dropped_send_buffer_full}};
  s.tunnel_send_blocked = tunnel_->stats().send_blocked;
  s.initiations_processed = es.initiations_processed;
  s.cookie_replies_sent = es.cookie_replies_sent;
  for (const auto& p : peers_) {
    tunnel::session::Session& session = tunnel_->endpoint().session(p->index);
    EnsembleSnapshot e;
    e.peer = session.peer().name;
    e.key = session.peer().name;
    e.peer_address = Peer::address_text(session);
    e.handshakes = session.stats().handshakes_completed;  // rekeys included
    if (const auto aead = session.aead()) e.cipher = std::string(tunnel::crypto::aead_name(*aead));
    e.ciphers_offered = session.aeads().to_string();
    s.handshake_aead_mismatches += session.stats().aead_mismatches;
    e.streams_total = p->streams_total;
    e.bytes_by_class = p->bytes_by_class_closed;
    // Counters: over every connection the session has had, so that they do
    // not go back when a new handshake replaces the connection.
    const tunnel::session::ConnectionTotals totals = session.connection_totals();
    e.packets_sent = totals.datagrams_sent;
    e.packets_lost = totals.packets_lost;
    e.loss_rounds = totals.loss_rounds;
    e.random_loss_rounds = totals.random_loss_rounds;
    e.tail_probes = totals.tail_probes;
    e.small_packets_sent = totals.small_packets_sent;
    e.urgent_packets_sent = totals.urgent_packets_sent;
    e.rtos = totals.rtos;
    e.stream_bytes_retransmitted = totals.stream_bytes_retransmitted;
    e.thin_stream_copies = totals.thin_stream_copies;
    e.ensembles_started = totals.ensembles_started;
    e.ensembles_resumed = totals.ensembles_resumed;
    s.cache_hits += totals.ensembles_resumed;
    s.cache_misses += totals.ensembles_started - totals.ensembles_resumed;
    s.datagrams_dropped["forged"] += totals.datagrams_forged;
    s.datagrams_dropped["duplicate"] += totals.datagrams_duplicate;
    s.datagrams_dropped["malformed"] += totals.datagrams_malformed;
    // Gauges: the live connection's (its last ensemble's when idle).
    if (const tunnel::Connection* c = session.connection()) {
      const tunnel::ConnectionStats cs = c->stats();
      e.up = !c->is_closed();
      e.cwnd_bytes = cs.ensemble.cwnd_bytes;
      e.ssthresh_bytes = cs.ensemble.ssthresh_bytes;
      e.bytes_in_flight = cs.ensemble.bytes_in_flight;
      e.srtt_seconds = std::chrono::duration<double>(cs.ensemble.srtt).count();
      e.min_rtt_seconds = std::chrono::duration<double>(cs.ensemble.min_rtt).count();
      e.law_state = cs.ensemble.law.state;
      e.pacing_rate_bytes_per_s = cs.ensemble.pacing_rate_bytes_per_s;
      e.bottleneck_bytes_per_s = cs.ensemble.law.bottleneck_bytes_per_s;
      e.ack_path_delay_seconds = std::chrono::duration<double>(cs.ensemble.law.ack_path_delay).count();
      e.probe_extensions = cs.ensemble.law.probe_extensions;
      e.ack_decimating = cs.ack_decimating;
    }
    for (const auto& [r, relay] : p->relays) {
      ContentClass cls = relay->content_class();
      if (const tunnel::Connection* c = session.connection(); c && relay->has_stream()) {
        cls = c->stream_class(relay->stream_id()).value_or(cls);
      }
      ++e.streams_by_class[static_cast<std::size_t>(cls)];
      const auto bytes = relay->bytes_by_class();  // a counter: by the class each byte had
      for (std::size_t c = 0; c < bytes.size(); ++c) e.bytes_by_class[c] += bytes[c];
      ++s.connections_open;
      if (s.streams.size() >= kMaxListedStreams) {
        ++s.streams_omitted;
        continue;
      }
      StreamSnapshot st;
      st.stream_id = relay->stream_id();
      st.client = relay->side() == Relay::Side::branch ? endpoint_text(relay->client()) : session.peer().name;
      st.destination = to_string(relay->destination());
      st.content_class = cls;
      st.state = relay->state();
      st.bytes_to_server = relay->counters().bytes_to_server;
      st.bytes_to_client = relay->counters().bytes_to_client;
      st.age_seconds = std::chrono::duration<double>(t - relay->created()).count();
      s.streams.push_back(std::move(st));
    }
    s.ensembles.push_back(std::move(e));
  }
  return s;
}

}  // namespace egw::proxy
