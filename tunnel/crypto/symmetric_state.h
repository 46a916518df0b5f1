// Noise's CipherState and SymmetricState (Noise spec rev. 34 §5.1, §5.2) for
// 25519/ChaChaPoly/SHA256: the hashing and key-mixing every handshake
// pattern is written in. NoiseIk (noise_ik.h) drives it token by token.
//
// Handshake-only: these allocate (vectors, OpenSSL contexts). The transport
// path uses ChaChaPolyKey directly with the keys from split().
//
// Plain copyable values (all secrets in SecretKey32), so a handshake can try
// a message on a copy and keep the state unchanged when it is rejected.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "tunnel/crypto/hash.h"
#include "tunnel/crypto/keys.h"

namespace egw::tunnel::crypto {

// §5.1: a key k (maybe empty) and a nonce n.
class CipherState {
 public:
  void initialize_key(const Key32& key);  // InitializeKey(k): n = 0
  bool has_key() const { return has_key_; }
  std::uint64_t nonce() const { return n_; }

  // EncryptWithAd / DecryptWithAd: without a key the text passes through.
  // nullopt: the nonce is exhausted (2^64-1 is reserved) or, for decrypt,
  // authentication failed (the nonce is then not incremented, §5.1).
  std::optional<std::vector<std::uint8_t>> encrypt_with_ad(Bytes ad, Bytes plaintext);
  std::optional<std::vector<std::uint8_t>> decrypt_with_ad(Bytes ad, Bytes ciphertext);

 private:
  SecretKey32 k_;
  bool has_key_ = false;
  std::uint64_t n_ = 0;
};

// §5.2: chaining key ck, handshake hash h, and a CipherState.
class SymmetricState {
 public:
  explicit SymmetricState(std::string_view protocol_name);  // InitializeSymmetric

  void mix_key(Bytes input_key_material);           // MixKey
  void mix_hash(Bytes data);                        // MixHash
  void mix_key_and_hash(Bytes input_key_material);  // MixKeyAndHash (the psk token)
  std::optional<std::vector<std::uint8_t>> encrypt_and_hash(Bytes plaintext);
  std::optional<std::vector<std::uint8_t>> decrypt_and_hash(Bytes ciphertext);
  // Split(): the initiator's sending key first, then the responder's.
  std::pair<SecretKey32, SecretKey32> split() const;

  const Key32& handshake_hash() const { return h_; }  // GetHandshakeHash()
  const CipherState& cipher() const { return cipher_; }

 private:
  SecretKey32 ck_;
  Key32 h_{};
  CipherState cipher_;
};

}  // namespace egw::tunnel::crypto
