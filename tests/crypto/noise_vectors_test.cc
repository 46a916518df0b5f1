// Published Noise test vectors (vectors/noise_ik.txt: cacophony's and snow's
// Noise_IK_25519_ChaChaPoly_SHA256 and Noise_IKpsk2_25519_ChaChaPoly_SHA256):
// both handshake messages and the transport messages after Split(), byte for
// byte, with the vectors' fixed ephemerals; and the handshake hash.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/crypto/crypto_test_util.h"
#include "tunnel/crypto/aead.h"
#include "tunnel/crypto/noise_ik.h"

namespace egw::tunnel::crypto {
namespace {

using test::from_hex;
using test::key_from_hex;
using test::to_hex;

struct Vector {
  std::string source;
  std::map<std::string, std::string> fields;
  std::vector<std::pair<std::string, std::string>> messages;  // payload, ciphertext (hex)
};

std::vector<Vector> load_vectors() {
  std::ifstream in(test::test_dir() + "/vectors/noise_ik.txt");
  std::vector<Vector> vectors;
  std::string line;
  Vector current;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string word;
    words >> word;
    if (word == "vector") {
      current = Vector{};
      words >> current.source;
    } else if (word == "message") {
      std::string payload, ciphertext;
      words >> payload >> ciphertext;
      current.messages.emplace_back(payload == "-" ? "" : payload, ciphertext);
    } else if (word == "end") {
      vectors.push_back(current);
    } else {
      words >> current.fields[word];
    }
  }
  return vectors;
}

void replay(const Vector& v, bool responder_learns_psk_late) {
  const auto& f = v.fields;
  SCOPED_TRACE(v.source + " " + f.at("protocol_name"));
  const bool psk = f.count("init_psk") != 0;
  ASSERT_EQ(psk, f.at("protocol_name") == "Noise_IKpsk2_25519_ChaChaPoly_SHA256");

  NoiseIkConfig initiator_config;
  initiator_config.initiator = true;
  initiator_config.local_static_private = key_from_hex(f.at("init_static"));
  initiator_config.remote_static_public = key_from_hex(f.at("init_remote_static"));
  initiator_config.prologue = from_hex(f.at("init_prologue"));
  initiator_config.fixed_ephemeral_private = key_from_hex(f.at("init_ephemeral"));
  if (psk) initiator_config.psk = key_from_hex(f.at("init_psk"));

  NoiseIkConfig responder_config;
  responder_config.initiator = false;
  responder_config.local_static_private = key_from_hex(f.at("resp_static"));
  responder_config.prologue = from_hex(f.at("resp_prologue"));
  responder_config.fixed_ephemeral_private = key_from_hex(f.at("resp_ephemeral"));
  if (psk && responder_learns_psk_late) {
    responder_config.use_psk = true;
  } else if (psk) {
    responder_config.psk = key_from_hex(f.at("resp_psk"));
  }

  NoiseIk initiator(initiator_config);
  NoiseIk responder(responder_config);
  EXPECT_EQ(std::string(initiator.protocol_name()), f.at("protocol_name"));
  EXPECT_EQ(std::string(responder.protocol_name()), f.at("protocol_name"));
  ASSERT_GE(v.messages.size(), 2u);

  // Message 1: initiator -> responder.
  const auto payload1 = from_hex(v.messages[0].first);
  const auto message1 = initiator.write_message(payload1);
  EXPECT_EQ(message1.size(), NoiseIk::message1_bytes(payload1.size()));
  EXPECT_EQ(to_hex(message1), v.messages[0].second);
  const auto read1 = responder.read_message(message1);
  ASSERT_TRUE(read1);
  EXPECT_EQ(*read1, payload1);
  ASSERT_TRUE(responder.remote_static());
  EXPECT_EQ(*responder.remote_static(), x25519_public_key(initiator_config.local_static_private.bytes));
  if (psk && responder_learns_psk_late) {
    EXPECT_TRUE(responder.set_psk(key_from_hex(f.at("resp_psk"))));
  }

  // Message 2: responder -> initiator.
  const auto payload2 = from_hex(v.messages[1].first);
  const auto message2 = responder.write_message(payload2);
  EXPECT_EQ(message2.size(), NoiseIk::message2_bytes(payload2.size()));
  EXPECT_EQ(to_hex(message2), v.messages[1].second);
  const auto read2 = initiator.read_message(message2);
  ASSERT_TRUE(read2);
  EXPECT_EQ(*read2, payload2);
  ASSERT_TRUE(initiator.is_complete());
  ASSERT_TRUE(responder.is_complete());
  if (f.count("handshake_hash") && !f.at("handshake_hash").empty()) {
    EXPECT_EQ(to_hex(initiator.handshake_hash()), f.at("handshake_hash"));
  }
  EXPECT_EQ(initiator.handshake_hash(), responder.handshake_hash());

  // Transport: senders alternate, initiator first; nonce = per-direction count.
  const auto initiator_keys = initiator.split();
  const auto responder_keys = responder.split();
  EXPECT_EQ(initiator_keys.send.bytes, responder_keys.receive.bytes);
  EXPECT_EQ(initiator_keys.receive.bytes, responder_keys.send.bytes);
  ChaChaPolyKey initiator_send(initiator_keys.send), initiator_receive(initiator_keys.receive);
  ChaChaPolyKey responder_send(responder_keys.send), responder_receive(responder_keys.receive);
  std::uint64_t to_responder = 0, to_initiator = 0;
  for (std::size_t i = 2; i < v.messages.size(); ++i) {
    SCOPED_TRACE("transport message " + std::to_string(i));
    const bool from_initiator = i % 2 == 0;
    const auto payload = from_hex(v.messages[i].first);
    std::vector<std::byte> packet(payload.size() + ChaChaPolyKey::kTagBytes);
    std::copy(payload.begin(), payload.end(), reinterpret_cast<std::uint8_t*>(packet.data()));
    std::uint64_t& counter = from_initiator ? to_responder : to_initiator;
    (from_initiator ? initiator_send : responder_send).seal(counter, {}, packet);
    EXPECT_EQ(to_hex(packet), v.messages[i].second);
    ASSERT_TRUE((from_initiator ? responder_receive : initiator_receive).open(counter, {}, packet));
    EXPECT_EQ(to_hex(std::span(packet).first(payload.size())), v.messages[i].first);
    ++counter;
  }
}

TEST(CryptoNoiseVectors, VectorFileHasIkAndIkpsk2) {
  const auto vectors = load_vectors();
  int ik = 0, ikpsk2 = 0;
  for (const auto& v : vectors) {
    ik += v.fields.at("protocol_name") == "Noise_IK_25519_ChaChaPoly_SHA256";
    ikpsk2 += v.fields.at("protocol_name") == "Noise_IKpsk2_25519_ChaChaPoly_SHA256";
  }
  EXPECT_GE(ik, 2);
  EXPECT_GE(ikpsk2, 1);
}

TEST(CryptoNoiseVectors, ReplayEveryByte) {
  const auto vectors = load_vectors();
  ASSERT_FALSE(vectors.empty());
  for (const auto& v : vectors) replay(v, false);
}

TEST(CryptoNoiseVectors, ReplayWithResponderChoosingPskAfterMessage1) {
  for (const auto& v : load_vectors()) {
    if (v.fields.count("init_psk")) replay(v, true);
  }
}

}  // namespace
}  // namespace egw::tunnel::crypto
