// ByteRing: a growable ring of bytes addressed relative to its front. Streams
// keep [acked prefix, written end) (send) or [read offset, highest received)
// (receive) in one, so memory follows the bytes actually held, never more
// than the flow-control window or send buffer the caller enforces.
// Copies are at most two memcpy's.
//
// A ring holds no storage while empty: it starts empty and hands its buffer
// back when it drains, so an idle stream costs no buffer. With a BufferPool
// (one per connection) the buffer goes to the pool and the next ring that
// needs one takes it from there, so a stream that drains after every packet
// (a reader that keeps up) does not allocate per packet.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace egw::tunnel {

// Drained ring buffers kept for reuse, bounded in bytes. Rings grow by
// doubling from 4 KB, so buffers come in power-of-two size classes and each
// class is a free list: take and give are O(classes), and as many streams as
// the byte bound allows can drain and refill without allocating (a bound in
// blocks, 16 before, made 100 busy streams allocate every few thousand
// packets).
class BufferPool {
 public:
  static constexpr std::size_t kMaxBytes = 2 << 20;
  static constexpr std::size_t kMinBlockBytes = 4 * 1024;
  static constexpr std::size_t kClasses = 16;  // 4 KB .. 128 MB

  // A buffer of at least `bytes` bytes: a kept one of the smallest class
  // that fits, else a new one of exactly `bytes`.
  std::vector<std::byte> take(std::size_t bytes);
  // The largest kept block of at most `limit` bytes (0: none). An empty ring
  // that refills starts with it: a ring drained on every read (a relay that
  // keeps up) otherwise doubled up from 4 KB again and copied its bytes at
  // each step (5.6 % of the hub's CPU in a bulk transfer).
  std::size_t largest_kept(std::size_t limit) const;
  // Keeps `block` for reuse unless its size is no size class. Past kMaxBytes
  // the pool keeps its largest blocks: smaller kept ones are freed to make
  // room, else `block` is. (First come, the pool filled with the small
  // blocks a doubling ring gave back and freed the big one it grew to, so
  // the hub's receive ring grew again from 256 KB, copying its bytes at each
  // step: 4.6 % of the hub's CPU in a bulk transfer.)
  void give(std::vector<std::byte>&& block);
  std::size_t bytes_held() const { return bytes_; }

 private:
  static std::optional<std::size_t> size_class(std::size_t bytes);

  std::array<std::vector<std::vector<std::byte>>, kClasses> free_;
  std::size_t bytes_ = 0;
};

class ByteRing {
 public:
  // `pool` (may be null: plain allocation) must outlive the ring.
  explicit ByteRing(BufferPool* pool = nullptr) : pool_(pool) {}
  ~ByteRing();
  ByteRing(const ByteRing&) = delete;
  ByteRing& operator=(const ByteRing&) = delete;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return storage_.size(); }

  // Grows the logical size to `new_size` (new bytes are zero until written).
  void grow_to(std::size_t new_size);
  void append(std::span<const std::byte> data);
  // Overwrites bytes [position, position + data.size()); must be inside size().
  void write_at(std::size_t position, std::span<const std::byte> data);
  // Copies bytes [position, position + out.size()); must be inside size().
  void read_at(std::size_t position, std::span<std::byte> out) const;
  void pop_front(std::size_t count);

  // Zero-copy access for a reader or writer that moves bytes to or from a
  // socket directly (readv/sendmsg): the ring's bytes live in at most two
  // pieces, so each view is two spans (the second empty unless it wraps).
  // Views are valid until the next call that changes the ring.
  using ConstPieces = std::array<std::span<const std::byte>, 2>;
  using Pieces = std::array<std::span<std::byte>, 2>;
  // The first min(bytes, size()) bytes in place.
  ConstPieces front(std::size_t bytes) const { return at(0, bytes); }
  // Bytes [position, position + bytes) in place; must be inside size().
  ConstPieces at(std::size_t position, std::size_t bytes) const;
  // `bytes` of room after the end (capacity reserved), for commit_back().
  Pieces back_room(std::size_t bytes);
  // The first `bytes` of back_room() hold data now: size() grows by them. A
  // ring still empty after it (nothing came) hands its buffer back as pop_front does.
  void commit_back(std::size_t bytes);

 private:
  void reserve(std::size_t capacity);
  void zero_at(std::size_t position, std::size_t count);
  void release_storage();

  BufferPool* pool_;
  std::vector<std::byte> storage_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace egw::tunnel
