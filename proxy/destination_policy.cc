#include "proxy/destination_policy.h"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <system_error>

namespace egw::proxy {
namespace {

using config::Ip16;
using config::IpPrefix;

constexpr IpPrefix v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d, int bits) {
  return {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d}, static_cast<std::uint8_t>(96 + bits)};
}
constexpr IpPrefix v6(std::uint8_t b0, std::uint8_t b1, std::uint8_t b15, int bits) {
  return {{b0, b1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b15}, static_cast<std::uint8_t>(bits)};
}

struct SpecialRange {
  IpPrefix prefix;
  Refusal category;
};
// In the order categories are assigned (first holding range wins).
constexpr std::array<SpecialRange, 9> kSpecial = {{
    {v4(0, 0, 0, 0, 8), Refusal::unspecified},
    {v6(0, 0, 0, 128), Refusal::unspecified},  // ::
    {v4(127, 0, 0, 0, 8), Refusal::loopback},
    {v6(0, 0, 1, 128), Refusal::loopback},  // ::1
    {v4(169, 254, 0, 0, 16), Refusal::link_local},
    {v6(0xfe, 0x80, 0, 10), Refusal::link_local},
    {v4(224, 0, 0, 0, 4), Refusal::multicast},
    {v4(255, 255, 255, 255, 32), Refusal::multicast},  // limited broadcast
    {v6(0xff, 0, 0, 8), Refusal::multicast},
}};

// The IPv4 address inside a NAT64 (RFC 6052 well-known prefix) or an
// IPv4-compatible address: a way to say 127.0.0.1 without saying it.
std::optional<Ip16> embedded_v4(const Ip16& ip) {
  static constexpr std::uint8_t kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  static constexpr std::uint8_t kCompatible[12] = {};
  if (std::memcmp(ip.data(), kNat64, 12) != 0 && std::memcmp(ip.data(), kCompatible, 12) != 0) return std::nullopt;
  Ip16 inner = v4(0, 0, 0, 0, 32).address;
  std::copy(ip.begin() + 12, ip.end(), inner.begin() + 12);
  return inner;
}

}  // namespace

std::string_view to_string(Refusal r) {
  switch (r) {
    case Refusal::none: return "none";
    case Refusal::not_allowed: return "not_allowed";
    case Refusal::unspecified: return "unspecified";
    case Refusal::loopback: return "loopback";
    case Refusal::link_local: return "link_local";
    case Refusal::multicast: return "multicast";
    case Refusal::own_address: return "own_address";
  }
  return "not_allowed";
}

DestinationPolicy::DestinationPolicy(std::vector<config::DestinationRule> allow, std::vector<Ip16> own_addresses)
    : allow_(std::move(allow)), own_(std::move(own_addresses)) {}

Refusal DestinationPolicy::category(const Ip16& ip) const {
  for (const auto& s : kSpecial) {
    if (s.prefix.contains(ip)) return s.category;
  }
  if (std::find(own_.begin(), own_.end(), ip) != own_.end()) return Refusal::own_address;
  return Refusal::none;
}

bool DestinationPolicy::names(const config::DestinationRule& rule, Refusal category, const Ip16& ip) const {
  if (!rule.prefix) return false;  // "*" names nothing
  if (category == Refusal::own_address) return rule.prefix->bits == 128 && rule.prefix->address == ip;
  return std::any_of(kSpecial.begin(), kSpecial.end(),
                     [&](const SpecialRange& s) { return s.category == category && s.prefix.covers(*rule.prefix); });
}

Refusal DestinationPolicy::check(const tunnel::Destination& destination) const {
  if (destination.port == 0) return Refusal::unspecified;
  const Ip16 ip = config::ip16_of(destination);
  Refusal special = category(ip);
  bool nameable = true;
  if (special == Refusal::none) {
    if (const auto inner = embedded_v4(ip)) {
      special = category(*inner);
      nameable = false;  // no rule can name an IPv4 special address by its IPv6 disguise
    }
  }
  for (const auto& rule : allow_) {
    if (!rule.matches(destination)) continue;
    if (special == Refusal::none || (nameable && names(rule, special, ip))) return Refusal::none;
  }
  return special == Refusal::none ? Refusal::not_allowed : special;
}

std::vector<Ip16> local_interface_addresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) throw std::system_error(errno, std::generic_category(), "getifaddrs");
  const std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> owner(list, &::freeifaddrs);
  std::vector<Ip16> out;
  for (const ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    Ip16 ip{};
    if (i->ifa_addr->sa_family == AF_INET) {
      ip = v4(0, 0, 0, 0, 32).address;
      sockaddr_in sin;
      std::memcpy(&sin, i->ifa_addr, sizeof sin);
      std::memcpy(ip.data() + 12, &sin.sin_addr, 4);
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      sockaddr_in6 sin6;
      std::memcpy(&sin6, i->ifa_addr, sizeof sin6);
      std::memcpy(ip.data(), &sin6.sin6_addr, 16);
    } else {
      continue;  // AF_PACKET and friends
    }
    if (std::find(out.begin(), out.end(), ip) == out.end()) out.push_back(ip);
  }
  return out;
}

}  // namespace egw::proxy
