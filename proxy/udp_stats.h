// Counts of the gateway's UDP flows (proxy/udp_hub.h, proxy/udp_branch.h);
// the tunnel's own datagram counts are tunnel::FlowStats.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace egw::proxy {

struct UdpStats {
  std::uint64_t flows_open = 0;
  std::uint64_t flows_opened = 0;
  // Flows closed by the gateway or its peer, by reason (idle, refused, ...).
  std::map<std::string, std::uint64_t> flows_closed;
  std::uint64_t datagrams_to_tunnel = 0;    // read from a UDP socket, queued in the tunnel
  std::uint64_t datagrams_from_tunnel = 0;  // sent on a UDP socket
  // Dropped by the gateway, by reason: refused (allow list), flow_limit,
  // client_limit, tunnel_down, send_error, too_large.
  std::map<std::string, std::uint64_t> dropped;
};

}  // namespace egw::proxy
