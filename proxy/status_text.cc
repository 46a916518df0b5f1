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
  if (s.initiations_processed || s.cookie_replies_sent) {
    out += "  handshake initiations: " + number(s.initiations_processed) + " processed, " +
           number(s.cookie_replies_sent) + " answered with a cookie\n";
  }
  out += "  temporal cache: " + number(s.cache_entries) + " entries, " + number(s.cache_hits) + " hits, " +
         number(s.cache_misses) + " misses; config reloads: " + number(s.config_reloads) + " (" +
         number(s.config_reload_failures) + " failed)\n";
}

void ensembles(std::string& out, const GatewaySnapshot& s) {
  if (s.ensembles.empty()) {
    out += "no ensembles\n";
    return;
  }
  Table table({"PEER", "KEY", "STATE", "ADDRESS", "CWND", "SSTHRESH", "SRTT", "INFLIGHT", "LOST/SENT",
               "LOSS ROUNDS", "STREAMS html/script/image/bulk"});
  for (const auto& e : s.ensembles) {
    std::string streams;
    for (int c = 0; c < kContentClassCount; ++c) streams += (c ? "/" : "") + number(e.streams_by_class[c]);
    table.add({e.peer, e.key, e.up ? "up" : "down", e.peer_address.empty() ? "-" : e.peer_address,
               bytes(e.cwnd_bytes), e.ssthresh_bytes >= kNoSsthresh ? std::string("-") : bytes(e.ssthresh_bytes), milliseconds(e.srtt_seconds),
               bytes(e.bytes_in_flight), number(e.packets_lost) + "/" + number(e.packets_sent),
               number(e.loss_rounds), streams});
  }
  table.render(out);
}

std::string rate(double bytes_per_second) {
  return bytes(static_cast<std::uint64_t>(bytes_per_second + 0.5)) + "/s";
}

// Bytes per second per class (both directions), over the last seconds.
void rates(std::string& out, const GatewaySnapshot& s) {
  if (s.ensembles.empty() || s.rate_window_seconds <= 0) return;
  out += "\nrates over the last " + format("%.1f", s.rate_window_seconds) + " s:\n";
  Table table({"PEER", "KEY", "HTML", "SCRIPT", "IMAGE", "BULK", "TOTAL"});
  for (const auto& e : s.ensembles) {
    std::vector<std::string> row{e.peer, e.key};
    double total = 0;
    for (const double r : e.bytes_per_second_by_class) {
      row.push_back(rate(r));
      total += r;
    }
    row.push_back(rate(total));
    table.add(std::move(row));
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

}  // namespace

std::string render_status(const GatewaySnapshot& snapshot) {
  std::string out;
  header(out, snapshot);
  out += '\n';
  ensembles(out, snapshot);
  rates(out, snapshot);
  out += '\n';
  streams(out, snapshot);
  return out;
}

}  // namespace egw::proxy
