// The tunnel's AEADs through OpenSSL: ChaCha20-Poly1305 (RFC 8439), the
// Noise cipher of the handshake and the default of the data phase, and
// AES-256-GCM, which the data phase may negotiate when both ends have AES
// instructions (aead_offer.h). Both take a 96-bit nonce and add a 16-byte
// tag; the nonce is the Noise nonce of the cipher (Noise spec rev. 34 §12.3
// and §12.4: 32 zero bits, then the 64-bit counter, little-endian for
// ChaChaPoly, big-endian for AESGCM).
//
// Why a class: the transport path seals and opens every datagram, so the
// OpenSSL context is set up (cipher and key) once, and each call only re-inits
// the IV: seal() and open() allocate nothing. Both work in place, the way
// tunnel::PacketProtection does; seal_gather() also takes parts of the
// plaintext from elsewhere (a stream's send ring), encrypting them straight
// into the packet instead of copying them there first.
//
// The counter is the caller's: it must never repeat under one key, and Noise
// reserves 2^64-1 (§5.1). Not thread-safe (one context): one per thread or
// direction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "tunnel/crypto/keys.h"
#include "tunnel/seal_source.h"

namespace egw::tunnel::crypto {

struct ProviderCipher;

// The ids are the wire's (transport parameters version 3): never renumber.
enum class Aead : std::uint8_t { chacha20_poly1305 = 1, aes_256_gcm = 2 };

// "chacha20-poly1305", "aes-256-gcm" (the config's and the status' spelling).
std::string_view aead_name(Aead aead);

// Usage limits per key (RFC 9001 6.6 and Appendix B). Confidentiality:
// packets sealed under one key before it must be replaced (AES-GCM 2^23;
// ChaCha20-Poly1305 beyond any count: 2^62). Integrity: failed opens under
// one key after which the connection must end (AES-GCM 2^52, ChaCha 2^36).
std::uint64_t aead_confidentiality_limit(Aead aead);
std::uint64_t aead_integrity_limit(Aead aead);

class AeadKey {
 public:
  static constexpr std::size_t kTagBytes = 16;
  static constexpr std::size_t kNonceBytes = 12;

  AeadKey(Aead aead, const Key32& key);
  AeadKey(Aead aead, const SecretKey32& key) : AeadKey(aead, key.bytes) {}
  // Frees the context; OpenSSL wipes the key and state in it (OPENSSL_clear_free).
  // No other copy of the key is kept.
  ~AeadKey();
  AeadKey(const AeadKey&) = delete;
  AeadKey& operator=(const AeadKey&) = delete;

  Aead aead() const { return aead_; }

  // In place: `packet` holds the plaintext in its first size() - 16 bytes;
  // afterwards the ciphertext, then the 16-byte tag. `ad` is authenticated,
  // not encrypted. packet.size() must be at least 16 (aborts otherwise: a
  // caller bug).
  void seal(std::uint64_t counter, std::span<const std::byte> ad, std::span<std::byte> packet);

  // seal() where the plaintext bytes [offset, offset + bytes.size()) of each
  // source are not in `packet` but in `bytes`: they are encrypted from there
  // into the packet (out of place), the rest of the plaintext in place. The
  // ciphertext and tag are those seal() gives for the joined plaintext.
  // Sources are in ascending, non-overlapping order inside the plaintext
  // (aborts otherwise: a caller bug).
  using Source = SealSource;
  void seal_gather(std::uint64_t counter, std::span<const std::byte> ad, std::span<std::byte> packet,
                   std::span<const Source> sources);

  // In place: ciphertext then tag in; on true the plaintext is in the first
  // size() - 16 bytes. False when forged or corrupt (or shorter than the tag);
  // then the bytes may have been overwritten with unauthenticated plaintext
  // and must not be used.
  bool open(std::uint64_t counter, std::span<const std::byte> ad, std::span<std::byte> packet);

  // The same with a raw 96-bit nonce (seal/open are these with
  // nonce(aead, counter)): for test vectors whose nonce does not start with
  // 32 zero bits.
  void seal_with_nonce(const std::uint8_t (&nonce)[kNonceBytes], std::span<const std::byte> ad,
                       std::span<std::byte> packet);
  bool open_with_nonce(const std::uint8_t (&nonce)[kNonceBytes], std::span<const std::byte> ad,
                       std::span<std::byte> packet);

  // The Noise nonce of `aead` for a counter.
  static void nonce(Aead aead, std::uint64_t counter, std::uint8_t (&nonce)[kNonceBytes]);

 private:
  void seal_nonce_gather(const std::uint8_t (&nonce)[kNonceBytes], std::span<const std::byte> ad,
                         std::span<std::byte> packet, std::span<const Source> sources);

  void update(unsigned char* to, const unsigned char* from, std::size_t size);

  Aead aead_;
  const ProviderCipher* cipher_;  // the provider's functions (aead.cc)
  void* ctx_;                     // the provider's context: key and state
};

// ChaCha20-Poly1305: the handshake's ENCRYPT/DECRYPT and the cookie replies'.
class ChaChaPolyKey : public AeadKey {
 public:
  explicit ChaChaPolyKey(const Key32& key) : AeadKey(Aead::chacha20_poly1305, key) {}
  explicit ChaChaPolyKey(const SecretKey32& key) : ChaChaPolyKey(key.bytes) {}

  static void noise_nonce(std::uint64_t counter, std::uint8_t (&n)[kNonceBytes]) {
    nonce(Aead::chacha20_poly1305, counter, n);
  }
};

}  // namespace egw::tunnel::crypto
