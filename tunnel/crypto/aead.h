// ChaCha20-Poly1305 (RFC 8439) with the Noise nonce (Noise spec rev. 34
// §12.3: 32 zero bits, then the 64-bit counter little-endian) — the
// transport cipher of the secure tunnel and the handshake's ENCRYPT/DECRYPT.
//
// Why a class: the transport path seals and opens every datagram, so the
// OpenSSL context is set up (cipher and key) once, and each call only re-inits
// the IV: seal() and open() allocate nothing. Both work in place, the way
// tunnel::PacketProtection does.
//
// The counter is the caller's: it must never repeat under one key, and Noise
// reserves 2^64-1 (§5.1). Not thread-safe (one context): one per thread or
// direction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "tunnel/crypto/keys.h"

// OpenSSL's type, without its headers in ours.
struct evp_cipher_ctx_st;

namespace egw::tunnel::crypto {

class ChaChaPolyKey {
 public:
  static constexpr std::size_t kTagBytes = 16;
  static constexpr std::size_t kNonceBytes = 12;

  explicit ChaChaPolyKey(const Key32& key);
  explicit ChaChaPolyKey(const SecretKey32& key) : ChaChaPolyKey(key.bytes) {}
  // Frees the context; OpenSSL wipes the key and state in it (OPENSSL_clear_free).
  // No other copy of the key is kept.
  ~ChaChaPolyKey();
  ChaChaPolyKey(const ChaChaPolyKey&) = delete;
  ChaChaPolyKey& operator=(const ChaChaPolyKey&) = delete;

  // In place: `packet` holds the plaintext in its first size() - 16 bytes;
  // afterwards the ciphertext, then the 16-byte tag. `ad` is authenticated,
  // not encrypted. packet.size() must be at least 16 (aborts otherwise: a
  // caller bug).
  void seal(std::uint64_t counter, std::span<const std::byte> ad, std::span<std::byte> packet);

  // In place: ciphertext then tag in; on true the plaintext is in the first
  // size() - 16 bytes. False when forged or corrupt (or shorter than the tag);
  // then the bytes may have been overwritten with unauthenticated plaintext
  // and must not be used.
  bool open(std::uint64_t counter, std::span<const std::byte> ad, std::span<std::byte> packet);

  // The same with a raw 96-bit RFC 8439 nonce (seal/open are these with
  // noise_nonce(counter)): for the RFC's test vector, whose nonce does not
  // start with 32 zero bits.
  void seal_with_nonce(const std::uint8_t (&nonce)[kNonceBytes], std::span<const std::byte> ad,
                       std::span<std::byte> packet);
  bool open_with_nonce(const std::uint8_t (&nonce)[kNonceBytes], std::span<const std::byte> ad,
                       std::span<std::byte> packet);

  // The Noise nonce for a counter.
  static void noise_nonce(std::uint64_t counter, std::uint8_t (&nonce)[kNonceBytes]);

 private:
  evp_cipher_ctx_st* ctx_;
};

}  // namespace egw::tunnel::crypto
