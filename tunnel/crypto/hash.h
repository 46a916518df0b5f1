// SHA-256, HMAC-SHA256 and the Noise HKDF (Noise spec rev. 34 §4.3 HASH and
// HMAC, §4.3 HKDF with two and three outputs), all from OpenSSL. Used by the
// handshake only: these functions may allocate (OpenSSL contexts).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "tunnel/crypto/keys.h"

namespace egw::tunnel::crypto {

using Bytes = std::span<const std::uint8_t>;

// SHA-256 of the concatenation of `parts`.
Key32 sha256_parts(std::span<const Bytes> parts);

// SHA-256 of the concatenation of its arguments (anything convertible to a
// span of const bytes: Key32, std::vector<std::uint8_t>, spans).
template <class... Parts>
Key32 sha256(const Parts&... parts) {
  const std::array<Bytes, sizeof...(Parts)> spans{Bytes(parts)...};
  return sha256_parts(spans);
}

// HMAC-SHA256(key, data) (RFC 2104).
Key32 hmac_sha256(Bytes key, Bytes data);

// Noise HKDF(chaining_key, input_key_material, n) for n = 2 and 3 (§4.3):
//   temp_key = HMAC(chaining_key, ikm)
//   output1  = HMAC(temp_key, 0x01)
//   output2  = HMAC(temp_key, output1 || 0x02)
//   output3  = HMAC(temp_key, output2 || 0x03)
// The outputs are secrets: callers store them in SecretKey32.
std::array<SecretKey32, 2> hkdf2(const Key32& chaining_key, Bytes input_key_material);
std::array<SecretKey32, 3> hkdf3(const Key32& chaining_key, Bytes input_key_material);

}  // namespace egw::tunnel::crypto
