#include "config/net_prefix.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace egw::config {

Ip16 ip16_of(const tunnel::Destination& d) {
  Ip16 ip{};
  if (d.family == tunnel::Destination::Family::ipv4) {
    ip[10] = ip[11] = 0xff;
    std::memcpy(ip.data() + 12, d.address.data(), 4);
  } else {
    std::memcpy(ip.data(), d.address.data(), 16);
  }
  return ip;
}

bool is_v4_mapped(const Ip16& ip) {
  static constexpr std::uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(ip.data(), kPrefix, 12) == 0;
}

std::string ip16_to_string(const Ip16& ip) {
  char text[INET6_ADDRSTRLEN] = {};
  if (is_v4_mapped(ip)) inet_ntop(AF_INET, ip.data() + 12, text, sizeof text);
  else inet_ntop(AF_INET6, ip.data(), text, sizeof text);
  return text;
}

bool IpPrefix::contains(const Ip16& ip) const {
  const int full = bits / 8;
  if (std::memcmp(ip.data(), address.data(), static_cast<std::size_t>(full)) != 0) return false;
  const int rest = bits % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
  return (ip[static_cast<std::size_t>(full)] & mask) == (address[static_cast<std::size_t>(full)] & mask);
}

std::string IpPrefix::to_string() const {
  const int shown = v4() ? bits - 96 : bits;
  return ip16_to_string(address) + "/" + std::to_string(shown);
}

namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::variant<IpPrefix, std::string> parse_ip_prefix(std::string_view text) {
  const std::string original(text);
  std::string_view address = text;
  std::optional<int> length;
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    address = text.substr(0, slash);
    length = parse_int(text.substr(slash + 1));
    if (!length) return "bad prefix length in '" + original + "'";
  }
  if (address.size() >= 2 && address.front() == '[' && address.back() == ']') {
    address = address.substr(1, address.size() - 2);
  }
  const std::string a(address);
  IpPrefix p;
  int max_bits = 128;
  if (inet_pton(AF_INET, a.c_str(), p.address.data() + 12) == 1) {
    p.address[10] = p.address[11] = 0xff;
    max_bits = 32;
  } else if (inet_pton(AF_INET6, a.c_str(), p.address.data()) != 1) {
    return "bad IP address in '" + original + "' (names are not resolved)";
  }
  const int n = length.value_or(max_bits);
  if (n < 0 || n > max_bits) return "prefix length out of range in '" + original + "'";
  p.bits = static_cast<std::uint8_t>(max_bits == 32 ? 96 + n : n);
  IpPrefix masked = p;
  for (int bit = p.bits; bit < 128; ++bit) {
    masked.address[static_cast<std::size_t>(bit / 8)] &= static_cast<std::uint8_t>(~(0x80 >> (bit % 8)));
  }
  if (masked.address != p.address) {
    return "host bits set in '" + original + "' (did you mean " + masked.to_string() + "?)";
  }
  return p;
}

bool PortRanges::contains(std::uint16_t port) const {
  if (ranges.empty()) return true;
  return std::any_of(ranges.begin(), ranges.end(),
                     [&](const auto& r) { return port >= r.first && port <= r.second; });
}

std::string PortRanges::to_string() const {
  if (ranges.empty()) return "*";
  std::string out;
  for (const auto& [lo, hi] : ranges) {
    if (!out.empty()) out += ',';
    out += std::to_string(lo);
    if (hi != lo) out += "-" + std::to_string(hi);
  }
  return out;
}

std::variant<PortRanges, std::string> parse_ports(std::string_view text) {
  PortRanges out;
  if (text == "*") return out;
  const std::string original(text);
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const auto dash = item.find('-');
    const auto lo = parse_int(item.substr(0, dash));
    const auto hi = dash == std::string_view::npos ? lo : parse_int(item.substr(dash + 1));
    if (!lo || !hi || *lo < 1 || *hi > 65535 || *lo > *hi) return "bad port or range in '" + original + "'";
    out.ranges.emplace_back(static_cast<std::uint16_t>(*lo), static_cast<std::uint16_t>(*hi));
  }
  if (out.ranges.empty()) return "no ports in '" + original + "'";
  return out;
}

std::string DestinationRule::to_string() const {
  std::string where = prefix ? prefix->to_string() : "*";
  if (prefix && !prefix->v4()) where = "[" + ip16_to_string(prefix->address) + "]/" + std::to_string(prefix->bits);
  return ports.all() ? where : where + ":" + ports.to_string();
}

std::variant<DestinationRule, std::string> parse_destination_rule(std::string_view text) {
  DestinationRule rule;
  std::string_view where = text;
  std::string_view ports;
  if (!text.empty() && text.front() == '[') {  // [v6]/N:ports or [v6]:ports
    const auto close = text.find(']');
    if (close == std::string_view::npos) return "missing ']' in '" + std::string(text) + "'";
    const auto colon = text.find(':', close);
    where = text.substr(0, colon);
    if (colon != std::string_view::npos) ports = text.substr(colon + 1);
  } else if (std::count(text.begin(), text.end(), ':') == 1) {  // v4 or * with ports
    const auto colon = text.find(':');
    where = text.substr(0, colon);
    ports = text.substr(colon + 1);
  }
  if (where != "*") {
    auto p = parse_ip_prefix(where);
    if (auto* err = std::get_if<std::string>(&p)) return *err;
    rule.prefix = std::get<IpPrefix>(p);
  }
  if (!ports.empty()) {
    auto r = parse_ports(ports);
    if (auto* err = std::get_if<std::string>(&r)) return *err;
    rule.ports = std::get<PortRanges>(r);
  }
  return rule;
}

}  // namespace egw::config
