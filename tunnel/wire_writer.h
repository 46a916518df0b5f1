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
#include <limits>
#include <span>
#include <vector>

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

}  // namespace egw::tunnel
