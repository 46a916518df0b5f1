#include "tunnel/wire_writer.h"

#include "tunnel/varint.h"

namespace egw::tunnel {

bool WireWriter::reserve(std::size_t bytes) {
  if (!ok_ || bytes > budget_bytes_ - written_) {
    ok_ = false;
    return false;
  }
  written_ += bytes;
  return true;
}

bool WireWriter::write_be(std::uint64_t value, std::size_t width_bytes) {
  if (!reserve(width_bytes)) return false;
  for (std::size_t i = width_bytes; i > 0; --i) {
    out_.push_back(static_cast<std::byte>((value >> (8 * (i - 1))) & 0xff));
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
  if (!reserve(bytes.size())) return false;
  out_.insert(out_.end(), bytes.begin(), bytes.end());
  return true;
}

bool WireWriter::write_zeros(std::size_t count) {
  if (!reserve(count)) return false;
  out_.resize(out_.size() + count, std::byte{0});
  return true;
}

}  // namespace egw::tunnel
