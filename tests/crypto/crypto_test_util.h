// Helpers for the crypto tests: hex, and the path of files next to the tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tunnel/crypto/keys.h"

namespace egw::tunnel::crypto::test {

inline std::vector<std::uint8_t> from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) throw std::invalid_argument("odd hex length");
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw std::invalid_argument("bad hex digit");
  };
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  }
  return out;
}

inline Key32 key_from_hex(std::string_view hex) {
  const auto bytes = from_hex(hex);
  if (bytes.size() != 32) throw std::invalid_argument("a key is 32 bytes");
  Key32 key;
  std::copy(bytes.begin(), bytes.end(), key.begin());
  return key;
}

inline std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

inline std::string to_hex(std::span<const std::byte> bytes) {
  return to_hex(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

// tests/crypto/ in the source tree, from the build (not __FILE__, which a
// compiler cache with a base directory makes relative).
inline std::string test_dir() { return EGW_CRYPTO_TEST_DIR; }

}  // namespace egw::tunnel::crypto::test
