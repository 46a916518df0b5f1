// The hub is not an open proxy: what a branch may ask it to connect to.
// Each test is an attempt a hostile or misconfigured branch could make.
#include "proxy/destination_policy.h"

#include <arpa/inet.h>

#include <gtest/gtest.h>

#include <initializer_list>
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
