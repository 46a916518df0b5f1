#include "tunnel/crypto/symmetric_state.h"

#include <algorithm>
#include <limits>

#include "tunnel/crypto/aead.h"

namespace egw::tunnel::crypto {
namespace {

std::span<const std::byte> as_byte_span(Bytes bytes) { return std::as_bytes(bytes); }

}  // namespace

void CipherState::initialize_key(const Key32& key) {
  k_.bytes = key;
  has_key_ = true;
  n_ = 0;
}

std::optional<std::vector<std::uint8_t>> CipherState::encrypt_with_ad(Bytes ad, Bytes plaintext) {
  if (!has_key_) return std::vector<std::uint8_t>(plaintext.begin(), plaintext.end());
  if (n_ == std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
  std::vector<std::uint8_t> out(plaintext.size() + ChaChaPolyKey::kTagBytes);
  std::copy(plaintext.begin(), plaintext.end(), out.begin());
  ChaChaPolyKey(k_.bytes).seal(n_, as_byte_span(ad), std::as_writable_bytes(std::span(out)));
  ++n_;
  return out;
}

std::optional<std::vector<std::uint8_t>> CipherState::decrypt_with_ad(Bytes ad, Bytes ciphertext) {
  if (!has_key_) return std::vector<std::uint8_t>(ciphertext.begin(), ciphertext.end());
  if (n_ == std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
  if (ciphertext.size() < ChaChaPolyKey::kTagBytes) return std::nullopt;
  std::vector<std::uint8_t> out(ciphertext.begin(), ciphertext.end());
  if (!ChaChaPolyKey(k_.bytes).open(n_, as_byte_span(ad), std::as_writable_bytes(std::span(out)))) {
    secure_wipe(out.data(), out.size());
    return std::nullopt;
  }
  out.resize(out.size() - ChaChaPolyKey::kTagBytes);
  ++n_;
  return out;
}

SymmetricState::SymmetricState(std::string_view protocol_name) {
  // §5.2: a name of at most HASHLEN bytes is padded with zeros, else hashed.
  if (protocol_name.size() <= h_.size()) {
    std::copy(protocol_name.begin(), protocol_name.end(), h_.begin());
  } else {
    h_ = sha256(Bytes(reinterpret_cast<const std::uint8_t*>(protocol_name.data()),
                      protocol_name.size()));
  }
  ck_.bytes = h_;
}

void SymmetricState::mix_key(Bytes input_key_material) {
  const auto [ck, temp_k] = hkdf2(ck_.bytes, input_key_material);
  ck_ = ck;
  cipher_.initialize_key(temp_k.bytes);
}

void SymmetricState::mix_hash(Bytes data) { h_ = sha256(h_, data); }

void SymmetricState::mix_key_and_hash(Bytes input_key_material) {
  const auto [ck, temp_h, temp_k] = hkdf3(ck_.bytes, input_key_material);
  ck_ = ck;
  mix_hash(temp_h.bytes);
  cipher_.initialize_key(temp_k.bytes);
}

std::optional<std::vector<std::uint8_t>> SymmetricState::encrypt_and_hash(Bytes plaintext) {
  auto ciphertext = cipher_.encrypt_with_ad(h_, plaintext);
  if (ciphertext) mix_hash(*ciphertext);
  return ciphertext;
}

std::optional<std::vector<std::uint8_t>> SymmetricState::decrypt_and_hash(Bytes ciphertext) {
  auto plaintext = cipher_.decrypt_with_ad(h_, ciphertext);
  if (plaintext) mix_hash(ciphertext);
  return plaintext;
}

std::pair<SecretKey32, SecretKey32> SymmetricState::split() const {
  const auto [k1, k2] = hkdf2(ck_.bytes, Bytes());
  return {k1, k2};
}

}  // namespace egw::tunnel::crypto
