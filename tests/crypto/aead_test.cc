// ChaChaPolyKey and AeadKey with AES-256-GCM: in-place seal/open, known
// answers, forgeries rejected, and no allocation on the transport path
// (OpenSSL's allocator hooked before its first use).
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

// Sealing and opening 1,000 packets, and failing to open forged ones,
// allocates nothing in OpenSSL (after a warm-up: lazy provider state).
template <class Key>
void expect_seal_and_open_do_not_allocate(Key& aead) {
  std::vector<std::byte> packet(1400 + Key::kTagBytes);
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

TEST(CryptoChaChaPolyKey, SealAndOpenDoNotAllocate) {
  ASSERT_TRUE(hooks_installed) << "CRYPTO_set_mem_functions failed: OpenSSL allocated before main";
  ChaChaPolyKey aead(kKey);
  expect_seal_and_open_do_not_allocate(aead);
}

// AES-256-GCM: the GCM specification's test cases 14 and 16 (McGrew and
// Viega, AES-256, 96-bit IV), sealed and opened in place.
TEST(CryptoAesGcmKey, KnownAnswers) {
  struct Vector {
    const char *key, *iv, *ad, *plaintext, *ciphertext, *tag;
  };
  const Vector vectors[] = {
      {"0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000", "",
       "00000000000000000000000000000000", "cea7403d4d606b6e074ec5d3baf39d18", "d0d1c8a799996bf0265b98b5d48ab919"},
      {"feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
       "feedfacedeadbeeffeedfacedeadbeefabaddad2",
       "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de6"
       "57ba637b39",
       "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a"
       "0abcc9f662",
       "76fc6ece0f4e1768cddf8853bb2d551b"},
  };
  for (const Vector& v : vectors) {
    AeadKey aead(Aead::aes_256_gcm, key_from_hex(v.key));
    const auto iv = test::from_hex(v.iv);
    std::uint8_t nonce[AeadKey::kNonceBytes];
    std::copy(iv.begin(), iv.end(), nonce);
    const auto ad = test::from_hex(v.ad);
    auto packet = test::from_hex(v.plaintext);
    packet.resize(packet.size() + AeadKey::kTagBytes);
    aead.seal_with_nonce(nonce, std::as_bytes(std::span(ad)), std::as_writable_bytes(std::span(packet)));
    EXPECT_EQ(test::to_hex(packet), std::string(v.ciphertext) + v.tag);
    ASSERT_TRUE(aead.open_with_nonce(nonce, std::as_bytes(std::span(ad)), std::as_writable_bytes(std::span(packet))));
    EXPECT_EQ(test::to_hex(std::span(packet).first(packet.size() - AeadKey::kTagBytes)), v.plaintext);
  }
}

// The Noise AESGCM nonce (§12.4): 32 zero bits, the counter big-endian;
// ChaChaPoly's is little-endian (§12.3).
TEST(CryptoAesGcmKey, NoiseNonceIsBigEndian) {
  std::uint8_t n[AeadKey::kNonceBytes];
  AeadKey::nonce(Aead::aes_256_gcm, 0x0102030405060708ULL, n);
  EXPECT_EQ(test::to_hex(n), "000000000102030405060708");
  AeadKey::nonce(Aead::chacha20_poly1305, 0x0102030405060708ULL, n);
  EXPECT_EQ(test::to_hex(n), "000000000807060504030201");
}

TEST(CryptoAesGcmKey, RoundTripTamperAndCrossCipherRejected) {
  AeadKey sender(Aead::aes_256_gcm, kKey);
  AeadKey receiver(Aead::aes_256_gcm, kKey);
  const std::byte ad[] = {std::byte{9}, std::byte{8}};
  for (const std::size_t size : {0, 1, 16, 17, 1400, 65519}) {
    std::vector<std::byte> packet(size + AeadKey::kTagBytes);
    for (std::size_t i = 0; i < size; ++i) packet[i] = std::byte(i * 7);
    sender.seal(42, ad, packet);
    ASSERT_TRUE(receiver.open(42, ad, packet)) << size;
    for (std::size_t i = 0; i < size; ++i) ASSERT_EQ(packet[i], std::byte(i * 7)) << size;
  }
  std::vector<std::byte> good(40 + AeadKey::kTagBytes);
  sender.seal(7, ad, good);
  for (std::size_t i = 0; i < good.size(); ++i) {  // every ciphertext and tag byte
    std::vector<std::byte> packet = good;
    packet[i] ^= std::byte{0x01};
    EXPECT_FALSE(receiver.open(7, ad, packet)) << i;
  }
  std::vector<std::byte> packet = good;
  EXPECT_FALSE(receiver.open(8, ad, packet));  // another counter
  packet = good;
  EXPECT_FALSE(receiver.open(7, {}, packet));  // other AD
  packet = good;
  ChaChaPolyKey chacha(kKey);  // same key, the other AEAD
  EXPECT_FALSE(chacha.open(7, ad, packet));
  packet = good;
  EXPECT_TRUE(receiver.open(7, ad, packet));  // still opens after the failures
}

TEST(CryptoAesGcmKey, SealAndOpenDoNotAllocate) {
  ASSERT_TRUE(hooks_installed) << "CRYPTO_set_mem_functions failed: OpenSSL allocated before main";
  AeadKey aead(Aead::aes_256_gcm, kKey);
  expect_seal_and_open_do_not_allocate(aead);
}

// seal_gather: plaintext parts taken from elsewhere (a wrapped ring's two
// spans, adjacent, at the start, at the end, odd lengths across block
// boundaries) give the ciphertext and tag of seal() over the joined
// plaintext, for both AEADs; the packet's bytes under the sources are never read.
TEST(CryptoAead, SealGatherMatchesSealInPlace) {
  struct Layout {
    std::size_t text_bytes;
    std::vector<std::pair<std::size_t, std::size_t>> sources;  // offset, size
  };
  const std::vector<Layout> layouts = {
      {1200, {{13, 1187}}},                       // frame header, then one chunk to the end
      {1200, {{13, 700}, {713, 487}}},            // a wrapped ring: two adjacent spans
      {1200, {{0, 64}, {64, 1}, {100, 1100}}},    // at the start, one byte, at the end
      {1372, {{9, 5}, {30, 333}, {370, 900}}},    // gaps in place between sources
      {64, {}},                                   // none: seal() itself
      {500, {{17, 0}, {17, 483}}},                // an empty source
  };
  for (const Aead which : {Aead::chacha20_poly1305, Aead::aes_256_gcm}) {
    AeadKey gather(which, kKey), in_place(which, kKey);
    const std::byte ad[13] = {std::byte{1}, std::byte{2}, std::byte{3}};
    std::uint64_t counter = 5;
    for (const Layout& l : layouts) {
      std::vector<std::byte> joined(l.text_bytes + AeadKey::kTagBytes);
      for (std::size_t i = 0; i < joined.size(); ++i) joined[i] = std::byte(i * 13 + 1);
      std::vector<std::byte> gathered = joined;
      std::vector<std::vector<std::byte>> held;  // the sources' bytes, elsewhere
      std::vector<AeadKey::Source> sources;
      held.reserve(l.sources.size());
      for (const auto& [offset, size] : l.sources) {
        held.emplace_back(joined.begin() + static_cast<std::ptrdiff_t>(offset),
                          joined.begin() + static_cast<std::ptrdiff_t>(offset + size));
        std::memset(gathered.data() + offset, 0xee, size);
        sources.push_back({offset, held.back()});
      }
      in_place.seal(counter, ad, joined);
      gather.seal_gather(counter, ad, gathered, sources);
      EXPECT_EQ(gathered, joined) << aead_name(which) << " layout of " << l.text_bytes;
      ASSERT_TRUE(in_place.open(counter, ad, gathered));
      ++counter;
    }
  }
}

// Out of place allocates nothing either (the transport path's seal).
TEST(CryptoAead, SealGatherDoesNotAllocate) {
  ASSERT_TRUE(hooks_installed);
  for (const Aead which : {Aead::chacha20_poly1305, Aead::aes_256_gcm}) {
    AeadKey aead(which, kKey);
    std::vector<std::byte> packet(1400 + AeadKey::kTagBytes), ring(4096);
    const AeadKey::Source sources[2] = {{20, std::span(ring).last(500)},
                                        {520, std::span(ring).first(800)}};
    aead.seal_gather(0, {}, packet, sources);  // warm up
    const long before = openssl_allocations.load();
    for (std::uint64_t counter = 1; counter < 500; ++counter) aead.seal_gather(counter, {}, packet, sources);
    EXPECT_EQ(openssl_allocations.load() - before, 0) << aead_name(which);
  }
}

TEST(CryptoAead, UsageLimitsPerRfc9001) {
  EXPECT_EQ(aead_confidentiality_limit(Aead::aes_256_gcm), std::uint64_t{1} << 23);
  EXPECT_EQ(aead_integrity_limit(Aead::aes_256_gcm), std::uint64_t{1} << 52);
  EXPECT_EQ(aead_integrity_limit(Aead::chacha20_poly1305), std::uint64_t{1} << 36);
  EXPECT_EQ(aead_name(Aead::aes_256_gcm), "aes-256-gcm");
  EXPECT_EQ(aead_name(Aead::chacha20_poly1305), "chacha20-poly1305");
}

}  // namespace
}  // namespace egw::tunnel::crypto
