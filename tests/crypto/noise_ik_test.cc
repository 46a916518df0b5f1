// NoiseIk: round trips with random keys, every tampered byte rejected, wrong
// keys and psks rejected, low-order ephemerals rejected, the state machine,
// and a rejected message leaving the handshake usable.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/crypto/crypto_test_util.h"
#include "tunnel/crypto/aead.h"
#include "tunnel/crypto/noise_ik.h"

namespace egw::tunnel::crypto {
namespace {

using test::key_from_hex;

struct Peers {
  Key32 initiator_private = x25519_generate_private();
  Key32 responder_private = x25519_generate_private();
  std::optional<Key32> psk;

  NoiseIkConfig initiator() const {
    NoiseIkConfig c;
    c.initiator = true;
    c.local_static_private = initiator_private;
    c.remote_static_public = x25519_public_key(responder_private);
    c.psk = psk;
    c.prologue = {'e', 'g', 'w'};
    return c;
  }
  NoiseIkConfig responder() const {
    NoiseIkConfig c;
    c.initiator = false;
    c.local_static_private = responder_private;
    c.psk = psk;
    c.prologue = {'e', 'g', 'w'};
    return c;
  }
};

std::vector<std::uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }

// Transport messages both ways with split()'s keys.
void expect_transport_works(const NoiseIk& a, const NoiseIk& b) {
  const auto ka = a.split();
  const auto kb = b.split();
  ChaChaPolyKey a_send(ka.send), b_receive(kb.receive), b_send(kb.send), a_receive(ka.receive);
  std::vector<std::byte> packet(100 + 16, std::byte{5});
  a_send.seal(0, {}, packet);
  EXPECT_TRUE(b_receive.open(0, {}, packet));
  b_send.seal(0, {}, packet);
  EXPECT_TRUE(a_receive.open(0, {}, packet));
  EXPECT_NE(ka.send.bytes, ka.receive.bytes);
}

void round_trip(const Peers& peers) {
  NoiseIk initiator(peers.initiator());
  NoiseIk responder(peers.responder());
  const auto message1 = initiator.write_message(bytes("hello"));
  ASSERT_EQ(message1.size(), NoiseIk::message1_bytes(5));
  EXPECT_FALSE(initiator.is_complete());
  const auto payload1 = responder.read_message(message1);
  ASSERT_TRUE(payload1);
  EXPECT_EQ(*payload1, bytes("hello"));
  EXPECT_EQ(responder.remote_static(), x25519_public_key(peers.initiator_private));
  const auto message2 = responder.write_message(bytes("welcome!"));
  ASSERT_EQ(message2.size(), NoiseIk::message2_bytes(8));
  EXPECT_TRUE(responder.is_complete());
  const auto payload2 = initiator.read_message(message2);
  ASSERT_TRUE(payload2);
  EXPECT_EQ(*payload2, bytes("welcome!"));
  EXPECT_TRUE(initiator.is_complete());
  EXPECT_EQ(initiator.handshake_hash(), responder.handshake_hash());
  expect_transport_works(initiator, responder);
}

TEST(CryptoNoiseIk, RoundTripIk) { round_trip(Peers{}); }

TEST(CryptoNoiseIk, RoundTripIkpsk2) {
  Peers peers;
  peers.psk = x25519_generate_private();
  round_trip(peers);
}

TEST(CryptoNoiseIk, EmptyPayloadsAndEphemeralsDiffer) {
  Peers peers;
  NoiseIk a(peers.initiator()), b(peers.initiator());
  const auto m1 = a.write_message({});
  const auto m2 = b.write_message({});
  EXPECT_EQ(m1.size(), NoiseIk::message1_bytes(0));
  EXPECT_NE(m1, m2);  // fresh ephemerals
}

TEST(CryptoNoiseIk, EveryFlippedByteOfMessage1And2IsRejected) {
  for (const bool psk : {false, true}) {
    Peers peers;
    if (psk) peers.psk = x25519_generate_private();
    NoiseIk initiator(peers.initiator());
    const auto message1 = initiator.write_message(bytes("payload one"));
    NoiseIk responder(peers.responder());
    for (std::size_t i = 0; i < message1.size(); ++i) {
      for (const std::uint8_t flip : {0x01, 0x80}) {
        auto bad = message1;
        bad[i] ^= flip;
        // The top bit of the ephemeral's last byte is ignored by X25519
        // (RFC 7748 §5), but it is hashed (MixHash(e)), so it still fails.
        EXPECT_FALSE(responder.read_message(bad)) << "psk " << psk << " byte " << i;
      }
    }
    // Truncated and extended.
    EXPECT_FALSE(responder.read_message(std::span(message1).first(message1.size() - 1)));
    auto longer = message1;
    longer.push_back(0);
    EXPECT_FALSE(responder.read_message(longer));
    // The rejections left the responder's state untouched.
    ASSERT_TRUE(responder.read_message(message1));
    const auto message2 = responder.write_message(bytes("payload two"));
    for (std::size_t i = 0; i < message2.size(); ++i) {
      auto bad = message2;
      bad[i] ^= 0x01;
      EXPECT_FALSE(initiator.read_message(bad)) << "psk " << psk << " byte " << i;
    }
    EXPECT_FALSE(initiator.read_message(std::span(message2).first(message2.size() - 1)));
    ASSERT_TRUE(initiator.read_message(message2));
    expect_transport_works(initiator, responder);
  }
}

TEST(CryptoNoiseIk, WrongResponderKeyRejected) {
  Peers peers;
  NoiseIk initiator(peers.initiator());
  const auto message1 = initiator.write_message(bytes("x"));
  Peers other;
  other.initiator_private = peers.initiator_private;
  NoiseIk impostor(other.responder());  // another static key
  EXPECT_FALSE(impostor.read_message(message1));
}

TEST(CryptoNoiseIk, WrongPrologueRejected) {
  Peers peers;
  NoiseIk initiator(peers.initiator());
  auto config = peers.responder();
  config.prologue = {'x'};
  NoiseIk responder(config);
  EXPECT_FALSE(responder.read_message(initiator.write_message({})));
}

TEST(CryptoNoiseIk, WrongOrMissingPskRejected) {
  Peers peers;
  peers.psk = key_from_hex("0101010101010101010101010101010101010101010101010101010101010101");
  NoiseIk initiator(peers.initiator());
  auto config = peers.responder();
  config.psk = key_from_hex("0202020202020202020202020202020202020202020202020202020202020202");
  NoiseIk responder(config);
  // Message 1 carries no psk (psk2 is at the end of message 2): it is read.
  ASSERT_TRUE(responder.read_message(initiator.write_message({})));
  EXPECT_FALSE(initiator.read_message(responder.write_message({})));

  // IK against IKpsk2: different protocol names, message 1 already fails.
  Peers plain = peers;
  plain.psk.reset();
  NoiseIk ik_initiator(plain.initiator());
  NoiseIk psk_responder(peers.responder());
  EXPECT_FALSE(psk_responder.read_message(ik_initiator.write_message({})));
}

TEST(CryptoNoiseIk, ResponderPicksPskByInitiatorKey) {
  Peers peers;
  peers.psk = x25519_generate_private();
  NoiseIk initiator(peers.initiator());
  auto config = peers.responder();
  config.psk.reset();
  config.use_psk = true;
  NoiseIk responder(config);
  EXPECT_TRUE(responder.is_psk());
  ASSERT_TRUE(responder.read_message(initiator.write_message(bytes("who am i"))));
  ASSERT_EQ(responder.remote_static(), x25519_public_key(peers.initiator_private));
  // No psk yet: message 2 cannot be written.
  EXPECT_TRUE(responder.write_message({}).empty());
  EXPECT_TRUE(responder.set_psk(*peers.psk));
  const auto message2 = responder.write_message(bytes("ok"));
  ASSERT_FALSE(message2.empty());
  EXPECT_FALSE(responder.set_psk(*peers.psk));  // too late
  ASSERT_TRUE(initiator.read_message(message2));
  expect_transport_works(initiator, responder);
  // set_psk on a plain IK handshake is refused.
  NoiseIk ik(Peers{}.responder());
  EXPECT_FALSE(ik.set_psk(*peers.psk));
}

TEST(CryptoNoiseIk, PinnedRemoteStaticOnResponder) {
  Peers peers;
  auto config = peers.responder();
  config.remote_static_public = x25519_public_key(x25519_generate_private());
  NoiseIk pinned(config);
  NoiseIk initiator(peers.initiator());
  EXPECT_FALSE(pinned.read_message(initiator.write_message({})));
}

TEST(CryptoNoiseIk, LowOrderEphemeralsRejected) {
  const char* const points[] = {
      "0000000000000000000000000000000000000000000000000000000000000000",
      "0100000000000000000000000000000000000000000000000000000000000000",
      "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
      "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  };
  Peers peers;
  NoiseIk initiator(peers.initiator());
  const auto message1 = initiator.write_message({});
  NoiseIk responder(peers.responder());
  ASSERT_TRUE(responder.read_message(message1));
  const auto message2 = responder.write_message({});
  for (const char* point : points) {
    const Key32 low = key_from_hex(point);
    NoiseIk fresh_responder(peers.responder());
    auto bad1 = message1;
    std::copy(low.begin(), low.end(), bad1.begin());
    EXPECT_FALSE(fresh_responder.read_message(bad1)) << point;
    auto bad2 = message2;
    std::copy(low.begin(), low.end(), bad2.begin());
    EXPECT_FALSE(initiator.read_message(bad2)) << point;
  }
  EXPECT_TRUE(initiator.read_message(message2));
}

TEST(CryptoNoiseIk, LowOrderConfiguredPeerKeyFailsToWrite) {
  Peers peers;
  auto config = peers.initiator();
  config.remote_static_public = Key32{};
  NoiseIk initiator(config);
  EXPECT_TRUE(initiator.write_message({}).empty());
  config.remote_static_public.reset();  // missing: IK needs it
  NoiseIk no_peer(config);
  EXPECT_TRUE(no_peer.write_message({}).empty());
}

TEST(CryptoNoiseIk, StateMachine) {
  Peers peers;
  NoiseIk initiator(peers.initiator());
  NoiseIk responder(peers.responder());
  EXPECT_TRUE(responder.write_message({}).empty());  // responder speaks second
  const auto message1 = initiator.write_message({});
  EXPECT_TRUE(initiator.write_message({}).empty());  // only one message 1
  EXPECT_FALSE(initiator.read_message(message1));    // not a message 2
  ASSERT_TRUE(responder.read_message(message1));
  EXPECT_FALSE(responder.read_message(message1));    // replayed message 1
  const auto message2 = responder.write_message({});
  EXPECT_TRUE(responder.write_message({}).empty());
  ASSERT_TRUE(initiator.read_message(message2));
  EXPECT_FALSE(initiator.read_message(message2));    // complete
  // Oversized payloads (Noise messages are at most 65535 bytes).
  NoiseIk big(peers.initiator());
  const std::vector<std::uint8_t> payload(NoiseIk::kMaxMessageBytes, 0);
  EXPECT_TRUE(big.write_message(payload).empty());
  EXPECT_EQ(big.write_message(std::span(payload).first(65535 - 96)).size(), 65535u);
  NoiseIk reader(peers.responder());
  EXPECT_FALSE(reader.read_message(std::vector<std::uint8_t>(65536, 0)));
  EXPECT_FALSE(reader.read_message({}));
}

TEST(CryptoNoiseIkDeathTest, SplitBeforeCompletionAborts) {
  Peers peers;
  NoiseIk initiator(peers.initiator());
  EXPECT_DEATH(initiator.split(), "before the handshake completed");
}

}  // namespace
}  // namespace egw::tunnel::crypto
