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
//   own_address  also the subnet-router anycast (the all-zero interface id)
//                of each of the hub's on-link IPv6 prefixes: a router answers it
//
// The rule that names the destination must also match it (port included).
// An address is in the first category of the list that holds it, so the
// hub's 127.0.0.1 is loopback. IPv4-mapped IPv6 (::ffff:127.0.0.1) is IPv4
// throughout; the IPv4 inside every standard IPv6 form is checked too, and
// refused without exception if special: IPv4-compatible (::/96), SIIT
// (::ffff:0:0/96), NAT64 (64:ff9b::/96 and every RFC 6052 position in the
// local-use 64:ff9b:1::/48), 6to4 (2002::/16), Teredo (2001::/32: server and
// obfuscated client) and ISATAP interface ids (::[02]00:5efe:a.b.c.d).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "config/net_prefix.h"
#include "tunnel/frames.h"

namespace egw::proxy {

enum class Refusal { none, not_allowed, unspecified, loopback, link_local, multicast, own_address };
// "none", "not_allowed", "loopback", ...: metric labels.
std::string_view to_string(Refusal r);

// What the hub is: its interface addresses (IPv4 mapped) and the on-link
// prefixes they sit in (address/netmask).
struct HostAddresses {
  std::vector<config::Ip16> addresses;
  std::vector<config::IpPrefix> on_link;
  bool operator==(const HostAddresses&) const = default;
};

class DestinationPolicy {
 public:
  // A fixed set of own addresses (tests, fuzzing).
  DestinationPolicy(std::vector<config::DestinationRule> allow, std::vector<config::Ip16> own_addresses);
  // A live view: the owner refreshes `host` in place (LocalAddresses).
  static DestinationPolicy following(std::vector<config::DestinationRule> allow,
                                     std::shared_ptr<const HostAddresses> host);

  // none: connect. A special destination no rule names is refused as its
  // category even if no rule matches it at all (an attempt worth counting as
  // such); any other destination that no rule matches is not_allowed.
  Refusal check(const tunnel::Destination& destination) const;

 private:
  struct Live {};  // keeps `DestinationPolicy(allow, {})` unambiguous
  DestinationPolicy(std::vector<config::DestinationRule> allow, std::shared_ptr<const HostAddresses> host, Live);
  Refusal category(const config::Ip16& ip) const;
  bool names(const config::DestinationRule& rule, Refusal category, const config::Ip16& ip) const;

  std::vector<config::DestinationRule> allow_;
  std::shared_ptr<const HostAddresses> host_;
};

// The addresses of every local interface and their on-link prefixes
// (getifaddrs). Throws std::system_error if they cannot be listed: a hub
// must not start blind to them. They change (DHCP, `ip addr add`): see
// proxy/local_addresses.h for the view that follows them.
HostAddresses read_host_addresses();
// Its addresses alone.
std::vector<config::Ip16> local_interface_addresses();

}  // namespace egw::proxy
