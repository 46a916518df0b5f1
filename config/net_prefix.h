// IP prefixes and port ranges as the config names them: LAN prefixes to
// intercept, destinations a peer may reach, destination classification rules.
//
//   parse_ip_prefix("10.1.0.0/16"), ("2001:db8::/32"), ("192.0.2.7") = /32
//   parse_ports("80,443,8000-8099"), ("*") = every port
//   parse_destination_rule("10.2.0.0/16"), ("10.2.0.0/16:80,443"),
//                         ("[2001:db8::]/32:443"), ("*:443")
//
// Addresses are kept as 16 bytes; IPv4 as IPv4-mapped IPv6 (::ffff:a.b.c.d),
// so one comparison serves both families and an IPv4-mapped destination
// can never slip past an IPv4 rule.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tunnel/frames.h"

namespace egw::config {

// 16 bytes, IPv4 mapped into ::ffff:0:0/96.
using Ip16 = std::array<std::uint8_t, 16>;

Ip16 ip16_of(const tunnel::Destination& d);
bool is_v4_mapped(const Ip16& ip);
// Text form: dotted quad for mapped IPv4, RFC 5952 for IPv6.
std::string ip16_to_string(const Ip16& ip);

struct IpPrefix {
  Ip16 address{};  // host bits zero
  std::uint8_t bits = 0;  // in the 128-bit space: an IPv4 /24 is 96 + 24 = 120
  bool v4() const { return bits >= 96 && is_v4_mapped(address); }
  bool contains(const Ip16& ip) const;
  bool contains(const tunnel::Destination& d) const { return contains(ip16_of(d)); }
  // True if every address of `other` is in this prefix.
  bool covers(const IpPrefix& other) const { return other.bits >= bits && contains(other.address); }
  std::string to_string() const;  // "10.1.0.0/16", "2001:db8::/32"
  bool operator==(const IpPrefix&) const = default;
};

// "A.B.C.D/N", "X:Y::/N" or a bare address (a host prefix). Host bits set
// ("10.1.2.3/16") are an error: the admin probably meant something else.
std::variant<IpPrefix, std::string> parse_ip_prefix(std::string_view text);

// Inclusive port ranges; empty means every port.
struct PortRanges {
  std::vector<std::pair<std::uint16_t, std::uint16_t>> ranges;
  bool all() const { return ranges.empty(); }
  bool contains(std::uint16_t port) const;
  std::string to_string() const;  // "80,443,8000-8099" or "*"
};
// "80,443,8000-8099" or "*"; port 0 is an error.
std::variant<PortRanges, std::string> parse_ports(std::string_view text);

struct DestinationRule {
  std::optional<IpPrefix> prefix;  // nullopt: any address ("*")
  PortRanges ports;
  bool matches(const tunnel::Destination& d) const {
    return (!prefix || prefix->contains(d)) && ports.contains(d.port);
  }
  std::string to_string() const;
};
// PREFIX, PREFIX:PORTS, [V6PREFIX]:PORTS, *:PORTS or *.
std::variant<DestinationRule, std::string> parse_destination_rule(std::string_view text);

}  // namespace egw::config
