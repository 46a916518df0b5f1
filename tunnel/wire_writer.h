// WireWriter: writes big-endian integers, RFC 9000 varints and byte runs into
// a caller-owned fixed buffer (the packet path: the datagram being built,
// after its header), never past its end; or, for tests and tools, appends to
// a growable vector within a byte budget. Byte runs are one memcpy. A write that does
// not fit writes nothing and puts the writer in a sticky failed state: every
// later write fails too, so a packet can never end up with a hole in the
// middle. Check ok() once at the end instead of after every field; when it
// is false, the buffer may hold the fields written before the failure and
// the packet must be discarded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "tunnel/varint.h"

namespace egw::tunnel {

class WireWriter {
 public:
  static constexpr std::size_t kUnlimited = std::numeric_limits<std::size_t>::max();

  // Writes go to `out` from its first byte on; at most out.size() bytes.
  explicit WireWriter(std::span<std::byte> out) : out_(out), budget_bytes_(out.size()) {}
  // Appends to `out` (after what it holds), at most `budget_bytes` in all.
  // Allocates as the vector grows: not for the packet path.
  explicit WireWriter(std::vector<std::byte>& out, std::size_t budget_bytes = kUnlimited)
      : grow_(&out), base_(out.size()), budget_bytes_(budget_bytes) {}

  bool write_u8(std::uint8_t value) { return write_be(value, 1); }
  bool write_u16(std::uint16_t value) { return write_be(value, 2); }
  bool write_u32(std::uint32_t value) { return write_be(value, 4); }
  bool write_u64(std::uint64_t value) { return write_be(value, 8); }
  // Shortest encoding; fails when value > kVarintMax.
  bool write_varint(std::uint64_t value);
  bool write_bytes(std::span<const std::byte> bytes);
  bool write_zeros(std::size_t count);
  // Claims the next `count` bytes for the caller to fill in place (a stream's
  // ring copies its bytes straight into the packet this way); an empty span,
  // and the failed state, when they do not fit.
  std::span<std::byte> claim(std::size_t count);

  // Marks the output unusable (an encoder met a value it cannot represent).
  void fail() { ok_ = false; }

  bool ok() const { return ok_; }
  std::size_t written() const { return written_; }
  std::size_t remaining() const { return ok_ ? budget_bytes_ - written_ : 0; }

 private:
  bool write_be(std::uint64_t value, std::size_t width_bytes);

  std::span<std::byte> out_;
  std::vector<std::byte>* grow_ = nullptr;  // the appending mode's vector
  std::size_t base_ = 0;                    // its size before the first write
  std::size_t budget_bytes_;
  std::size_t written_ = 0;
  bool ok_ = true;
};

// Defined here, inline: the packet path parses and writes every frame with
// these (out of line they were ~5 % of a hub's CPU at 8 Gbit/s).


inline std::span<std::byte> WireWriter::claim(std::size_t count) {
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

inline bool WireWriter::write_be(std::uint64_t value, std::size_t width_bytes) {
  const std::span<std::byte> out = claim(width_bytes);
  if (out.size() != width_bytes) return false;
  for (std::size_t i = 0; i < width_bytes; ++i) {
    out[i] = static_cast<std::byte>((value >> (8 * (width_bytes - 1 - i))) & 0xff);
  }
  return true;
}

inline bool WireWriter::write_varint(std::uint64_t value) {
  const std::size_t size = varint_size(value);
  if (size == 0) {  // > 2^62 - 1: a caller bug, but never emit garbage
    ok_ = false;
    return false;
  }
  // Length code in the top two bits: 1 -> 00, 2 -> 01, 4 -> 10, 8 -> 11.
  const std::uint64_t length_code = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
  return write_be(value | (length_code << (8 * size - 2)), size);
}

inline bool WireWriter::write_bytes(std::span<const std::byte> bytes) {
  const std::span<std::byte> out = claim(bytes.size());
  if (!ok_) return false;
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return true;
}

inline bool WireWriter::write_zeros(std::size_t count) {
  const std::span<std::byte> out = claim(count);
  if (!ok_) return false;
  if (count > 0) std::memset(out.data(), 0, count);
  return true;
}

}  // namespace egw::tunnel
