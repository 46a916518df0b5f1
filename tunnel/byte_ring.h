// ByteRing: a growable ring of bytes addressed relative to its front. Streams
// keep [acked prefix, written end) (send) or [read offset, highest received)
// (receive) in one, so memory follows the bytes actually held, never more
// than the flow-control window or send buffer the caller enforces.
// Copies are at most two memcpy's; storage is released when the ring drains
// after having grown large, so an idle stream holds no big buffer.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace egw::tunnel {

class ByteRing {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Grows the logical size to `new_size` (new bytes are zero until written).
  void grow_to(std::size_t new_size);
  void append(std::span<const std::byte> data);
  // Overwrites bytes [position, position + data.size()); must be inside size().
  void write_at(std::size_t position, std::span<const std::byte> data);
  // Copies bytes [position, position + out.size()); must be inside size().
  void read_at(std::size_t position, std::span<std::byte> out) const;
  void pop_front(std::size_t count);

 private:
  void reserve(std::size_t capacity);

  std::vector<std::byte> storage_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace egw::tunnel
