// The data-phase AEAD offer and choice (tunnel/crypto/aead_offer.h), the
// wire's AEAD slots, and the CPU test behind `cipher: auto`.
#include "tunnel/crypto/aead_offer.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "tunnel/crypto/cpu_features.h"

namespace egw::tunnel::crypto {
namespace {

constexpr Aead kAes = Aead::aes_256_gcm;
constexpr Aead kChaCha = Aead::chacha20_poly1305;

TEST(AeadOffer, ListsPerSettingAndCpu) {
  EXPECT_EQ(aead_offer(CipherSetting::automatic, true), (AeadList{kAes, kChaCha}));
  EXPECT_EQ(aead_offer(CipherSetting::automatic, false), (AeadList{kChaCha}));
  for (const bool aes : {true, false}) {
    EXPECT_EQ(aead_offer(CipherSetting::chacha20_poly1305, aes), (AeadList{kChaCha}));
    EXPECT_EQ(aead_offer(CipherSetting::aes_256_gcm, aes), (AeadList{kAes}));
  }
  EXPECT_TRUE(aead_offer(CipherSetting::automatic, false).is_chacha_only());
  EXPECT_FALSE(aead_offer(CipherSetting::automatic, true).is_chacha_only());
  EXPECT_EQ(aead_offer(CipherSetting::automatic, true).to_string(), "aes-256-gcm,chacha20-poly1305");
}

// The initiator's order decides among what the responder supports.
TEST(AeadOffer, ResponderTakesTheFirstOfferedItSupports) {
  EXPECT_EQ(choose_aead({kAes, kChaCha}, {kAes, kChaCha}), kAes);
  EXPECT_EQ(choose_aead({kChaCha, kAes}, {kAes, kChaCha}), kChaCha);
  EXPECT_EQ(choose_aead({kAes, kChaCha}, {kChaCha}), kChaCha);
  EXPECT_EQ(choose_aead({kChaCha}, {kAes, kChaCha}), kChaCha);
  EXPECT_EQ(choose_aead({kAes}, {kChaCha}), std::nullopt);
  EXPECT_EQ(choose_aead({kChaCha}, {kAes}), std::nullopt);
  EXPECT_EQ(choose_aead({}, {kAes, kChaCha}), std::nullopt);
}

TEST(AeadOffer, WireSlotsRoundTripAndSkipUnknownIds) {
  const AeadList list{kAes, kChaCha};
  const auto slots = encode_aead_list(list);
  EXPECT_EQ(slots, (std::array<std::uint8_t, 4>{2, 1, 0, 0}));
  EXPECT_EQ(decode_aead_list(slots), list);
  // A newer peer's id 9 first, a repeat and zeros in between: what this
  // build knows, in order, once each.
  const std::array<std::uint8_t, 4> newer{9, 0, 1, 1};
  EXPECT_EQ(decode_aead_list(newer), (AeadList{kChaCha}));
  EXPECT_EQ(decode_aead_list(std::array<std::uint8_t, 4>{}).count, 0u);
}

// Honest detection: on Linux x86-64, the answer is /proc/cpuinfo's "aes"
// and "pclmulqdq" flags (the test runs without OPENSSL_ia32cap).
TEST(CpuFeatures, MatchesProcCpuinfo) {
#if defined(__x86_64__) && defined(__linux__)
  if (std::getenv("OPENSSL_ia32cap")) GTEST_SKIP() << "OPENSSL_ia32cap set";
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  bool aes = false, pclmul = false;
  while (std::getline(in, line)) {
    if (!line.starts_with("flags")) continue;
    aes = line.find(" aes") != std::string::npos;
    pclmul = line.find(" pclmulqdq") != std::string::npos;
    break;
  }
  EXPECT_EQ(cpu_has_aes_gcm_instructions(), aes && pclmul);
#else
  GTEST_SKIP() << "x86-64 Linux only";
#endif
}

}  // namespace
}  // namespace egw::tunnel::crypto
