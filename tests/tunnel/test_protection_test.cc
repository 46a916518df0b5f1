// TestProtection: an AEAD stand-in whose tag catches any change.
#include "tests/support/test_protection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace egw::tunnel {
namespace {

std::vector<std::byte> iota_bytes(std::size_t n) {
  std::vector<std::byte> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>(i);
  return out;
}

// plaintext || tag, sealed in place the way the connection does it.
std::vector<std::byte> sealed_copy(TestProtection& p, PacketNumber number,
                                   std::span<const std::byte> header,
                                   std::span<const std::byte> plaintext) {
  std::vector<std::byte> buffer(plaintext.begin(), plaintext.end());
  buffer.resize(plaintext.size() + p.overhead());
  p.seal(number, header, buffer);
  return buffer;
}

// Reference vectors from the SipHash paper's implementation (vectors.h):
// key 00 01 .. 0f, message 00 01 .. (n-1).
TEST(SipHash24, MatchesReferenceVectors) {
  const std::uint64_t k0 = 0x0706050403020100ULL;  // key bytes 0..7, little-endian
  const std::uint64_t k1 = 0x0f0e0d0c0b0a0908ULL;
  EXPECT_EQ(siphash24(k0, k1, iota_bytes(0)), 0x726fdb47dd0e0e31ULL);
  EXPECT_EQ(siphash24(k0, k1, iota_bytes(15)), 0xa129ca6149be45e5ULL);
}

TEST(SipHash24, PiecewiseEqualsOneShot) {
  const auto message = iota_bytes(61);
  for (std::size_t cut1 = 0; cut1 <= message.size(); cut1 += 3) {
    for (std::size_t cut2 = cut1; cut2 <= message.size(); cut2 += 5) {
      SipHasher h(1, 2);
      h.update(std::span(message).first(cut1));
      h.update(std::span(message).subspan(cut1, cut2 - cut1));
      h.update(std::span(message).subspan(cut2));
      EXPECT_EQ(h.finish(), siphash24(1, 2, message)) << cut1 << " " << cut2;
    }
  }
}

TEST(TestProtection, SealsInPlaceWithSixteenByteTag) {
  TestProtection p(7);
  const auto header = iota_bytes(13);
  const auto plaintext = iota_bytes(40);
  // A byte before and after the packet must stay untouched.
  std::vector<std::byte> buffer(1 + 40 + 16 + 1, std::byte{0xee});
  std::copy(plaintext.begin(), plaintext.end(), buffer.begin() + 1);
  const auto packet = std::span(buffer).subspan(1, 40 + 16);
  p.seal(3, header, packet);
  EXPECT_EQ(p.overhead(), 16u);
  EXPECT_EQ(buffer.front(), std::byte{0xee});
  EXPECT_EQ(buffer.back(), std::byte{0xee});
  EXPECT_TRUE(std::equal(plaintext.begin(), plaintext.end(), buffer.begin() + 1));
  auto opened = p.open(3, header, packet);
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->data(), packet.data());  // in place
  EXPECT_TRUE(std::equal(opened->begin(), opened->end(), plaintext.begin(), plaintext.end()));
}

TEST(TestProtection, TamperingWithAnyByteIsRejected) {
  TestProtection p(7);
  const auto header = iota_bytes(13);
  const auto sealed = sealed_copy(p, 99, header, iota_bytes(50));
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
    auto copy = sealed;
    EXPECT_FALSE(p.open(99, bad_header, copy)) << "header byte " << i;
  }
  auto copy = sealed;
  EXPECT_FALSE(p.open(98, header, copy));  // wrong packet number
  copy = sealed;
  EXPECT_TRUE(p.open(99, header, copy));   // and the original still opens
}

TEST(TestProtection, TruncationAndExtensionAreRejected) {
  TestProtection p(7);
  const auto header = iota_bytes(13);
  const auto sealed = sealed_copy(p, 1, header, iota_bytes(20));
  for (std::size_t size = 0; size < sealed.size(); ++size) {
    auto copy = sealed;
    EXPECT_FALSE(p.open(1, header, std::span(copy).first(size))) << size;
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
  const auto sealed = sealed_copy(p, 1, header, payload);
  auto longer_header = header;
  longer_header.push_back(payload[0]);
  std::vector<std::byte> shifted(sealed.begin() + 1, sealed.end());
  EXPECT_FALSE(p.open(1, longer_header, shifted));
}

TEST(TestProtection, DifferentKeysDisagree) {
  TestProtection a(1), b(2);
  const auto header = iota_bytes(13);
  auto sealed = sealed_copy(a, 1, header, iota_bytes(8));
  EXPECT_FALSE(b.open(1, header, sealed));
  EXPECT_TRUE(TestProtection(1).open(1, header, sealed));  // the same key elsewhere works
}

}  // namespace
}  // namespace egw::tunnel
