#include "tunnel/ensemble_key.h"

#include <gtest/gtest.h>

namespace egw::tunnel {
namespace {

Destination v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  Destination e;
  e.address = {a, b, c, d};
  e.port = 443;
  return e;
}

TEST(EnsembleKey, DefaultIsThePeerAlone) {
  EXPECT_EQ(ensemble_key("hub-1", v4(10, 1, 2, 3), {}), "hub-1");
}

TEST(EnsembleKey, Ipv4PrefixGroupsASubnet) {
  const EnsembleKeying k{.by_destination_prefix = true};
  EXPECT_EQ(ensemble_key("hub-1", v4(10, 1, 2, 3), k), "hub-1|10.1.2.0/24");
  EXPECT_EQ(ensemble_key("hub-1", v4(10, 1, 2, 200), k), ensemble_key("hub-1", v4(10, 1, 2, 3), k));
  EXPECT_NE(ensemble_key("hub-1", v4(10, 1, 3, 3), k), ensemble_key("hub-1", v4(10, 1, 2, 3), k));
}

TEST(EnsembleKey, PrefixBitsInsideAByteAreMasked) {
  const EnsembleKeying k{.by_destination_prefix = true, .ipv4_prefix_bits = 20};
  // 10.1.47.9/20: third byte 47 = 0b0010'1111, keep its top 4 bits -> 32.
  EXPECT_EQ(ensemble_key("p", v4(10, 1, 47, 9), k), "p|10.1.32.0/20");
  const EnsembleKeying clamped{.by_destination_prefix = true, .ipv4_prefix_bits = 99};
  EXPECT_EQ(ensemble_key("p", v4(10, 1, 47, 9), clamped), "p|10.1.47.9/32");
}

TEST(EnsembleKey, Ipv6PrefixIsWrittenInHexGroups) {
  Destination e;
  e.family = Destination::Family::ipv6;
  e.address = {0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01, 0xab, 0xcd, 0, 0, 0, 0, 0, 0, 0, 1};
  const EnsembleKeying k{.by_destination_prefix = true};
  EXPECT_EQ(ensemble_key("p", e, k), "p|2001:db8:1:0:0:0:0:0/48");
}

}  // namespace
}  // namespace egw::tunnel
