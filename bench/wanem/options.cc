#include "bench/wanem/options.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace egw::wanem {
namespace {

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    char c = s[s.size() - suffix.size() + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

// A finite, non-negative decimal that takes the whole of `s`.
bool parse_number(std::string_view s, double& out) {
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && std::isfinite(out) && out >= 0;
}

bool parse_rate(std::string_view s, std::uint64_t& bps) {
  double scale = 1;
  if (ends_with_ci(s, "bps")) s.remove_suffix(3);
  if (!s.empty()) {
    switch (s.back()) {
      case 'k': case 'K': scale = 1e3; break;
      case 'm': case 'M': scale = 1e6; break;
      case 'g': case 'G': scale = 1e9; break;
      default: break;
    }
    if (scale != 1) s.remove_suffix(1);
  }
  double v = 0;
  if (!parse_number(s, v) || v * scale > 1e13) return false;
  bps = static_cast<std::uint64_t>(std::llround(v * scale));
  return true;
}

bool parse_ms(std::string_view s, Nanos& out) {
  if (ends_with_ci(s, "ms")) s.remove_suffix(2);
  double ms = 0;
  if (!parse_number(s, ms) || ms > 1e7) return false;
  out = Nanos(std::llround(ms * 1e6));
  return true;
}

bool parse_probability(std::string_view s, double& p) {
  double scale = 1;
  if (!s.empty() && s.back() == '%') {
    s.remove_suffix(1);
    scale = 0.01;
  }
  if (!parse_number(s, p)) return false;
  p *= scale;
  return p <= 1;
}

bool parse_bool_or_probability(std::string_view s, double& p) {
  if (s == "true" || s == "on" || s == "yes") return p = 1, true;
  if (s == "false" || s == "off" || s == "no") return p = 0, true;
  return parse_probability(s, p);
}

bool parse_queue(std::string_view s, LinkConfig& c) {
  if (s == "0" || s == "unlimited" || s == "none") {
    c.queue_packets = 0;
    c.queue_bytes = 0;
    return true;
  }
  if (s.size() < 2) return false;
  const char unit = s.back();
  s.remove_suffix(1);
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  if (unit == 'p' && n <= 0xffffffffu) {
    c.queue_packets = static_cast<std::uint32_t>(n);
    c.queue_bytes = 0;
    return true;
  }
  if (unit == 'b') {
    c.queue_bytes = n;
    c.queue_packets = 0;
    return true;
  }
  return false;
}

std::string apply_one(std::string_view key, std::string_view value, LinkConfig& c) {
  bool ok = false;
  if (key == "rate") {
    ok = parse_rate(value, c.rate_bps);
  } else if (key == "delay") {
    ok = parse_ms(value, c.delay);
  } else if (key == "jitter") {
    ok = parse_ms(value, c.jitter);
  } else if (key == "reorder") {
    ok = parse_bool_or_probability(value, c.reorder);
  } else if (key == "queue") {
    ok = parse_queue(value, c);
  } else if (key == "loss") {
    ok = parse_probability(value, c.loss);
  } else if (key == "le_drop") {
    double p = 0;
    ok = parse_bool_or_probability(value, p) && (p == 0 || p == 1);
    c.le_drop = p == 1;
  } else if (key == "seed") {
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), c.seed);
    ok = ec == std::errc() && end == value.data() + value.size();
  } else {
    return "unknown option '" + std::string(key) + "' (rate, delay, jitter, reorder, queue, loss, le_drop, seed)";
  }
  return ok ? "" : "bad value for " + std::string(key) + ": '" + std::string(value) + "'";
}

}  // namespace

std::string apply_options(std::string_view spec, LinkConfig& config) {
  while (!spec.empty()) {
    const std::size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return "expected key=value, got '" + std::string(item) + "'";
    if (auto err = apply_one(item.substr(0, eq), item.substr(eq + 1), config); !err.empty()) return err;
  }
  return "";
}

std::string describe(const LinkConfig& c) {
  char queue[32] = "0";
  if (c.queue_packets) std::snprintf(queue, sizeof queue, "%up", c.queue_packets);
  if (c.queue_bytes) std::snprintf(queue, sizeof queue, "%llub", static_cast<unsigned long long>(c.queue_bytes));
  char out[256];
  std::snprintf(out, sizeof out, "rate=%llu,delay=%gms,jitter=%gms,reorder=%g,queue=%s,loss=%g,le_drop=%d,seed=%llu",
                static_cast<unsigned long long>(c.rate_bps), static_cast<double>(c.delay.count()) / 1e6,
                static_cast<double>(c.jitter.count()) / 1e6, c.reorder, queue, c.loss, c.le_drop ? 1 : 0,
                static_cast<unsigned long long>(c.seed));
  return out;
}

}  // namespace egw::wanem
