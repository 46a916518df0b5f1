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

}  // namespace egw::tunnel
