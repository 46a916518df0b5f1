#include "config/net_prefix.h"

#include <gtest/gtest.h>

namespace egw::config {
namespace {

tunnel::Destination v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d, std::uint16_t port) {
  tunnel::Destination x;
  x.address[0] = a; x.address[1] = b; x.address[2] = c; x.address[3] = d;
  x.port = port;
  return x;
}

TEST(NetPrefix, ParsesV4AndV6AndHosts) {
  const auto p = std::get<IpPrefix>(parse_ip_prefix("10.1.0.0/16"));
  EXPECT_TRUE(p.v4());
  EXPECT_EQ(p.to_string(), "10.1.0.0/16");
  EXPECT_TRUE(p.contains(v4(10, 1, 200, 3, 80)));
  EXPECT_FALSE(p.contains(v4(10, 2, 0, 1, 80)));
  EXPECT_EQ(std::get<IpPrefix>(parse_ip_prefix("192.0.2.7")).to_string(), "192.0.2.7/32");
  EXPECT_EQ(std::get<IpPrefix>(parse_ip_prefix("2001:db8::/32")).to_string(), "2001:db8::/32");
  EXPECT_EQ(std::get<IpPrefix>(parse_ip_prefix("0.0.0.0/0")).bits, 96);
}

TEST(NetPrefix, RejectsHostBitsAndGarbage) {
  EXPECT_NE(std::get<std::string>(parse_ip_prefix("10.1.2.3/16")).find("10.1.0.0/16"), std::string::npos);
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_ip_prefix("10.1.0/16")));
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_ip_prefix("10.0.0.0/33")));
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_ip_prefix("example.com")));
}

TEST(NetPrefix, V4MappedV6DestinationMatchesV4Rule) {
  const auto p = std::get<IpPrefix>(parse_ip_prefix("127.0.0.0/8"));
  tunnel::Destination mapped;
  mapped.family = tunnel::Destination::Family::ipv6;
  mapped.address[10] = mapped.address[11] = 0xff;
  mapped.address[12] = 127;
  mapped.address[15] = 1;
  EXPECT_TRUE(p.contains(mapped));
}

TEST(NetPrefix, DestinationRules) {
  const auto r = std::get<DestinationRule>(parse_destination_rule("10.2.0.0/16:80,443,8000-8099"));
  EXPECT_TRUE(r.matches(v4(10, 2, 1, 1, 443)));
  EXPECT_TRUE(r.matches(v4(10, 2, 1, 1, 8050)));
  EXPECT_FALSE(r.matches(v4(10, 2, 1, 1, 22)));
  EXPECT_EQ(r.to_string(), "10.2.0.0/16:80,443,8000-8099");
  const auto any = std::get<DestinationRule>(parse_destination_rule("*:443"));
  EXPECT_TRUE(any.matches(v4(1, 2, 3, 4, 443)));
  EXPECT_FALSE(any.matches(v4(1, 2, 3, 4, 80)));
  const auto v6 = std::get<DestinationRule>(parse_destination_rule("[2001:db8::]/32:443"));
  EXPECT_EQ(v6.to_string(), "[2001:db8::]/32:443");
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_destination_rule("10.0.0.0/8:0")));
  EXPECT_TRUE(std::holds_alternative<std::string>(parse_destination_rule("10.0.0.0/8:90-80")));
}

}  // namespace
}  // namespace egw::config
