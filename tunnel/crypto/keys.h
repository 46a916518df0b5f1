// X25519 keys for the secure tunnel's Noise handshake (Noise spec rev. 34
// §12.1: DH25519). Every operation goes through OpenSSL's EVP X25519; nothing
// here implements curve arithmetic.
//
// Key32 is a plain value (public keys, handshake hashes). SecretKey32 is the
// same 32 bytes in a wrapper that wipes them (OPENSSL_cleanse) when it dies:
// hold private keys, pre-shared keys and symmetric keys in it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

namespace egw::tunnel::crypto {

using Key32 = std::array<std::uint8_t, 32>;

// 32 secret bytes, wiped on destruction and before being overwritten by
// assignment. Copyable (each copy wipes itself); compare with CRYPTO_memcmp
// if ever needed, never operator==.
struct SecretKey32 {
  Key32 bytes{};

  SecretKey32() = default;
  explicit SecretKey32(const Key32& key) : bytes(key) {}
  SecretKey32(const SecretKey32& other) = default;
  SecretKey32& operator=(const SecretKey32& other);
  SecretKey32& operator=(const Key32& key);
  ~SecretKey32();

  // Wipes the bytes now (all zero afterwards).
  void wipe();
};

// A private (or pre-shared) key held once and shared by every copy of the
// configs that name it (a reload's new config, each Endpoint's identity and
// peers), wiped when the last copy goes: copying a config does not copy the key. Assigning a Key32 makes
// a new shared key (the old one is left to its other holders).
class SharedSecretKey {
 public:
  SharedSecretKey() = default;
  SharedSecretKey(const Key32& key)  // NOLINT: implicit, as the Key32 it replaces
      : key_(std::make_shared<const SecretKey32>(key)) {}
  SharedSecretKey& operator=(const Key32& key) {
    key_ = std::make_shared<const SecretKey32>(key);
    return *this;
  }
  // The key (all zero when none was assigned).
  const Key32& get() const { return key_ ? key_->bytes : kZero; }
  // Constant-time comparison of the bytes (CRYPTO_memcmp).
  bool operator==(const SharedSecretKey& other) const;

 private:
  static constexpr Key32 kZero{};
  std::shared_ptr<const SecretKey32> key_;
};

// Wipes any buffer (OPENSSL_cleanse: not optimised away).
void secure_wipe(void* data, std::size_t size);

// A fresh private key: 32 bytes from RAND_bytes, clamped as RFC 7748 §5 and
// `wg genkey` do (OpenSSL clamps again inside X25519; clamping here makes the
// stored key identical to WireGuard's). Aborts if the RNG fails (no entropy:
// nothing safe to do).
Key32 x25519_generate_private();

// The public key of a private key (RFC 7748 X25519(k, 9)).
Key32 x25519_public_key(const Key32& private_key);

// The shared secret X25519(private_key, peer_public); nullopt when the result
// is all zero, i.e. the peer sent a low-order point (Noise §12.1 allows, and
// WireGuard requires, rejecting it). Everything from the network must go
// through this check.
std::optional<Key32> x25519(const Key32& private_key, const Key32& peer_public);

}  // namespace egw::tunnel::crypto
