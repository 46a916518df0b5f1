#include "tunnel/wire_writer.h"

#include <cstring>

#include "tunnel/varint.h"

namespace egw::tunnel {

std::span<std::byte> WireWriter::claim(std::size_t count) {
  if (!ok_ || count > budget_bytes_ - written_) {
    ok_ = false;
    return {};
  }
  if (grow_) {
    grow_->resize(base_ + written_ + count);
    out_ = std::span<std::byte>(*grow_).subspan(base_);
  }
  const std::span<std::byte> claimed = out_.subspan(written_, count);
  written_ += count;
  return claimed;
}

bool WireWriter::write_be(std::uint64_t value, std::size_t width_bytes) {
  const std::span<std::byte> out = claim(width_bytes);
  if (out.size() != width_bytes) return false;
  for (std::size_t i = 0; i < width_bytes; ++i) {
    out[i] = static_cast<std::byte>((value >> (8 * (width_bytes - 1 - i))) & 0xff);
  }
  return true;
}

bool WireWriter::write_varint(std::uint64_t value) {
  const std::size_t size = varint_size(value);
  if (size == 0) {  // > 2^62 - 1: a caller bug, but never emit garbage
    ok_ = false;
    return false;
  }
  // Length code in the top two bits: 1 -> 00, 2 -> 01, 4 -> 10, 8 -> 11.
  const std::uint64_t length_code = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
  return write_be(value | (length_code << (8 * size - 2)), size);
}

bool WireWriter::write_bytes(std::span<const std::byte> bytes) {
  const std::span<std::byte> out = claim(bytes.size());
  if (!ok_) return false;
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return true;
}

bool WireWriter::write_zeros(std::size_t count) {
  const std::span<std::byte> out = claim(count);
  if (!ok_) return false;
  if (count > 0) std::memset(out.data(), 0, count);
  return true;
}

}  // namespace egw::tunnel
