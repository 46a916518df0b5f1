// WireReader: a cursor over untrusted bytes (quiche QuicDataReader style).
// Every read either returns the whole value and advances, or returns
// nullopt and leaves the cursor where it was: a failed read never consumes
// input and never touches memory past the end of the span.
// Integers are big-endian (network order); varints follow RFC 9000 section 16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace egw::tunnel {

class WireReader {
 public:
  explicit WireReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  std::optional<std::uint8_t> read_u8();
  std::optional<std::uint16_t> read_u16();
  std::optional<std::uint32_t> read_u32();
  std::optional<std::uint64_t> read_u64();
  // Accepts any of the four lengths, including non-minimal encodings
  // (RFC 9000 section 16 permits them); the value is <= kVarintMax.
  std::optional<std::uint64_t> read_varint();
  // A view of the next `length_bytes` bytes (aliasing the input).
  std::optional<std::span<const std::byte>> read_bytes(std::uint64_t length_bytes);

  std::optional<std::uint8_t> peek_u8() const;
  std::size_t remaining() const { return bytes_.size() - position_; }
  bool empty() const { return remaining() == 0; }
  std::size_t position() const { return position_; }
  // The unread bytes (no advance).
  std::span<const std::byte> rest() const { return bytes_.subspan(position_); }

 private:
  // Big-endian unsigned integer of `width_bytes` (<= 8) bytes.
  std::optional<std::uint64_t> read_be(std::size_t width_bytes);

  std::span<const std::byte> bytes_;
  std::size_t position_ = 0;  // invariant: position_ <= bytes_.size()
};

// Defined here, inline: the packet path parses and writes every frame with
// these (out of line they were ~5 % of a hub's CPU at 8 Gbit/s).


inline std::optional<std::uint64_t> WireReader::read_be(std::size_t width_bytes) {
  if (remaining() < width_bytes) return std::nullopt;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width_bytes; ++i) {
    value = (value << 8) | std::to_integer<std::uint64_t>(bytes_[position_ + i]);
  }
  position_ += width_bytes;
  return value;
}

inline std::optional<std::uint8_t> WireReader::read_u8() {
  auto v = read_be(1);
  if (!v) return std::nullopt;
  return static_cast<std::uint8_t>(*v);
}

inline std::optional<std::uint16_t> WireReader::read_u16() {
  auto v = read_be(2);
  if (!v) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}

inline std::optional<std::uint32_t> WireReader::read_u32() {
  auto v = read_be(4);
  if (!v) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

inline std::optional<std::uint64_t> WireReader::read_u64() { return read_be(8); }

inline std::optional<std::uint64_t> WireReader::read_varint() {
  auto first = peek_u8();
  if (!first) return std::nullopt;
  // The top two bits select the length: 00 -> 1, 01 -> 2, 10 -> 4, 11 -> 8.
  const std::size_t length_bytes = std::size_t{1} << (*first >> 6);
  auto raw = read_be(length_bytes);
  if (!raw) return std::nullopt;
  // Clear the two length bits, which sit at the top of the first byte.
  const unsigned value_bits = static_cast<unsigned>(8 * length_bytes - 2);
  return *raw & ((std::uint64_t{1} << value_bits) - 1);
}

inline std::optional<std::span<const std::byte>> WireReader::read_bytes(std::uint64_t length_bytes) {
  if (length_bytes > remaining()) return std::nullopt;
  auto view = bytes_.subspan(position_, static_cast<std::size_t>(length_bytes));
  position_ += view.size();
  return view;
}

inline std::optional<std::uint8_t> WireReader::peek_u8() const {
  if (empty()) return std::nullopt;
  return std::to_integer<std::uint8_t>(bytes_[position_]);
}

}  // namespace egw::tunnel
