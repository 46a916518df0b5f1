// Datagram layout: 13-byte header, then the protected payload
// (docs/protocol.md section 2).
#include "tunnel/packet_header.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/support/test_protection.h"
#include "tunnel/varint.h"
#include "tests/tunnel/byte_literals.h"

namespace egw::tunnel {
namespace {

TEST(PacketHeader, LayoutIsTypeIndexNumberBigEndian) {
  const auto h = encode_packet_header({PacketType::data, 0x0a0b0c0d, 0x0102030405060708ULL});
  EXPECT_EQ(std::vector<std::byte>(h.begin(), h.end()),
            bytes({0x01, 0x0a, 0x0b, 0x0c, 0x0d, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(PacketHeader, ParseSplitsHeaderAndPayload) {
  const PacketHeader header{PacketType::data, 77, 123'456};
  const auto h = encode_packet_header(header);
  std::vector<std::byte> datagram(h.begin(), h.end());
  datagram.resize(kPacketHeaderBytes + 20, std::byte{0x5a});  // 20 payload+tag bytes
  auto parsed = parse_packet(datagram, 16);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->header, header);
  EXPECT_EQ(parsed->header_bytes.size(), kPacketHeaderBytes);
  EXPECT_EQ(parsed->header_bytes.data(), datagram.data());
  EXPECT_EQ(parsed->protected_payload.size(), 20u);
  EXPECT_EQ(parsed->protected_payload.data(), datagram.data() + kPacketHeaderBytes);
}

TEST(PacketHeader, MinimumSizeIsHeaderPlusTagPlusOneByte) {
  const auto h = encode_packet_header({PacketType::data, 0, 1});
  std::vector<std::byte> datagram(h.begin(), h.end());
  // 13 + 16 + 1 = 30 bytes is the smallest acceptable datagram.
  datagram.resize(30);
  EXPECT_TRUE(parse_packet(datagram, 16));
  for (std::size_t size = 0; size < 30; ++size) {
    EXPECT_FALSE(parse_packet(std::span(datagram).first(size), 16)) << size;
  }
}

TEST(PacketHeader, OnlyDataPacketsAreAccepted) {
  for (int type : {0x00, 0x02, 0x03, 0x04, 0x06, 0x81, 0xff}) {
    auto datagram = bytes({type, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
    datagram.resize(40);
    EXPECT_FALSE(parse_packet(datagram, 16)) << type;
  }
  // Both lanes' data packets, with their type kept (it is authenticated).
  for (int type : {0x01, 0x05}) {
    auto datagram = bytes({type, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
    datagram.resize(40);
    const auto parsed = parse_packet(datagram, 16);
    ASSERT_TRUE(parsed) << type;
    EXPECT_EQ(static_cast<int>(parsed->header.type), type);
    EXPECT_EQ(is_urgent_datagram(datagram), type == 0x05);
  }
}

TEST(PacketHeader, PacketNumberBeyond62BitsIsRejected) {
  // ACK frames carry packet numbers as varints, so 2^62 could never be acknowledged.
  for (PacketNumber n : {kVarintMax + 1, ~PacketNumber{0}}) {
    const auto h = encode_packet_header({PacketType::data, 0, n});
    std::vector<std::byte> datagram(h.begin(), h.end());
    datagram.resize(40);
    EXPECT_FALSE(parse_packet(datagram, 16));
  }
  const auto h = encode_packet_header({PacketType::data, 0, kVarintMax});
  std::vector<std::byte> datagram(h.begin(), h.end());
  datagram.resize(40);
  EXPECT_TRUE(parse_packet(datagram, 16));
}

TEST(PacketHeader, SealThenOpenRecoversHeaderAndFrames) {
  TestProtection sender(42);
  TestProtection receiver(42);
  const PacketHeader header{PacketType::data, 9, 1000};
  const auto frames = bytes({0x01, 0x00, 0x00});  // PING + 2 padding
  auto datagram = seal_packet(sender, header, frames);
  EXPECT_EQ(datagram.size(), kPacketHeaderBytes + frames.size() + 16);  // 13 + 3 + 16 = 32
  auto opened = open_packet(receiver, datagram);  // in place
  ASSERT_TRUE(opened);
  EXPECT_EQ(opened->header, header);
  EXPECT_EQ(std::vector<std::byte>(opened->payload.begin(), opened->payload.end()), frames);
  EXPECT_EQ(opened->payload.data(), datagram.data() + kPacketHeaderBytes);  // no copy
}

TEST(PacketHeader, HeaderIsAuthenticated) {
  TestProtection protection(42);
  auto datagram = seal_packet(protection, {PacketType::data, 9, 1000}, bytes({0x01}));
  // Rewrite the packet number in the clear header: 1000 -> 1001.
  datagram[kPacketHeaderBytes - 1] ^= std::byte{0x01};
  EXPECT_FALSE(open_packet(protection, datagram));
  datagram[kPacketHeaderBytes - 1] ^= std::byte{0x01};
  datagram[2] ^= std::byte{0x80};  // receiver index
  EXPECT_FALSE(open_packet(protection, datagram));
}

TEST(PacketHeader, WrongKeyIsRejected) {
  TestProtection sender(1);
  TestProtection receiver(2);
  auto datagram = seal_packet(sender, {PacketType::data, 0, 5}, bytes({0x01}));
  EXPECT_FALSE(open_packet(receiver, datagram));
}

}  // namespace
}  // namespace egw::tunnel
