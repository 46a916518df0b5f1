// Sealing out of place (issue 22): a packet's stream bytes are encrypted
// from the stream's send ring straight into the packet. A bulk transfer with
// losses (retransmissions) through a small send buffer (the ring wraps, so
// chunks come in two pieces) checks every packet the connection seals that
// way against the in-place path (the sources copied in, then sealed): the
// same ciphertext and tag under the same key and nonce, for both AEADs.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "tests/tunnel/connection_pair.h"
#include "tunnel/crypto/aead.h"

namespace egw::tunnel {
namespace {

using testing::ConnectionPair;
using testing::destination_at;
using testing::kKey;
using testing::pattern;

struct GatherCounts {
  std::size_t packets = 0;         // sealed with sources
  std::size_t wrapped_chunks = 0;  // a chunk in two pieces (the ring wrapped)
  std::size_t mismatches = 0;      // out of place != in place
};

crypto::Key32 test_key() {
  crypto::Key32 k{};
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<std::uint8_t>(i * 29 + 3);
  return k;
}

// Checks seal_gather against the in-place seal with the real AEAD, then seals
// the wire datagram with TestProtection (the pair opens every datagram with it).
class CheckingProtection final : public PacketProtection {
 public:
  CheckingProtection(crypto::Aead aead, GatherCounts* counts)
      : wire_(kKey), out_of_place_(aead, test_key()), in_place_(aead, test_key()), counts_(counts) {}

  std::size_t overhead() const override { return TestProtection::kTagBytes; }
  void seal(PacketNumber number, std::span<const std::byte> header,
            std::span<std::byte> packet) override {
    wire_.seal(number, header, packet);
  }
  void seal_gather(PacketNumber number, std::span<const std::byte> header,
                   std::span<std::byte> packet, std::span<const Source> sources) override {
    std::vector<std::byte> joined(packet.begin(), packet.end());
    std::vector<std::byte> gathered(packet.begin(), packet.end());
    for (std::size_t i = 0; i < sources.size(); ++i) {
      const Source& s = sources[i];
      std::memcpy(joined.data() + s.offset, s.bytes.data(), s.bytes.size());
      std::memset(gathered.data() + s.offset, 0xa5, s.bytes.size());  // never read
      if (i > 0 && sources[i - 1].offset + sources[i - 1].bytes.size() == s.offset) {
        ++counts_->wrapped_chunks;
      }
    }
    in_place_.seal(number, header, joined);
    out_of_place_.seal_gather(number, header, gathered, sources);
    ++counts_->packets;
    if (gathered != joined) ++counts_->mismatches;
    wire_.seal_gather(number, header, packet, sources);  // the default: copy, then seal
  }
  std::optional<std::span<std::byte>> open(PacketNumber number, std::span<const std::byte> header,
                                           std::span<std::byte> packet) override {
    return wire_.open(number, header, packet);
  }

 private:
  TestProtection wire_;
  crypto::AeadKey out_of_place_;
  crypto::AeadKey in_place_;
  GatherCounts* counts_;
};

class SealGather : public ::testing::TestWithParam<crypto::Aead> {};

TEST_P(SealGather, StreamBytesSealedFromAWrappedRingMatchTheInPlacePath) {
  GatherCounts counts;
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.stream_send_buffer_bytes = 48 * 1024;  // not a power of two: the ring wraps
  o.protection = [&] { return std::make_unique<CheckingProtection>(GetParam(), &counts); };
  ConnectionPair pair(o);
  pair.set_filter([](bool from_client, std::size_t index, Duration*) {
    return from_client && index % 41 == 17 ? 0 : 1;  // retransmissions
  });
  auto id = *pair.client().open_stream(destination_at(3, 22), ContentClass::bulk, pair.now());
  const auto data = pattern(600'000, 22);
  pair.client_app().send(id, data, true);
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[id].fin; }));
  EXPECT_EQ(pair.hub_app().in[id].data, data);
  EXPECT_GT(pair.client().stats().stream_bytes_retransmitted, 0u);
  EXPECT_GT(counts.packets, 300u);  // every data packet (>= 400 of them)
  EXPECT_GT(counts.wrapped_chunks, 0u);
  EXPECT_EQ(counts.mismatches, 0u);
}

INSTANTIATE_TEST_SUITE_P(Aeads, SealGather,
                         ::testing::Values(crypto::Aead::chacha20_poly1305,
                                           crypto::Aead::aes_256_gcm),
                         [](const auto& info) {
                           return info.param == crypto::Aead::aes_256_gcm ? "AesGcm" : "ChaCha";
                         });

}  // namespace
}  // namespace egw::tunnel
