// TestProtection: an AEAD stand-in whose tag catches any change.
#include "tests/support/test_protection.h"

#include <gtest/gtest.h>

#include <vector>

namespace egw::tunnel {
namespace {

std::vector<std::byte> iota_bytes(std::size_t n) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>(i);
  return out;
}

// Reference vectors from the SipHash paper's implementation (vectors.h):
// key 00 01 .. 0f, message 00 01 .. (n-1).
TEST(SipHash24, MatchesReferenceVectors) {
  const std::uint64_t k0 = 0x0706050403020100ULL;  // key bytes 0..7, little-endian
  const std::uint64_t k1 = 0x0f0e0d0c0b0a0908ULL;
  EXPECT_EQ(siphash24(k0, k1, iota_bytes(0)), 0x726fdb47dd0e0e31ULL);
  EXPECT_EQ(siphash24(k0, k1, iota_bytes(15)), 0xa129ca6149be45e5ULL);
}

TEST(TestProtection, SealAppendsPlaintextAndSixteenByteTag) {
  TestProtection p(7);
  const auto header = iota_bytes(13);
  const auto plaintext = iota_bytes(40);
  std::vector<std::byte> out = {std::byte{0xee}};
  p.seal(3, header, plaintext, out);
  EXPECT_EQ(p.overhead(), 16u);
  ASSERT_EQ(out.size(), 1u + 40 + 16);
  EXPECT_EQ(out[0], std::byte{0xee});  // appended, not overwritten
  EXPECT_TRUE(std::equal(plaintext.begin(), plaintext.end(), out.begin() + 1));
  auto opened = p.open(3, header, std::span(out).subspan(1));
  ASSERT_TRUE(opened);
  EXPECT_EQ(*opened, plaintext);
}

TEST(TestProtection, TamperingWithAnyByteIsRejected) {
  TestProtection p(7);
  const auto header = iota_bytes(13);
  std::vector<std::byte> sealed;
  p.seal(99, header, iota_bytes(50), sealed);
  for (std::size_t i = 0; i < sealed.size(); ++i) {
    for (std::uint8_t flip : {0x01, 0x80, 0xff}) {
      auto copy = sealed;
      copy[i] ^= static_cast<std::byte>(flip);
      EXPECT_FALSE(p.open(99, header, copy)) << "byte " << i << " flip " << int(flip);
    }
  }
  for (std::size_t i = 0; i < header.size(); ++i) {
    auto bad_header = header;
    bad_header[i] ^= std::byte{0x01};
    EXPECT_FALSE(p.open(99, bad_header, sealed)) << "header byte " << i;
  }
  EXPECT_FALSE(p.open(98, header, sealed));  // wrong packet number
  EXPECT_TRUE(p.open(99, header, sealed));   // and the original still opens
}

TEST(TestProtection, TruncationAndExtensionAreRejected) {
  TestProtection p(7);
  const auto header = iota_bytes(13);
  std::vector<std::byte> sealed;
  p.seal(1, header, iota_bytes(20), sealed);
  for (std::size_t size = 0; size < sealed.size(); ++size) {
    EXPECT_FALSE(p.open(1, header, std::span(sealed).first(size))) << size;
  }
  auto longer = sealed;
  longer.push_back(std::byte{0});
  EXPECT_FALSE(p.open(1, header, longer));
}

TEST(TestProtection, MovingBytesBetweenHeaderAndPayloadIsRejected) {
  // The header length is in the tagged message, so (header + x, payload)
  // and (header, x + payload) have different tags.
  TestProtection p(7);
  const auto header = iota_bytes(13);
  const auto payload = iota_bytes(5);
  std::vector<std::byte> sealed;
  p.seal(1, header, payload, sealed);
  auto longer_header = header;
  longer_header.push_back(payload[0]);
  std::vector<std::byte> shifted(sealed.begin() + 1, sealed.end());
  EXPECT_FALSE(p.open(1, longer_header, shifted));
}

TEST(TestProtection, DifferentKeysDisagree) {
  TestProtection a(1), b(2);
  const auto header = iota_bytes(13);
  std::vector<std::byte> sealed;
  a.seal(1, header, iota_bytes(8), sealed);
  EXPECT_FALSE(b.open(1, header, sealed));
  EXPECT_TRUE(TestProtection(1).open(1, header, sealed));  // the same key elsewhere works
}

}  // namespace
}  // namespace egw::tunnel
