// The hub connects wherever a branch's STREAM_OPEN points: unchecked, it
// would be an open proxy into its own host and networks. So a destination
// must match one of the peer's allow rules (config: peers[i].allow), and a
// special destination needs a rule that names it, because a broad rule
// ("*", "0.0.0.0/0", "10.0.0.0/8" around the hub's own address) is not meant
// to reach it:
//
//   unspecified  0.0.0.0/8, ::, and port 0     a rule inside that range
//   loopback     127.0.0.0/8, ::1              e.g. "127.0.0.1/32:8080"
//   link_local   169.254.0.0/16, fe80::/10     e.g. "169.254.0.0/16"
//   multicast    224.0.0.0/4, 255.255.255.255, ff00::/8
//   own_address  the hub's interface addresses a host rule: "192.0.2.7/32:8080"
//
// The rule that names the destination must also match it (port included).
// An address is in the first category of the list that holds it, so the
// hub's 127.0.0.1 is loopback. IPv4-mapped IPv6 (::ffff:127.0.0.1) is IPv4
// throughout; the IPv4 inside NAT64 (64:ff9b::/96) and IPv4-compatible (::/96)
// addresses is checked too, and refused without exception if special.
#pragma once

#include <string_view>
#include <vector>

#include "config/net_prefix.h"
#include "tunnel/frames.h"

namespace egw::proxy {

enum class Refusal { none, not_allowed, unspecified, loopback, link_local, multicast, own_address };
// "none", "not_allowed", "loopback", ...: metric labels.
std::string_view to_string(Refusal r);

class DestinationPolicy {
 public:
  DestinationPolicy(std::vector<config::DestinationRule> allow, std::vector<config::Ip16> own_addresses);

  // none: connect. A special destination no rule names is refused as its
  // category even if no rule matches it at all (an attempt worth counting as
  // such); any other destination that no rule matches is not_allowed.
  Refusal check(const tunnel::Destination& destination) const;

 private:
  Refusal category(const config::Ip16& ip) const;
  bool names(const config::DestinationRule& rule, Refusal category, const config::Ip16& ip) const;

  std::vector<config::DestinationRule> allow_;
  std::vector<config::Ip16> own_;
};

// The addresses of every local interface (getifaddrs; IPv4 mapped), for
// own_address. Throws std::system_error if they cannot be listed: a hub
// must not start blind to them. They change (DHCP, new interfaces): callers
// refresh and rebuild the policy.
std::vector<config::Ip16> local_interface_addresses();

}  // namespace egw::proxy
