// The hub is not an open proxy: what a branch may ask it to connect to.
// Each test is an attempt a hostile or misconfigured branch could make.
#include "proxy/destination_policy.h"

#include <arpa/inet.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <set>

namespace egw::proxy {
namespace {

// "10.0.0.1" or "2001:db8::1" (with a port) as a STREAM_OPEN destination;
// "::ffff:127.0.0.1" stays an IPv6 destination, as a branch could send it.
tunnel::Destination dest(const std::string& address, std::uint16_t port = 443) {
  tunnel::Destination d;
  d.port = port;
  if (inet_pton(AF_INET, address.c_str(), d.address.data()) == 1) return d;
  d.family = tunnel::Destination::Family::ipv6;
  EXPECT_EQ(inet_pton(AF_INET6, address.c_str(), d.address.data()), 1) << address;
  return d;
}

config::Ip16 ip(const std::string& address) { return config::ip16_of(dest(address)); }

DestinationPolicy policy(std::initializer_list<std::string_view> rules, std::vector<config::Ip16> own = {}) {
  std::vector<config::DestinationRule> allow;
  for (const auto r : rules) allow.push_back(std::get<config::DestinationRule>(config::parse_destination_rule(r)));
  return DestinationPolicy(std::move(allow), std::move(own));
}

const std::vector<config::Ip16> kOwn = {ip("192.0.2.7"), ip("2001:db8::7")};

TEST(DestinationPolicy, AllowListDecides) {
  const auto p = policy({"10.0.0.0/8:80,443", "[2001:db8:1::]/48"});
  EXPECT_EQ(p.check(dest("10.1.2.3", 443)), Refusal::none);
  EXPECT_EQ(p.check(dest("10.1.2.3", 22)), Refusal::not_allowed);
  EXPECT_EQ(p.check(dest("11.0.0.1", 443)), Refusal::not_allowed);
  EXPECT_EQ(p.check(dest("2001:db8:1::5", 22)), Refusal::none);
  EXPECT_EQ(p.check(dest("2001:db8:2::5", 22)), Refusal::not_allowed);
  EXPECT_EQ(p.check(dest("::ffff:10.1.2.3", 80)), Refusal::none);  // mapped is IPv4
  EXPECT_EQ(policy({}).check(dest("10.1.2.3")), Refusal::not_allowed);
}

// "*" and 0.0.0.0/0 do not reach the special destinations.
TEST(DestinationPolicy, BroadRulesDoNotReachSpecialDestinations) {
  for (const auto& p : {policy({"*"}, kOwn), policy({"0.0.0.0/0", "[::]/0"}, kOwn)}) {
    EXPECT_EQ(p.check(dest("93.184.216.34")), Refusal::none);
    EXPECT_EQ(p.check(dest("2606:2800:220:1::1")), Refusal::none);
    EXPECT_EQ(p.check(dest("127.0.0.1", 22)), Refusal::loopback);
    EXPECT_EQ(p.check(dest("127.255.1.2")), Refusal::loopback);
    EXPECT_EQ(p.check(dest("::1")), Refusal::loopback);
    EXPECT_EQ(p.check(dest("::ffff:127.0.0.1")), Refusal::loopback);
    EXPECT_EQ(p.check(dest("169.254.169.254", 80)), Refusal::link_local);  // cloud metadata
    EXPECT_EQ(p.check(dest("::ffff:169.254.169.254", 80)), Refusal::link_local);
    EXPECT_EQ(p.check(dest("fe80::1")), Refusal::link_local);
    EXPECT_EQ(p.check(dest("febf::1")), Refusal::link_local);
    EXPECT_EQ(p.check(dest("0.0.0.0")), Refusal::unspecified);
    EXPECT_EQ(p.check(dest("0.1.2.3")), Refusal::unspecified);
    EXPECT_EQ(p.check(dest("::")), Refusal::unspecified);
    EXPECT_EQ(p.check(dest("::ffff:0.0.0.0")), Refusal::unspecified);
    EXPECT_EQ(p.check(dest("93.184.216.34", 0)), Refusal::unspecified);
    EXPECT_EQ(p.check(dest("224.0.0.1")), Refusal::multicast);
    EXPECT_EQ(p.check(dest("239.255.255.250")), Refusal::multicast);
    EXPECT_EQ(p.check(dest("255.255.255.255")), Refusal::multicast);
    EXPECT_EQ(p.check(dest("ff02::1")), Refusal::multicast);
    EXPECT_EQ(p.check(dest("192.0.2.7")), Refusal::own_address);
    EXPECT_EQ(p.check(dest("::ffff:192.0.2.7")), Refusal::own_address);
    EXPECT_EQ(p.check(dest("2001:db8::7")), Refusal::own_address);
    EXPECT_EQ(p.check(dest("192.0.2.8")), Refusal::none);
  }
}

// NAT64 and IPv4-compatible spellings of special IPv4 addresses.
TEST(DestinationPolicy, EmbeddedIpv4IsCheckedToo) {
  const auto p = policy({"*", "[64:ff9b::]/96", "[::]/96"}, kOwn);
  EXPECT_EQ(p.check(dest("64:ff9b::127.0.0.1")), Refusal::loopback);
  EXPECT_EQ(p.check(dest("64:ff9b::169.254.169.254")), Refusal::link_local);
  EXPECT_EQ(p.check(dest("64:ff9b::192.0.2.7")), Refusal::own_address);
  EXPECT_EQ(p.check(dest("::127.0.0.1")), Refusal::loopback);
  EXPECT_EQ(p.check(dest("64:ff9b::93.184.216.34")), Refusal::none);
  EXPECT_EQ(p.check(dest("::93.184.216.34")), Refusal::none);
}

// Issue 19 item 10: every standard IPv6 form that carries an IPv4 address,
// each with loopback, the hub's own address and a harmless public address.
// A "*" rule passed 64:ff9b:1::/48, 6to4 and Teredo before.
TEST(DestinationPolicy, EveryEmbeddedIpv4FormIsChecked) {
  const auto p = policy({"*"}, kOwn);
  struct Form {
    const char* name;
    const char* loopback;  // 127.0.0.1 inside
    const char* own;       // 192.0.2.7 inside
    const char* outside;   // 93.184.216.34 inside
  };
  const Form forms[] = {
      {"IPv4-compatible ::/96", "::127.0.0.1", "::192.0.2.7", "::93.184.216.34"},
      {"SIIT ::ffff:0:0/96", "::ffff:0:127.0.0.1", "::ffff:0:192.0.2.7", "::ffff:0:93.184.216.34"},
      {"NAT64 64:ff9b::/96", "64:ff9b::127.0.0.1", "64:ff9b::192.0.2.7", "64:ff9b::93.184.216.34"},
      {"NAT64 local /96", "64:ff9b:1::127.0.0.1", "64:ff9b:1::192.0.2.7", "64:ff9b:1::93.184.216.34"},
      // RFC 6052 2.2: a /48 prefix puts the address in bits 48-63 and 72-87.
      {"NAT64 local /48", "64:ff9b:1:7f00:1:100::", "64:ff9b:1:c000:2:700::", "64:ff9b:1:5db8:d8:2200::"},
      {"NAT64 local /56", "64:ff9b:1:7f:0:100:0:0", "64:ff9b:1:c0:0:207::", "64:ff9b:1:5d:b8:d822::"},
      {"NAT64 local /64", "64:ff9b:1:0:7f:0:1::", "64:ff9b:1:0:c0:2:700::", "64:ff9b:1:0:5d:b8d8:2200::"},
      {"6to4 2002::/16", "2002:7f00:1::1", "2002:c000:207::1", "2002:5db8:d822::1"},
      // Teredo: server in bits 32-63, client XOR 0xff in bits 96-127.
      {"Teredo server", "2001:0:7f00:1::a247:27dd", "2001:0:c000:207::a247:27dd", "2001:0:5db8:d822::a247:27dd"},
      {"Teredo client", "2001:0:5db8:d822:0:0:80ff:fffe", "2001:0:5db8:d822:0:0:3fff:fdf8",
       "2001:0:5db8:d822:0:0:a247:27dd"},
      {"ISATAP", "2001:db8:9::5efe:127.0.0.1", "2001:db8:9::200:5efe:192.0.2.7", "2001:db8:9::5efe:93.184.216.34"},
  };
  for (const Form& f : forms) {
    EXPECT_EQ(p.check(dest(f.loopback)), Refusal::loopback) << f.name << " " << f.loopback;
    EXPECT_EQ(p.check(dest(f.own)), Refusal::own_address) << f.name << " " << f.own;
    EXPECT_EQ(p.check(dest(f.outside)), Refusal::none) << f.name << " " << f.outside;
  }
  EXPECT_EQ(p.check(dest("2002:a9fe:a9fe::1", 80)), Refusal::link_local);  // 6to4 of the metadata service
  // No rule names a special address by its IPv6 disguise.
  EXPECT_EQ(policy({"*", "127.0.0.1/32:443", "[2002::]/16"}, kOwn).check(dest("2002:7f00:1::1")), Refusal::loopback);
}

// The subnet-router anycast address (RFC 4291 2.6.1) of each of the hub's
// on-link IPv6 prefixes: the hub, a router, answers it.
TEST(DestinationPolicy, SubnetRouterAnycastOfTheHubsPrefixesIsItsOwn) {
  auto host = std::make_shared<HostAddresses>();
  host->addresses = {ip("2001:db8:5::1"), ip("2001:db8:6::1")};
  config::IpPrefix p64{ip("2001:db8:5::"), 64};
  config::IpPrefix p127{ip("2001:db8:6::"), 127};  // point-to-point: no anycast (RFC 6164)
  host->on_link = {p64, p127};
  std::vector<config::DestinationRule> allow{std::get<config::DestinationRule>(config::parse_destination_rule("*"))};
  const DestinationPolicy p = DestinationPolicy::following(allow, host);
  EXPECT_EQ(p.check(dest("2001:db8:5::")), Refusal::own_address);
  EXPECT_EQ(p.check(dest("2001:db8:5::2")), Refusal::none);
  EXPECT_EQ(p.check(dest("2001:db8:6::")), Refusal::none);
  EXPECT_EQ(p.check(dest("2001:db8:7::")), Refusal::none);
  // A live view: the owner updates it in place and the policy follows.
  host->addresses.push_back(ip("198.51.100.9"));
  EXPECT_EQ(p.check(dest("198.51.100.9")), Refusal::own_address);
  EXPECT_EQ(p.check(dest("64:ff9b::198.51.100.9")), Refusal::own_address);
}

TEST(DestinationPolicy, ExplicitRulesReachSpecialDestinations) {
  const auto p = policy({"*", "127.0.0.1/32:8080", "169.254.0.0/16", "[fe80::]/64:22", "192.0.2.7/32:8443",
                         "[2001:db8::7]:443", "239.1.0.0/16"},
                        kOwn);
  EXPECT_EQ(p.check(dest("127.0.0.1", 8080)), Refusal::none);
  EXPECT_EQ(p.check(dest("::ffff:127.0.0.1", 8080)), Refusal::none);
  EXPECT_EQ(p.check(dest("127.0.0.1", 8081)), Refusal::loopback);  // the naming rule must match the port
  EXPECT_EQ(p.check(dest("127.0.0.2", 8080)), Refusal::loopback);
  EXPECT_EQ(p.check(dest("169.254.169.254", 80)), Refusal::none);
  EXPECT_EQ(p.check(dest("fe80::1", 22)), Refusal::none);
  EXPECT_EQ(p.check(dest("fe80:0:0:1::1", 22)), Refusal::link_local);
  EXPECT_EQ(p.check(dest("192.0.2.7", 8443)), Refusal::none);
  EXPECT_EQ(p.check(dest("192.0.2.7", 22)), Refusal::own_address);
  EXPECT_EQ(p.check(dest("2001:db8::7", 443)), Refusal::none);
  EXPECT_EQ(p.check(dest("239.1.2.3")), Refusal::none);
  EXPECT_EQ(p.check(dest("239.2.2.3")), Refusal::multicast);
  EXPECT_EQ(p.check(dest("::1")), Refusal::loopback);  // 127.0.0.1 does not name ::1
}

// A rule wider than the special range does not name it, even if it names
// nothing else: 0.0.0.0/1 holds 0.0.0.0/8 and 127.0.0.0/8 but is not inside them.
TEST(DestinationPolicy, RulesAroundSpecialRangesDoNotNameThem) {
  const auto p = policy({"0.0.0.0/1", "192.0.2.0/24", "[fe00::]/7", "[::]/127"}, kOwn);
  EXPECT_EQ(p.check(dest("127.0.0.1")), Refusal::loopback);
  EXPECT_EQ(p.check(dest("0.0.0.0")), Refusal::unspecified);
  EXPECT_EQ(p.check(dest("192.0.2.7")), Refusal::own_address);
  EXPECT_EQ(p.check(dest("192.0.2.9")), Refusal::none);
  EXPECT_EQ(p.check(dest("fe80::1")), Refusal::link_local);
  EXPECT_EQ(p.check(dest("::1")), Refusal::loopback);
  EXPECT_EQ(p.check(dest("::")), Refusal::unspecified);
  // Special but outside every rule: counted as its category.
  EXPECT_EQ(policy({"10.0.0.0/8"}).check(dest("127.0.0.1")), Refusal::loopback);
}

// The hub's own 127.0.0.1 is loopback: a loopback rule names it.
TEST(DestinationPolicy, OwnLoopbackIsLoopback) {
  const auto p = policy({"127.0.0.0/8"}, {ip("127.0.0.1"), ip("192.0.2.7")});
  EXPECT_EQ(p.check(dest("127.0.0.1")), Refusal::none);
}

TEST(DestinationPolicy, RefusalNames) {
  EXPECT_EQ(to_string(Refusal::none), "none");
  EXPECT_EQ(to_string(Refusal::not_allowed), "not_allowed");
  EXPECT_EQ(to_string(Refusal::unspecified), "unspecified");
  EXPECT_EQ(to_string(Refusal::loopback), "loopback");
  EXPECT_EQ(to_string(Refusal::link_local), "link_local");
  EXPECT_EQ(to_string(Refusal::multicast), "multicast");
  EXPECT_EQ(to_string(Refusal::own_address), "own_address");
}

TEST(DestinationPolicy, HostAddressesHaveTheirOnLinkPrefixes) {
  const HostAddresses host = read_host_addresses();
  for (const auto& prefix : host.on_link) {
    EXPECT_FALSE(prefix.v4()) << prefix.to_string();
    const bool inside = std::any_of(host.addresses.begin(), host.addresses.end(),
                                    [&](const config::Ip16& a) { return prefix.contains(a); });
    EXPECT_TRUE(inside) << prefix.to_string();
  }
}

TEST(DestinationPolicy, LocalInterfaceAddresses) {
  const auto own = local_interface_addresses();
  const std::set<config::Ip16> unique(own.begin(), own.end());
  EXPECT_EQ(unique.size(), own.size());
  // Every interface address, used as the own list with a "*" rule, is refused.
  const auto p = policy({"*"}, own);
  for (const auto& a : own) {
    tunnel::Destination d;
    d.family = tunnel::Destination::Family::ipv6;
    std::copy(a.begin(), a.end(), d.address.begin());
    d.port = 443;
    EXPECT_NE(p.check(d), Refusal::none) << config::ip16_to_string(a);
  }
}

}  // namespace
}  // namespace egw::proxy
