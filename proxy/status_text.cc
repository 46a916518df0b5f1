#include "proxy/status_text.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

namespace egw::proxy {
namespace {

std::string format(const char* fmt, auto... args) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string bytes(std::uint64_t n) {
  if (n < 1024) return format("%llu B", static_cast<unsigned long long>(n));
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = double(n) / 1024;
  std::size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  return format("%.1f %s", v, kUnits[unit]);
}

std::string duration(double seconds) {
  if (seconds < 60) return format("%.1fs", seconds);
  const auto s = static_cast<unsigned long long>(seconds);
  if (s < 3600) return format("%llum%02llus", s / 60, s % 60);
  if (s < 86400) return format("%lluh%02llum", s / 3600, s / 60 % 60);
  return format("%llud%02lluh", s / 86400, s / 3600 % 24);
}

std::string milliseconds(double seconds) { return format("%.1f ms", seconds * 1000); }

std::string number(std::uint64_t n) { return std::to_string(n); }

// Names come from configs and peers; keep escape sequences off the terminal.
std::string printable(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return s;
}

// Left-aligned columns, two spaces apart.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) {
    for (auto& cell : row) cell = printable(std::move(cell));
    rows_.push_back(std::move(row));
  }
  void render(std::string& out) const {
    std::vector<std::size_t> width(rows_.front().size(), 0);
    for (const auto& row : rows_) {
      for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    for (const auto& row : rows_) {
      std::string line;
      for (std::size_t i = 0; i < row.size(); ++i) {
        line += row[i];
        if (i + 1 < row.size()) line.append(width[i] - row[i].size() + 2, ' ');
      }
      out += line;
      out += '\n';
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// "  refused: connect_timeout 3, limit_memory 1" (nothing when all are zero).
void reasons(std::string& out, const char* what, const std::map<std::string, std::uint64_t>& counts) {
  std::string line;
  for (const auto& [reason, count] : counts) {
    if (count == 0) continue;
    line += (line.empty() ? "" : ", ") + printable(reason) + " " + number(count);
  }
  if (!line.empty()) out += std::string("  ") + what + ": " + line + "\n";
}

void header(std::string& out, const GatewaySnapshot& s) {
  out += "ensemble-gw " + printable(s.role) + ": up " + duration(s.uptime_seconds) + ", " +
         number(s.connections_open) + " connections open (" + number(s.connections_accepted) +
         " accepted), memory " + bytes(s.memory_in_use_bytes) +
         (s.memory_limit_bytes ? " of " + bytes(s.memory_limit_bytes) : std::string(" (no limit)")) + "\n";
  reasons(out, "connections refused", s.connections_refused);
  reasons(out, "destinations refused", s.destinations_refused);
  reasons(out, "datagrams dropped", s.datagrams_dropped);
  reasons(out, "streams by application", s.streams_by_application);
  reasons(out, "streams classified by", s.streams_classified);
  if (s.streams_decayed_to_bulk) out += "  streams decayed to bulk: " + number(s.streams_decayed_to_bulk) + "\n";
  if (s.initiations_processed || s.cookie_replies_sent) {
    out += "  handshake initiations: " + number(s.initiations_processed) + " processed, " +
           number(s.cookie_replies_sent) + " answered with a cookie\n";
  }
  if (s.handshake_aead_mismatches) {
    out += "  handshakes without a common cipher: " + number(s.handshake_aead_mismatches) + "\n";
  }
  out += "  temporal cache: " + number(s.cache_entries) + " entries, " + number(s.cache_hits) + " hits, " +
         number(s.cache_misses) + " misses; config reloads: " + number(s.config_reloads) + " (" +
         number(s.config_reload_failures) + " failed)\n";
}

// Bytes per second, short: "0", "512", "9.5K", "120K", "1.2M" (binary units).
std::string rate(double bytes_per_second) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T"};
  double v = bytes_per_second < 0 ? 0 : bytes_per_second;
  std::size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0 || v >= 10) return format("%.0f%s", v, kUnits[unit]);
  return format("%.1f%s", v, kUnits[unit]);
}

// "1.2M/0/120K/0" per class, or "-" when the snapshot has no rates. The last
// column of the ensembles' table: scripts that read a row's first columns
// (peer, key, state, address) see the same fields as before.
std::string class_rates(const GatewaySnapshot& s, const EnsembleSnapshot& e) {
  if (s.rate_window_seconds <= 0) return "-";
  std::string out;
  for (int c = 0; c < kContentClassCount; ++c) out += (c ? "/" : "") + rate(e.bytes_per_second_by_class[c]);
  return out;
}

// "html/script/image/bulk/realtime/interactive/web/streaming": the order of
// the per-class columns.
std::string class_names() {
  std::string out;
  for (int c = 0; c < kContentClassCount; ++c) out += (c ? "/" : "") + std::string(to_string(static_cast<ContentClass>(c)));
  return out;
}

void ensembles(std::string& out, const GatewaySnapshot& s) {
  if (s.ensembles.empty()) {
    out += "no ensembles\n";
    return;
  }
  if (s.rate_window_seconds > 0) {
    out += "rates: bytes/s per class over the last " + format("%.1f", s.rate_window_seconds) + " s\n";
  }
  Table table({"PEER", "KEY", "STATE", "ADDRESS", "CIPHER", "LAW", "CWND", "SSTHRESH", "SRTT", "INFLIGHT", "LOST/SENT",
               "LOSS ROUNDS", "STREAMS " + class_names(), "RATE " + class_names()});
  for (const auto& e : s.ensembles) {
    std::string streams;
    for (int c = 0; c < kContentClassCount; ++c) streams += (c ? "/" : "") + number(e.streams_by_class[c]);
    table.add({e.peer, e.key, e.up ? "up" : "down", e.peer_address.empty() ? "-" : e.peer_address,
               e.cipher.empty() ? std::string("-") : e.cipher,
               e.law_state.empty() ? std::string("-") : e.law_state, bytes(e.cwnd_bytes), e.ssthresh_bytes >= kNoSsthresh ? std::string("-") : bytes(e.ssthresh_bytes), milliseconds(e.srtt_seconds),
               bytes(e.bytes_in_flight), number(e.packets_lost) + "/" + number(e.packets_sent),
               number(e.loss_rounds), streams, class_rates(s, e)});
  }
  table.render(out);
}

void streams(std::string& out, const GatewaySnapshot& s) {
  if (s.streams.empty() && s.streams_omitted == 0) {
    out += "no open streams\n";
    return;
  }
  Table table({"ID", "CLIENT", "DESTINATION", "CLASS", "STATE", "TO SERVER", "TO CLIENT", "AGE"});
  for (const auto& st : s.streams) {
    table.add({number(st.stream_id), st.client, st.destination, std::string(to_string(st.content_class)),
               st.state, bytes(st.bytes_to_server), bytes(st.bytes_to_client), duration(st.age_seconds)});
  }
  table.render(out);
  if (s.streams_omitted) out += "... and " + number(s.streams_omitted) + " more\n";
}

// UDP flows carried as datagrams: shown once the gateway has carried any.
// SENT is into the tunnel, RECEIVED out of it (datagrams, payload bytes);
// LATE/FULL the datagrams dropped past the class's deadline or from a full
// queue.
void udp_flows(std::string& out, const GatewaySnapshot& s) {
  if (s.udp_flows.empty() && s.udp_flows_omitted == 0) {
    if (s.udp_flows_opened) out += "\nno open UDP flows\n";
    return;
  }
  out += '\n';
  Table table({"PEER", "FLOW", "SOURCE", "DESTINATION", "CLASS", "SENT", "RECEIVED", "LATE/FULL", "IDLE"});
  for (const auto& f : s.udp_flows) {
    table.add({f.peer, number(f.flow_id), f.source, f.destination, std::string(to_string(f.content_class)),
               number(f.datagrams_sent) + " (" + bytes(f.bytes_sent) + ")",
               number(f.datagrams_received) + " (" + bytes(f.bytes_received) + ")",
               number(f.dropped_deadline) + "/" + number(f.dropped_queue), duration(f.idle_seconds)});
  }
  table.render(out);
  if (s.udp_flows_omitted) out += "... and " + number(s.udp_flows_omitted) + " more UDP flows\n";
}

}  // namespace

std::string render_status(const GatewaySnapshot& snapshot) {
  std::string out;
  header(out, snapshot);
  out += '\n';
  ensembles(out, snapshot);
  out += '\n';
  streams(out, snapshot);
  udp_flows(out, snapshot);
  return out;
}

}  // namespace egw::proxy
