#include "proxy/status_json.h"

#include <cmath>
#include <cstdio>
#include <string_view>

#include "common/build_info.h"

namespace egw::proxy {
namespace {

// Length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlongs, no
// surrogates, at most U+10FFFF), or 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F)) return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F)) return 0;
    return 4;
  }
  return 0;
}

std::string str(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_length(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out + "\"";
}

std::string num(std::uint64_t n) { return std::to_string(n); }

std::string num(double v) {
  if (!std::isfinite(v)) return "null";  // JSON has no NaN or Infinity
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string boolean(bool b) { return b ? "true" : "false"; }

// {"k":v,...} built member by member; values are already JSON text.
class Object {
 public:
  Object& add(std::string_view key, const std::string& value) {
    text_ += text_.size() > 1 ? "," : "";
    text_ += str(key) + ":" + value;
    return *this;
  }
  std::string done() const { return text_ + "}"; }

 private:
  std::string text_ = "{";
};

template <class T>
std::string per_class(const PerClass<T>& values) {
  Object o;
  for (int c = 0; c < kContentClassCount; ++c) o.add(to_string(static_cast<ContentClass>(c)), num(values[c]));
  return o.done();
}

std::string by_reason(const std::map<std::string, std::uint64_t>& counts) {
  Object o;
  for (const auto& [reason, count] : counts) o.add(reason, num(count));
  return o.done();
}

std::string ensemble(const EnsembleSnapshot& e) {
  return Object()
      .add("peer", str(e.peer))
      .add("key", str(e.key))
      .add("up", boolean(e.up))
      .add("peer_address", str(e.peer_address))
      .add("cipher", e.cipher.empty() ? "null" : str(e.cipher))
      .add("ciphers_offered", str(e.ciphers_offered))
      .add("cwnd_bytes", num(e.cwnd_bytes))
      .add("ssthresh_bytes", e.ssthresh_bytes >= kNoSsthresh ? "null" : num(e.ssthresh_bytes))
      .add("bytes_in_flight", num(e.bytes_in_flight))
      .add("srtt_seconds", num(e.srtt_seconds))
      .add("min_rtt_seconds", num(e.min_rtt_seconds))
      .add("law_state", str(e.law_state))
      .add("pacing_rate_bytes_per_second", num(e.pacing_rate_bytes_per_s))
      .add("bottleneck_bytes_per_second", num(e.bottleneck_bytes_per_s))
      .add("ack_path_delay_seconds", num(e.ack_path_delay_seconds))
      .add("probe_extensions", num(e.probe_extensions))
      .add("ack_decimating", boolean(e.ack_decimating))
      .add("packets_sent", num(e.packets_sent))
      .add("packets_lost", num(e.packets_lost))
      .add("loss_rounds", num(e.loss_rounds))
      .add("random_loss_rounds", num(e.random_loss_rounds))
      .add("tail_probes", num(e.tail_probes))
      .add("small_packets_sent", num(e.small_packets_sent))
      .add("urgent_packets_sent", num(e.urgent_packets_sent))
      .add("timeouts", num(e.rtos))
      .add("stream_bytes_retransmitted", num(e.stream_bytes_retransmitted))
      .add("thin_stream_copies", num(e.thin_stream_copies))
      .add("handshakes", num(e.handshakes))
      .add("ensembles_started", num(e.ensembles_started))
      .add("ensembles_resumed", num(e.ensembles_resumed))
      .add("streams_total", num(e.streams_total))
      .add("streams_by_class", per_class(e.streams_by_class))
      .add("bytes_by_class", per_class(e.bytes_by_class))
      .add("bytes_per_second_by_class", per_class(e.bytes_per_second_by_class))
      .done();
}

std::string stream(const StreamSnapshot& st) {
  return Object()
      .add("stream_id", num(st.stream_id))
      .add("client", str(st.client))
      .add("destination", str(st.destination))
      .add("class", str(to_string(st.content_class)))
      .add("state", str(st.state))
      .add("bytes_to_server", num(st.bytes_to_server))
      .add("bytes_to_client", num(st.bytes_to_client))
      .add("age_seconds", num(st.age_seconds))
      .done();
}

// bytes_sent / datagrams_sent: into the tunnel; received: out of it.
std::string udp_flow(const UdpFlowSnapshot& f) {
  return Object()
      .add("peer", str(f.peer))
      .add("flow_id", num(f.flow_id))
      .add("source", str(f.source))
      .add("destination", str(f.destination))
      .add("class", str(to_string(f.content_class)))
      .add("datagrams_sent", num(f.datagrams_sent))
      .add("bytes_sent", num(f.bytes_sent))
      .add("datagrams_received", num(f.datagrams_received))
      .add("bytes_received", num(f.bytes_received))
      .add("dropped_deadline", num(f.dropped_deadline))
      .add("dropped_queue", num(f.dropped_queue))
      .add("idle_seconds", num(f.idle_seconds))
      .done();
}

template <class T, class Render>
std::string list(const std::vector<T>& items, Render render) {
  std::string out = "[";
  for (const auto& item : items) out += (out.size() > 1 ? "," : "") + render(item);
  return out + "]";
}

std::string render(const GatewaySnapshot& s) {
  return Object()
             .add("version", str(build_version()))
             .add("commit", str(build_commit()))
             .add("role", str(s.role))
             .add("uptime_seconds", num(s.uptime_seconds))
             .add("connections_open", num(s.connections_open))
             .add("connections_accepted", num(s.connections_accepted))
             .add("connections_refused", by_reason(s.connections_refused))
             .add("destinations_refused", by_reason(s.destinations_refused))
             .add("streams_classified", by_reason(s.streams_classified))
             .add("streams_by_application", by_reason(s.streams_by_application))
             .add("streams_decayed_to_bulk", num(s.streams_decayed_to_bulk))
             .add("datagrams_dropped", by_reason(s.datagrams_dropped))
             .add("initiations_processed", num(s.initiations_processed))
             .add("cookie_replies_sent", num(s.cookie_replies_sent))
             .add("handshake_aead_mismatches", num(s.handshake_aead_mismatches))
             .add("cache_hits", num(s.cache_hits))
             .add("cache_misses", num(s.cache_misses))
             .add("cache_entries", num(s.cache_entries))
             .add("memory_in_use_bytes", num(s.memory_in_use_bytes))
             .add("memory_limit_bytes", num(s.memory_limit_bytes))
             .add("config_reloads", num(s.config_reloads))
             .add("config_reload_failures", num(s.config_reload_failures))
             .add("rate_window_seconds", num(s.rate_window_seconds))
             .add("ensembles", list(s.ensembles, ensemble))
             .add("streams", list(s.streams, stream))
             .add("streams_omitted", num(s.streams_omitted))
             .add("udp_flows_open", num(s.udp_flows_open))
             .add("udp_flows_opened", num(s.udp_flows_opened))
             .add("udp_datagrams_sent", num(s.udp_datagrams_sent))
             .add("udp_datagrams_received", num(s.udp_datagrams_received))
             .add("udp_datagrams_dropped", by_reason(s.udp_datagrams_dropped))
             .add("udp_flows_closed", by_reason(s.udp_flows_closed))
             .add("udp_flows", list(s.udp_flows, udp_flow))
             .add("udp_flows_omitted", num(s.udp_flows_omitted))
             .done() +
         "\n";
}

}  // namespace

std::string render_status_json(GatewaySnapshot snapshot, std::size_t max_bytes) {
  std::string text = render(snapshot);
  // Halving the longer list (streams or UDP flows): a handful of renders
  // even for thousands.
  const auto halve = [](auto& items, std::uint64_t& omitted) {
    const std::size_t keep = items.size() / 2;
    omitted += items.size() - keep;
    items.resize(keep);
  };
  while (text.size() > max_bytes && !(snapshot.streams.empty() && snapshot.udp_flows.empty())) {
    if (snapshot.streams.size() >= snapshot.udp_flows.size()) {
      halve(snapshot.streams, snapshot.streams_omitted);
    } else {
      halve(snapshot.udp_flows, snapshot.udp_flows_omitted);
    }
    text = render(snapshot);
  }
  return text;
}

}  // namespace egw::proxy
