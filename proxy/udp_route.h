// The policy route TPROXY for UDP needs (proxy/udp_branch.h): packets the
// nftables table marked (kUdpFwmark) are routed to the local host, so they
// reach the transparent socket although their destination is not ours:
//   ip rule add fwmark kUdpFwmark lookup kUdpRouteTable priority kUdpRulePriority
//   ip route add local 0.0.0.0/0 dev lo table kUdpRouteTable
// Installed and removed by the gateway like its nftables table, over
// rtnetlink (it keeps CAP_NET_ADMIN, an `ip` child would not).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace egw::proxy {

inline constexpr std::uint32_t kUdpFwmark = 0x4547;        // "EG"
inline constexpr std::uint32_t kUdpRouteTable = 0x4547;    // 17735
inline constexpr std::uint32_t kUdpRulePriority = 17735;   // before main (32766)

// Each returns an error message, or nullopt. Both are idempotent.
std::optional<std::string> install_udp_route();
std::optional<std::string> remove_udp_route();

}  // namespace egw::proxy
