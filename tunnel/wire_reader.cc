#include "tunnel/wire_reader.h"

namespace egw::tunnel {

std::optional<std::uint64_t> WireReader::read_be(std::size_t width_bytes) {
  if (remaining() < width_bytes) return std::nullopt;
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width_bytes; ++i) {
    value = (value << 8) | std::to_integer<std::uint64_t>(bytes_[position_ + i]);
  }
  position_ += width_bytes;
  return value;
}

std::optional<std::uint8_t> WireReader::read_u8() {
  auto v = read_be(1);
  if (!v) return std::nullopt;
  return static_cast<std::uint8_t>(*v);
}

std::optional<std::uint16_t> WireReader::read_u16() {
  auto v = read_be(2);
  if (!v) return std::nullopt;
  return static_cast<std::uint16_t>(*v);
}

std::optional<std::uint32_t> WireReader::read_u32() {
  auto v = read_be(4);
  if (!v) return std::nullopt;
  return static_cast<std::uint32_t>(*v);
}

std::optional<std::uint64_t> WireReader::read_u64() { return read_be(8); }

std::optional<std::uint64_t> WireReader::read_varint() {
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

std::optional<std::span<const std::byte>> WireReader::read_bytes(std::uint64_t length_bytes) {
  if (length_bytes > remaining()) return std::nullopt;
  auto view = bytes_.subspan(position_, static_cast<std::size_t>(length_bytes));
  position_ += view.size();
  return view;
}

std::optional<std::uint8_t> WireReader::peek_u8() const {
  if (empty()) return std::nullopt;
  return std::to_integer<std::uint8_t>(bytes_[position_]);
}

}  // namespace egw::tunnel
