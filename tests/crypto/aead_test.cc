// ChaChaPolyKey: in-place seal/open, forgeries rejected, and no allocation on
// the transport path (OpenSSL's allocator hooked before its first use).
#include <gtest/gtest.h>
#include <openssl/crypto.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tests/crypto/crypto_test_util.h"
#include "tunnel/crypto/aead.h"

namespace egw::tunnel::crypto {
namespace {

using test::key_from_hex;

// Counts OpenSSL's allocations. Hooks can only be installed before OpenSSL
// allocates anything, hence a static initialiser (this binary touches
// OpenSSL only from test bodies).
std::atomic<long> openssl_allocations{0};
void* counting_malloc(std::size_t size, const char*, int) {
  ++openssl_allocations;
  return std::malloc(size);
}
void* counting_realloc(void* p, std::size_t size, const char*, int) {
  ++openssl_allocations;
  return std::realloc(p, size);
}
void counting_free(void* p, const char*, int) { std::free(p); }
const bool hooks_installed =
    CRYPTO_set_mem_functions(counting_malloc, counting_realloc, counting_free) == 1;

const Key32 kKey = key_from_hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");

std::vector<std::byte> sealed(ChaChaPolyKey& aead, std::uint64_t counter,
                              std::span<const std::byte> ad, std::size_t plaintext_size) {
  std::vector<std::byte> packet(plaintext_size + ChaChaPolyKey::kTagBytes);
  for (std::size_t i = 0; i < plaintext_size; ++i) packet[i] = std::byte(i * 7);
  aead.seal(counter, ad, packet);
  return packet;
}

TEST(CryptoChaChaPolyKey, SealThenOpenInPlace) {
  ChaChaPolyKey sender(kKey);
  ChaChaPolyKey receiver(kKey);
  const std::byte ad[] = {std::byte{1}, std::byte{2}, std::byte{3}};
  for (const std::size_t size : {0, 1, 15, 16, 17, 64, 1400, 65519}) {
    std::vector<std::byte> packet = sealed(sender, 42, ad, size);
    bool differs = size == 0;
    for (std::size_t i = 0; i < size; ++i) differs |= packet[i] != std::byte(i * 7);
    EXPECT_TRUE(differs) << size;
    ASSERT_TRUE(receiver.open(42, ad, packet)) << size;
    for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(packet[i], std::byte(i * 7)) << size;
  }
}

TEST(CryptoChaChaPolyKey, SealAndOpenAlternateOnOneKey) {
  // One context serves both directions (the IV and direction re-set per call).
  ChaChaPolyKey aead(kKey);
  for (std::uint64_t counter = 0; counter < 5; ++counter) {
    std::vector<std::byte> packet = sealed(aead, counter, {}, 100);
    ASSERT_TRUE(aead.open(counter, {}, packet));
  }
}

TEST(CryptoChaChaPolyKey, TamperedCiphertextTagAdCounterOrKeyRejected) {
  ChaChaPolyKey aead(kKey);
  const std::byte ad[] = {std::byte{9}, std::byte{8}};
  const std::vector<std::byte> good = sealed(aead, 7, ad, 40);
  for (std::size_t i = 0; i < good.size(); ++i) {  // every ciphertext and tag byte
    std::vector<std::byte> packet = good;
    packet[i] ^= std::byte{0x01};
    EXPECT_FALSE(aead.open(7, ad, packet)) << i;
  }
  std::vector<std::byte> packet = good;
  const std::byte other_ad[] = {std::byte{9}, std::byte{9}};
  EXPECT_FALSE(aead.open(7, other_ad, packet));
  packet = good;
  EXPECT_FALSE(aead.open(7, {}, packet));
  packet = good;
  EXPECT_FALSE(aead.open(8, ad, packet));
  packet = good;
  ChaChaPolyKey other(key_from_hex("ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"));
  EXPECT_FALSE(other.open(7, ad, packet));
  packet = good;
  EXPECT_FALSE(aead.open(7, ad, std::span(packet).first(ChaChaPolyKey::kTagBytes - 1)));
  packet = good;
  EXPECT_FALSE(aead.open(7, ad, std::span(packet).first(packet.size() - 1)));
  // And the untouched packet still opens after all those failures.
  packet = good;
  EXPECT_TRUE(aead.open(7, ad, packet));
}

TEST(CryptoChaChaPolyKey, SealAndOpenDoNotAllocate) {
  ASSERT_TRUE(hooks_installed) << "CRYPTO_set_mem_functions failed: OpenSSL allocated before main";
  ChaChaPolyKey aead(kKey);
  std::vector<std::byte> packet(1400 + ChaChaPolyKey::kTagBytes);
  const std::byte ad[16] = {};
  aead.seal(0, ad, packet);  // warm up (lazy provider initialisation, if any)
  ASSERT_TRUE(aead.open(0, ad, packet));
  std::vector<std::byte> forged = packet;
  const long before = openssl_allocations.load();
  for (std::uint64_t counter = 1; counter < 1000; ++counter) {
    aead.seal(counter, ad, packet);
    ASSERT_TRUE(aead.open(counter, ad, packet));
    forged[3] ^= std::byte{1};
    ASSERT_FALSE(aead.open(counter, ad, forged));  // the failure path too
  }
  EXPECT_EQ(openssl_allocations.load() - before, 0);
}

}  // namespace
}  // namespace egw::tunnel::crypto
