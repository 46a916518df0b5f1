// What wanem reads from an IP packet: its DSCP (for LE priority drop) and,
// for the trace, its protocol and TCP/UDP ports. IPv6 extension headers are
// not followed: such a packet shows the first next-header value, no ports.
#pragma once

#include <cstdint>
#include <span>

namespace egw::wanem {

inline constexpr std::uint8_t kDscpLe = 1;  // Lower Effort, RFC 8622

struct IpInfo {
  std::uint8_t version = 0;  // 4, 6, or 0 if not an IP packet
  std::uint8_t dscp = 0;     // IPv4 TOS >> 2, IPv6 traffic class >> 2
  std::uint8_t protocol = 0;
  bool has_ports = false;    // TCP (6) or UDP (17) with its ports in the packet
  std::uint16_t src_port = 0, dst_port = 0;
};

IpInfo parse_ip(std::span<const std::uint8_t> packet);

inline bool is_le(const IpInfo& info) { return info.version != 0 && info.dscp == kDscpLe; }

}  // namespace egw::wanem
