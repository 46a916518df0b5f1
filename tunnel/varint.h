// QUIC variable-length integers (RFC 9000 section 16): the two most
// significant bits of the first byte give the encoded length (1, 2, 4 or 8
// bytes), the remaining 6, 14, 30 or 62 bits hold the value, big-endian.
// Shared by WireReader, WireWriter and the size arithmetic of frame_codec.
#pragma once

#include <cstddef>
#include <cstdint>

namespace egw::tunnel {

// Largest value a varint can carry: 2^62 - 1.
inline constexpr std::uint64_t kVarintMax = (std::uint64_t{1} << 62) - 1;

// Bytes of the shortest encoding of `value`; 0 when value > kVarintMax
// (not encodable: callers treat 0 as "does not fit").
constexpr std::size_t varint_size(std::uint64_t value) {
  if (value <= 63) return 1;
  if (value <= 16'383) return 2;
  if (value <= 1'073'741'823) return 4;
  if (value <= kVarintMax) return 8;
  return 0;
}

// Largest value the encoding of `size_bytes` (1, 2, 4 or 8) can carry.
constexpr std::uint64_t varint_max_for_size(std::size_t size_bytes) {
  switch (size_bytes) {
    case 1: return 63;
    case 2: return 16'383;
    case 4: return 1'073'741'823;
    default: return kVarintMax;
  }
}

}  // namespace egw::tunnel
