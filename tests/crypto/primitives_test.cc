// Published vectors for the primitives under the Noise handshake: X25519
// (RFC 7748 §5.2, §6.1), ChaCha20-Poly1305 (RFC 8439 §2.8.2), SHA-256
// (FIPS 180-2 "abc"), HMAC-SHA256 (RFC 4231 test case 2).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "tests/crypto/crypto_test_util.h"
#include "tunnel/crypto/aead.h"
#include "tunnel/crypto/hash.h"
#include "tunnel/crypto/keys.h"

namespace egw::tunnel::crypto {
namespace {

using test::from_hex;
using test::key_from_hex;
using test::to_hex;

TEST(CryptoX25519, Rfc7748Section5_2Vectors) {
  const auto one = x25519(key_from_hex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4"),
                          key_from_hex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c"));
  ASSERT_TRUE(one);
  EXPECT_EQ(to_hex(*one), "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552");
  // The u-coordinate's top bit is set: X25519 must ignore it (RFC 7748 §5).
  const auto two = x25519(key_from_hex("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d"),
                          key_from_hex("e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493"));
  ASSERT_TRUE(two);
  EXPECT_EQ(to_hex(*two), "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957");
}

TEST(CryptoX25519, Rfc7748Section6_1DiffieHellman) {
  const Key32 alice = key_from_hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
  const Key32 bob = key_from_hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
  EXPECT_EQ(to_hex(x25519_public_key(alice)),
            "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
  EXPECT_EQ(to_hex(x25519_public_key(bob)),
            "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
  const auto ab = x25519(alice, x25519_public_key(bob));
  const auto ba = x25519(bob, x25519_public_key(alice));
  ASSERT_TRUE(ab && ba);
  EXPECT_EQ(to_hex(*ab), "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
  EXPECT_EQ(*ab, *ba);
}

// Points of small order on Curve25519 and its twist (the list WireGuard's and
// libsodium's blocklists share): X25519 with any of them is all zero.
TEST(CryptoX25519, LowOrderPointsAreRejected) {
  const char* const points[] = {
      "0000000000000000000000000000000000000000000000000000000000000000",
      "0100000000000000000000000000000000000000000000000000000000000000",
      "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
      "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
      "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
      "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
      "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  };
  const Key32 own = x25519_generate_private();
  for (const char* point : points) {
    EXPECT_FALSE(x25519(own, key_from_hex(point))) << point;
  }
}

TEST(CryptoX25519, GeneratedKeysAreClampedAndAgree) {
  const Key32 a = x25519_generate_private();
  const Key32 b = x25519_generate_private();
  EXPECT_NE(a, b);
  EXPECT_EQ(a[0] & 7, 0);
  EXPECT_EQ(a[31] & 0xc0, 0x40);
  EXPECT_EQ(x25519(a, x25519_public_key(b)), x25519(b, x25519_public_key(a)));
}

TEST(CryptoAead, Rfc8439Section2_8_2Vector) {
  const Key32 key = key_from_hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
  const std::uint8_t nonce[12] = {0x07, 0, 0, 0, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47};
  const auto ad = from_hex("50515253c0c1c2c3c4c5c6c7");
  const std::string plaintext =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
      "future, sunscreen would be it.";
  std::vector<std::byte> packet(plaintext.size() + 16);
  std::memcpy(packet.data(), plaintext.data(), plaintext.size());
  ChaChaPolyKey aead(key);
  aead.seal_with_nonce(nonce, std::as_bytes(std::span(ad)), packet);
  EXPECT_EQ(to_hex(packet),
            "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
            "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
            "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
            "3ff4def08e4b7a9de576d26586cec64b6116"
            "1ae10b594f09e26a7e902ecbd0600691");
  ASSERT_TRUE(aead.open_with_nonce(nonce, std::as_bytes(std::span(ad)), packet));
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(packet.data()), plaintext.size()), plaintext);
}

TEST(CryptoAead, NoiseNonceIsZeroThenLittleEndianCounter) {
  std::uint8_t nonce[12];
  ChaChaPolyKey::noise_nonce(0x0102030405060708ULL, nonce);
  EXPECT_EQ(to_hex(std::span<const std::uint8_t>(nonce, 12)), "000000000807060504030201");
}

TEST(CryptoHash, Sha256AndHmacVectors) {
  const std::string abc = "abc";
  const auto abc_bytes = std::span(reinterpret_cast<const std::uint8_t*>(abc.data()), abc.size());
  EXPECT_EQ(to_hex(sha256(abc_bytes)),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // The same bytes in several parts hash the same.
  EXPECT_EQ(sha256(abc_bytes.first(1), abc_bytes.subspan(1)), sha256(abc_bytes));
  // RFC 4231 §4.3 (test case 2): key "Jefe".
  const std::string key = "Jefe";
  const std::string data = "what do ya want for nothing?";
  EXPECT_EQ(to_hex(hmac_sha256(
                std::span(reinterpret_cast<const std::uint8_t*>(key.data()), key.size()),
                std::span(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()))),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(CryptoHash, HkdfMatchesItsDefinition) {
  // Noise §4.3 HKDF written out with hmac_sha256.
  const Key32 ck = sha256(std::span<const std::uint8_t>());
  const auto ikm = from_hex("0102030405");
  const Key32 temp = hmac_sha256(ck, ikm);
  const std::uint8_t one = 1;
  const Key32 out1 = hmac_sha256(temp, std::span(&one, 1));
  std::vector<std::uint8_t> block(out1.begin(), out1.end());
  block.push_back(2);
  const Key32 out2 = hmac_sha256(temp, block);
  block.assign(out2.begin(), out2.end());
  block.push_back(3);
  const Key32 out3 = hmac_sha256(temp, block);
  const auto two = hkdf2(ck, ikm);
  const auto three = hkdf3(ck, ikm);
  EXPECT_EQ(two[0].bytes, out1);
  EXPECT_EQ(two[1].bytes, out2);
  EXPECT_EQ(three[0].bytes, out1);
  EXPECT_EQ(three[1].bytes, out2);
  EXPECT_EQ(three[2].bytes, out3);
}

TEST(CryptoKeys, SecretKeyWipes) {
  SecretKey32 secret(key_from_hex("0101010101010101010101010101010101010101010101010101010101010101"));
  secret.wipe();
  EXPECT_EQ(secret.bytes, Key32{});
}

}  // namespace
}  // namespace egw::tunnel::crypto
