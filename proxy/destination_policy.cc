#include "proxy/destination_policy.h"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <array>
#include <bit>
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

// Every IPv4 address an IPv6 address carries in a standard form: ways to say
// 127.0.0.1 or the hub's own address without saying it. At most 6 (Teredo
// gives 2, the local-use NAT64 prefix 4 candidate positions).
struct Embedded {
  std::array<Ip16, 6> found{};
  // A candidate position of a form that has several (or a field that may
  // be all zero): 0.0.0.0/8 there is padding, not a destination.
  std::array<bool, 6> zero_is_padding{};
  std::size_t count = 0;
  // The IPv4 address from the bytes at these four positions, each XORed with `flip`.
  void add(const Ip16& ip, std::array<int, 4> at, std::uint8_t flip = 0, bool padding = false) {
    Ip16 inner = v4_host(0, 0, 0, 0);
    for (std::size_t k = 0; k < 4; ++k) inner[12 + k] = ip[static_cast<std::size_t>(at[k])] ^ flip;
    zero_is_padding[count] = padding;
    found[count++] = inner;
  }
  static constexpr Ip16 v4_host(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
    return v4(a, b, c, d, 32).address;
  }
};

bool starts_with(const Ip16& ip, std::initializer_list<std::uint8_t> bytes) {
  return std::equal(bytes.begin(), bytes.end(), ip.begin());
}

Embedded embedded_v4(const Ip16& ip) {
  Embedded e;
  constexpr std::array<int, 4> kLast = {12, 13, 14, 15};
  if (starts_with(ip, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})) e.add(ip, kLast);  // IPv4-compatible ::/96
  if (starts_with(ip, {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0})) e.add(ip, kLast);  // SIIT ::ffff:0:0/96
  if (starts_with(ip, {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0})) e.add(ip, kLast);  // NAT64 64:ff9b::/96
  if (starts_with(ip, {0, 0x64, 0xff, 0x9b, 0, 1})) {
    // NAT64 local use, 64:ff9b:1::/48 (RFC 8215): the operator's prefix may
    // be /48, /56, /64 or /96 inside it, so every RFC 6052 position (bits
    // 64-71, byte 8, are always skipped).
    e.add(ip, {6, 7, 9, 10}, 0, true);
    e.add(ip, {7, 9, 10, 11}, 0, true);
    e.add(ip, {9, 10, 11, 12}, 0, true);
    e.add(ip, kLast, 0, true);
  }
  if (starts_with(ip, {0x20, 0x02})) e.add(ip, {2, 3, 4, 5});  // 6to4 2002:V4ADDR::/48
  if (starts_with(ip, {0x20, 0x01, 0, 0})) {                   // Teredo 2001::/32
    e.add(ip, {4, 5, 6, 7}, 0, true);                         // the server
    e.add(ip, kLast, 0xff);                                   // the client, obfuscated
  }
  // ISATAP interface ids (RFC 5214), under any prefix: ::0:5efe:V4, ::200:5efe:V4.
  if ((ip[8] == 0 || ip[8] == 2) && ip[9] == 0 && ip[10] == 0x5e && ip[11] == 0xfe) e.add(ip, kLast);
  return e;
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
    : allow_(std::move(allow)), host_(std::make_shared<HostAddresses>(HostAddresses{std::move(own_addresses), {}})) {}

DestinationPolicy::DestinationPolicy(std::vector<config::DestinationRule> allow,
                                     std::shared_ptr<const HostAddresses> host, Live)
    : allow_(std::move(allow)), host_(std::move(host)) {}

DestinationPolicy DestinationPolicy::following(std::vector<config::DestinationRule> allow,
                                               std::shared_ptr<const HostAddresses> host) {
  return DestinationPolicy(std::move(allow), std::move(host), Live{});
}

Refusal DestinationPolicy::category(const Ip16& ip) const {
  for (const auto& s : kSpecial) {
    if (s.prefix.contains(ip)) return s.category;
  }
  const auto& own = host_->addresses;
  if (std::find(own.begin(), own.end(), ip) != own.end()) return Refusal::own_address;
  // Subnet-router anycast: the prefix's own address, which every router on
  // the link (the hub forwards) answers. A /127 or /128 has none (RFC 6164).
  for (const IpPrefix& p : host_->on_link) {
    if (p.bits < 127 && p.address == ip) return Refusal::own_address;
  }
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
    const Embedded inner = embedded_v4(ip);
    for (std::size_t k = 0; k < inner.count && special == Refusal::none; ++k) {
      special = category(inner.found[k]);
      if (special == Refusal::unspecified && inner.zero_is_padding[k]) special = Refusal::none;
      nameable = false;  // no rule can name an IPv4 special address by its IPv6 disguise
    }
  }
  for (const auto& rule : allow_) {
    if (!rule.matches(destination)) continue;
    if (special == Refusal::none || (nameable && names(rule, special, ip))) return Refusal::none;
  }
  return special == Refusal::none ? Refusal::not_allowed : special;
}

namespace {

// Leading one bits of a netmask of `bytes` bytes.
std::uint8_t mask_bits(const std::uint8_t* mask, std::size_t bytes) {
  std::uint8_t bits = 0;
  for (std::size_t i = 0; i < bytes && mask[i] != 0; ++i) bits += static_cast<std::uint8_t>(std::popcount(mask[i]));
  return bits;
}

}  // namespace

HostAddresses read_host_addresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) throw std::system_error(errno, std::generic_category(), "getifaddrs");
  const std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> owner(list, &::freeifaddrs);
  HostAddresses out;
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
      if (i->ifa_netmask) {
        sockaddr_in6 mask;
        std::memcpy(&mask, i->ifa_netmask, sizeof mask);
        IpPrefix p;
        p.bits = mask_bits(reinterpret_cast<const std::uint8_t*>(&mask.sin6_addr), 16);
        for (std::size_t b = 0; b < 16; ++b) {
          const int keep = std::clamp(p.bits - static_cast<int>(8 * b), 0, 8);
          p.address[b] = static_cast<std::uint8_t>(ip[b] & (0xff00 >> keep));
        }
        if (std::find(out.on_link.begin(), out.on_link.end(), p) == out.on_link.end()) out.on_link.push_back(p);
      }
    } else {
      continue;  // AF_PACKET and friends
    }
    if (std::find(out.addresses.begin(), out.addresses.end(), ip) == out.addresses.end()) out.addresses.push_back(ip);
  }
  return out;
}

std::vector<Ip16> local_interface_addresses() { return read_host_addresses().addresses; }

}  // namespace egw::proxy
