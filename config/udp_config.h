// The `udp:` section: UDP flows carried as datagrams in the tunnel (issue
// 21 item 3; proxy/udp_branch.h, proxy/udp_hub.h).
//
//   udp:
//     ports: [3478-3481, 5060, 8801-8810]  # branch: destination ports to intercept
//     class: realtime                      # branch: the class of flows nothing else names
//     listen: "0.0.0.0:15002"              # branch: the TPROXY socket
//     carry_quic: false                    # branch: also carry UDP 443 (else rejected if reject_quic)
//     deadline_ms: 50                      # a datagram queued longer is dropped
//     queue_datagrams: 64                  # per flow, oldest dropped beyond
//     idle_timeout_s: 60                   # a flow with no datagram either way is closed
//     dns_idle_timeout_s: 30               # the same for destination port 53
//     flows_per_peer: 4096                 # flows open at once per tunnel peer
//     flows_per_client: 256                # branch: per LAN client address
//
// Without the section (or without `ports` on a branch) the gateway carries
// no UDP. Both gateways need it: the hub's flows_per_peer and timeouts.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

#include "common/content_class.h"
#include "config/net_prefix.h"
#include "config/yaml_reader.h"
#include "tunnel/connection.h"

namespace egw::config {

struct UdpConfig {
  bool enabled = false;  // the section is present
  PortRanges ports;      // branch: empty = intercept nothing
  ContentClass content_class = ContentClass::realtime;
  std::string listen = "0.0.0.0:15002";
  bool carry_quic = false;
  std::uint32_t deadline_ms = 50;
  std::uint32_t queue_datagrams = 64;
  std::uint32_t idle_timeout_s = 60;
  std::uint32_t dns_idle_timeout_s = 30;
  std::uint32_t flows_per_peer = 4096;
  std::uint32_t flows_per_client = 256;
  // The branch intercepts something.
  bool intercepts() const { return enabled && !ports.all(); }
};

bool same_udp(const UdpConfig& a, const UdpConfig& b);
// The tunnel's side of it: the datagram deadline and queue, the peer flow limit.
void apply_udp(const UdpConfig& udp, tunnel::ConnectionConfig& connection);

// `section` may be absent: disabled. `is_hub` refuses the branch-only keys.
UdpConfig parse_udp(const Reader& r, const YAML::Node& section, bool is_hub);

}  // namespace egw::config
