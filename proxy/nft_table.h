// The branch gateway's transparent interception: an nftables table of its
// own (family inet) whose nat prerouting chain REDIRECTs the LAN clients' TCP
// connections to the gateway's listener, where original_destination()
// (proxy/original_destination.h) recovers where they were going.
//
//   table inet ensemble_gw {
//     chain prerouting {   # type nat hook prerouting priority dstnat
//       fib daddr type local accept              # to us: leave alone
//       ip daddr { bypass v4 } accept
//       ip saddr { lan v4 } tcp dport { ports } redirect to :port
//       (and the same for ip6)
//     }
//     chain forward {      # reject_quic only: type filter hook forward
//       ip saddr { lan v4 } udp dport 443 reject with icmp port-unreachable
//     }
//     chain udp_tproxy {   # udp.ports only: type filter hook prerouting priority mangle
//       fib daddr type local accept
//       ip daddr { bypass v4 } accept
//       ip saddr { lan v4 } udp dport { udp ports } meta mark set 0x4547 tproxy ip to :udp_port accept
//     }
//   }
//
// TCP is redirected; the selected UDP (IPv4) goes to the UDP flows'
// transparent socket by TPROXY, with the policy route of proxy/udp_route.h.
// Only forwarded traffic: the gateway's own UDP tunnel packets are locally
// generated and never pass prerouting.
//
// The table is ours alone: we create, replace and delete it whole and never
// touch anyone else's. Replacing is one transaction (add; delete; create), so
// there is no moment without rules, and a table a crashed gateway left
// behind is simply replaced on the next start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/net_prefix.h"

namespace egw::proxy {

struct InterceptionRules {
  std::string table = "ensemble_gw";     // inet family table, ours alone
  std::vector<config::IpPrefix> lan;     // client source prefixes to intercept (v4 and/or v6)
  config::PortRanges ports;              // destination TCP ports; all() = every port
  std::uint16_t redirect_port = 0;       // the gateway's transparent TCP listener
  // UDP dport 443 forwarded from the LAN is rejected (ICMP port unreachable)
  // so browsers give up on QUIC at once and use TCP, which we intercept.
  bool reject_quic = false;
  // Destinations never intercepted (the hub's address, admin exceptions);
  // their QUIC is not rejected either.
  std::vector<config::IpPrefix> bypass;
  // UDP flows (proxy/udp_branch.h): IPv4 UDP to these ports goes to the
  // transparent socket on udp_tproxy_port (0: no UDP interception),
  // marked udp_mark for the policy route.
  config::PortRanges udp_ports;
  std::uint16_t udp_tproxy_port = 0;
  std::uint32_t udp_mark = 0;
};

// Why these rules cannot be installed (bad table name, no LAN prefix, port 0);
// nullopt if they can. The render functions expect valid rules.
std::optional<std::string> check_rules(const InterceptionRules& rules);

// `nft -f` text (print mode, logs): replaces any table of that name, atomically.
std::string render_nft_script(const InterceptionRules& rules);
// The same transaction as libnftables JSON input: what install() runs.
std::string render_nft_json(const InterceptionRules& rules);
// What stop_new() runs: `ct state new accept` first in the prerouting chain.
std::string render_nft_stop_new_json(const std::string& table);

// Needs CAP_NET_ADMIN in the gateway's network namespace. Each call returns
// an error message, or nullopt on success.
class NftTable {
 public:
  // Replaces any table of that name (a crash leftover) with ours.
  static std::optional<std::string> install(const InterceptionRules& rules);
  // Draining: new connections are no longer intercepted, while those the
  // table redirected keep their address translation. Deleting the table
  // instead (its NAT rules with it) stopped translating them: their clients
  // saw neither the rest of their data nor a reset (they hung).
  static std::optional<std::string> stop_new(const std::string& table);
  // Deletes the table if present; idempotent.
  static std::optional<std::string> remove(const std::string& table);
  static bool exists(const std::string& table);
};

}  // namespace egw::proxy
