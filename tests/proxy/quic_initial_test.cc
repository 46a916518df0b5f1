// The SNI and ALPN of QUIC Initials: the RFCs' own client Initials (v1 and
// v2) byte for byte, ClientHellos over several Initials and datagrams in any
// order, and tampered or hostile input that must end in not_quic or no_sni.
#include "proxy/quic_initial.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tests/proxy/quic_initial_builder.h"
#include "tests/proxy/quic_rfc_vectors.h"

namespace egw::proxy {
namespace {

using namespace test_data;

QuicInitialScan scan(const std::vector<Bytes>& datagrams) {
  std::vector<std::span<const std::byte>> spans(datagrams.begin(), datagrams.end());
  return scan_quic_initials(spans);
}

const Bytes kDcid = from_hex(kRfcDcidHex);

template <std::size_t N>
Bytes bytes_of(const std::array<std::uint8_t, N>& a) {
  const auto b = std::as_bytes(std::span(a));
  return {b.begin(), b.end()};
}

TEST(QuicInitial, ClientKeysOfRfcAppendixA1) {
  QuicInitialKeys v1;
  ASSERT_TRUE(quic_client_initial_keys(kQuicVersion1, kDcid, v1));
  EXPECT_EQ(bytes_of(v1.key), from_hex(kRfcV1ClientKeyHex));
  EXPECT_EQ(bytes_of(v1.iv), from_hex(kRfcV1ClientIvHex));
  EXPECT_EQ(bytes_of(v1.hp), from_hex(kRfcV1ClientHpHex));
  QuicInitialKeys v2;
  ASSERT_TRUE(quic_client_initial_keys(kQuicVersion2, kDcid, v2));
  EXPECT_EQ(bytes_of(v2.key), from_hex(kRfcV2ClientKeyHex));
  EXPECT_EQ(bytes_of(v2.iv), from_hex(kRfcV2ClientIvHex));
  EXPECT_EQ(bytes_of(v2.hp), from_hex(kRfcV2ClientHpHex));
  QuicInitialKeys other;
  EXPECT_FALSE(quic_client_initial_keys(0xff00001d, kDcid, other));  // draft-29: not read
}

TEST(QuicInitial, RfcV1ClientInitial) {
  const QuicInitialScan s = scan({from_hex(kRfcV1ClientInitialHex)});
  EXPECT_EQ(s.status, QuicStatus::found);
  EXPECT_EQ(s.host, "example.com");
  EXPECT_EQ(s.alpn, std::vector<std::string>{"alpn"});
  EXPECT_EQ(s.version, kQuicVersion1);
}

TEST(QuicInitial, RfcV2ClientInitial) {
  const QuicInitialScan s = scan({from_hex(kRfcV2ClientInitialHex)});
  EXPECT_EQ(s.status, QuicStatus::found);
  EXPECT_EQ(s.host, "example.com");
  EXPECT_EQ(s.alpn, std::vector<std::string>{"alpn"});
  EXPECT_EQ(s.version, kQuicVersion2);
}

// The test builder protects packets exactly as the RFC's client did, so the
// packets built below are real ones.
TEST(QuicInitial, BuilderMatchesRfc) {
  const Bytes frame = from_hex(kRfcInitialCryptoFrameHex);
  EXPECT_EQ(seal_initial(kQuicVersion1, kDcid, 2, frame), from_hex(kRfcV1ClientInitialHex));
  EXPECT_EQ(seal_initial(kQuicVersion2, kDcid, 2, frame), from_hex(kRfcV2ClientInitialHex));
}

// Any changed byte, in the header (other keys, other AAD), the protected
// packet number or the ciphertext, fails authentication: nothing is read.
TEST(QuicInitial, TamperedPacketIsNotRead) {
  for (const char* hex : {kRfcV1ClientInitialHex, kRfcV2ClientInitialHex}) {
    const Bytes good = from_hex(hex);
    for (const std::size_t at : {std::size_t{7}, std::size_t{18}, std::size_t{21}, std::size_t{100}, good.size() - 1}) {
      Bytes bad = good;
      bad[at] ^= std::byte{0x01};
      const QuicInitialScan s = scan({bad});
      EXPECT_EQ(s.status, QuicStatus::not_quic) << at;
      EXPECT_TRUE(s.host.empty());
    }
  }
}

// A ClientHello too large for one Initial (a post-quantum key share), in two
// datagrams that arrive in reverse order.
TEST(QuicInitial, ClientHelloOverTwoInitialsInReverseOrder) {
  for (const std::uint32_t version : {kQuicVersion1, kQuicVersion2}) {
    const Bytes hello = large_client_hello("www.example.org", 1500);
    const std::span<const std::byte> h(hello);
    const Bytes first = seal_initial(version, kDcid, 0, crypto_frame(0, h.first(1000)));
    const Bytes second = seal_initial(version, kDcid, 1, crypto_frame(1000, h.subspan(1000)));
    QuicInitialReader reader;
    EXPECT_EQ(reader.add_datagram(second).status, QuicStatus::need_more);
    const QuicInitialScan& s = reader.add_datagram(first);
    EXPECT_EQ(s.status, QuicStatus::found);
    EXPECT_EQ(s.host, "www.example.org");
    EXPECT_EQ(s.alpn, std::vector<std::string>{"h3"});
    EXPECT_EQ(s.version, version);
    EXPECT_EQ(scan({first}).status, QuicStatus::need_more);
  }
}

// Frames out of order inside one packet, and two Initials coalesced in one
// datagram behind each other (RFC 9000 12.2), a 0-RTT packet after them.
TEST(QuicInitial, CoalescedPacketsAndFramesOutOfOrder) {
  const Bytes hello = large_client_hello("cdn.example.net", 900);
  const std::span<const std::byte> h(hello);
  Bytes frames = crypto_frame(600, h.subspan(600));
  put(frames, Bytes{std::byte{0x01}});  // PING
  put(frames, crypto_frame(300, h.subspan(300, 300)));
  put(frames, from_hex("0200000000"));  // ACK of packet 0, no delay, one range
  Bytes datagram = seal_initial(kQuicVersion1, kDcid, 1, frames, 800);
  put(datagram, seal_initial(kQuicVersion1, kDcid, 0, crypto_frame(0, h.first(300)), 500));
  put(datagram, from_hex("d000000001088394c8f03e51570800050102030405"));  // 0-RTT, stepped over
  const QuicInitialScan s = scan({datagram});
  EXPECT_EQ(s.status, QuicStatus::found);
  EXPECT_EQ(s.host, "cdn.example.net");
}

// After a Retry a client's Initials carry the DCID the server chose: the
// keys follow the DCID of each packet.
TEST(QuicInitial, KeysFollowTheDestinationConnectionId) {
  const Bytes hello = large_client_hello("www.example.org", 1500);
  const std::span<const std::byte> h(hello);
  const Bytes first = seal_initial(kQuicVersion1, kDcid, 0, crypto_frame(0, h.first(1000)));
  const Bytes second = seal_initial(kQuicVersion1, from_hex("0011223344556677889900"), 1, crypto_frame(1000, h.subspan(1000)));
  const QuicInitialScan s = scan({first, second});
  EXPECT_EQ(s.status, QuicStatus::found);
  EXPECT_EQ(s.host, "www.example.org");
}

// A later datagram that is not an authentic Initial is ignored; a duplicate
// (a retransmission) does no harm.
TEST(QuicInitial, StrayAndDuplicateDatagramsAreIgnored) {
  const Bytes hello = large_client_hello("www.example.org", 1500);
  const std::span<const std::byte> h(hello);
  const Bytes first = seal_initial(kQuicVersion1, kDcid, 0, crypto_frame(0, h.first(1000)));
  Bytes junk = first;
  junk[600] ^= std::byte{0xff};
  const Bytes second = seal_initial(kQuicVersion1, kDcid, 1, crypto_frame(1000, h.subspan(1000)));
  const QuicInitialScan s = scan({first, junk, first, Bytes(1300, std::byte{0}), second});
  EXPECT_EQ(s.status, QuicStatus::found);
  EXPECT_EQ(s.host, "www.example.org");
}

TEST(QuicInitial, NotQuic) {
  const Bytes rfc = from_hex(kRfcV1ClientInitialHex);
  EXPECT_EQ(scan({Bytes(1200, std::byte{0})}).status, QuicStatus::not_quic);
  EXPECT_EQ(scan({from_hex("12340100000100000000000003777777076578616d706c6503636f6d0000010001")}).status,
            QuicStatus::not_quic);  // a DNS query
  EXPECT_EQ(scan({Bytes(rfc.begin(), rfc.begin() + 1199)}).status, QuicStatus::not_quic);  // RFC 9000 14.1
  Bytes draft = rfc;
  draft[4] = std::byte{0x1d};  // another version
  EXPECT_EQ(scan({draft}).status, QuicStatus::not_quic);
  Bytes fixed_bit = rfc;
  fixed_bit[0] &= std::byte{0xbf};
  EXPECT_EQ(scan({fixed_bit}).status, QuicStatus::not_quic);
  EXPECT_EQ(scan({seal_initial(kQuicVersion1, kDcid, 0, from_hex("1e"))}).status, QuicStatus::not_quic);  // HANDSHAKE_DONE
  EXPECT_EQ(scan({seal_initial(kQuicVersion1, kDcid, 0, crypto_frame(0, from_hex("02000004deadbeef")))}).status,
            QuicStatus::not_quic);  // a ServerHello
  EXPECT_EQ(scan({seal_initial(kQuicVersion1, kDcid, 0, from_hex("0600ff"))}).status, QuicStatus::not_quic);  // cut frame
}

TEST(QuicInitial, CapsEndTheScan) {
  const Bytes hello = large_client_hello("www.example.org", 1500);
  const std::span<const std::byte> h(hello);
  // Beyond the buffer.
  EXPECT_EQ(scan({seal_initial(kQuicVersion1, kDcid, 0, crypto_frame(kQuicCryptoBufferBytes - 10, h.first(11)))}).status,
            QuicStatus::no_sni);
  // A ClientHello that says it is larger than the buffer.
  Bytes huge = from_hex("01004001");
  huge.resize(900);
  EXPECT_EQ(scan({seal_initial(kQuicVersion1, kDcid, 0, crypto_frame(0, huge))}).status, QuicStatus::no_sni);
  // Too many datagrams without the start of the message.
  std::vector<Bytes> tail(kQuicInitialDatagrams, seal_initial(kQuicVersion1, kDcid, 1, crypto_frame(1000, h.subspan(1000))));
  EXPECT_EQ(scan(tail).status, QuicStatus::no_sni);
  tail.pop_back();
  EXPECT_EQ(scan(tail).status, QuicStatus::need_more);
  // Too many holes.
  Bytes frames;
  for (std::size_t i = 0; i < 40; ++i) put(frames, crypto_frame(10 + 2 * i, h.subspan(10 + 2 * i, 1)));
  EXPECT_EQ(scan({seal_initial(kQuicVersion1, kDcid, 0, frames)}).status, QuicStatus::no_sni);
  // A client that closes at once.
  EXPECT_EQ(scan({seal_initial(kQuicVersion1, kDcid, 0, from_hex("1c0a0000"))}).status, QuicStatus::no_sni);
}

TEST(QuicInitial, NoHostName) {
  const Bytes hello = client_hello({alpn_extension({"h3"})});
  const QuicInitialScan s = scan({seal_initial(kQuicVersion1, kDcid, 0, crypto_frame(0, hello))});
  EXPECT_EQ(s.status, QuicStatus::no_sni);
  EXPECT_EQ(s.alpn, std::vector<std::string>{"h3"});
}

}  // namespace
}  // namespace egw::proxy
