#include "tunnel/byte_ring.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace egw::tunnel {

namespace {
// Below this a drained ring keeps its storage: reallocating for every small
// burst would cost more than the memory saves.
constexpr std::size_t kKeepWhenEmptyBytes = 64 * 1024;
constexpr std::size_t kMinCapacityBytes = 4 * 1024;
}  // namespace

void ByteRing::reserve(std::size_t capacity) {
  if (capacity <= storage_.size()) return;
  std::size_t new_capacity = std::max(storage_.size(), kMinCapacityBytes);
  while (new_capacity < capacity) new_capacity *= 2;
  std::vector<std::byte> grown(new_capacity);
  read_at(0, std::span<std::byte>(grown.data(), size_));  // linearise
  storage_ = std::move(grown);
  head_ = 0;
}

void ByteRing::grow_to(std::size_t new_size) {
  if (new_size <= size_) return;
  reserve(new_size);
  const std::size_t old_size = size_;
  size_ = new_size;
  // Zero the new bytes: they may hold stale data from before a wrap.
  std::vector<std::byte> zeros(new_size - old_size);
  write_at(old_size, zeros);
}

void ByteRing::append(std::span<const std::byte> data) {
  const std::size_t position = size_;
  reserve(size_ + data.size());
  size_ += data.size();
  write_at(position, data);
}

void ByteRing::write_at(std::size_t position, std::span<const std::byte> data) {
  assert(position + data.size() <= size_);
  if (data.empty()) return;
  const std::size_t start = (head_ + position) % storage_.size();
  const std::size_t first = std::min(data.size(), storage_.size() - start);
  std::memcpy(storage_.data() + start, data.data(), first);
  std::memcpy(storage_.data(), data.data() + first, data.size() - first);
}

void ByteRing::read_at(std::size_t position, std::span<std::byte> out) const {
  assert(position + out.size() <= size_);
  if (out.empty()) return;
  const std::size_t start = (head_ + position) % storage_.size();
  const std::size_t first = std::min(out.size(), storage_.size() - start);
  std::memcpy(out.data(), storage_.data() + start, first);
  std::memcpy(out.data() + first, storage_.data(), out.size() - first);
}

void ByteRing::pop_front(std::size_t count) {
  assert(count <= size_);
  size_ -= count;
  if (size_ == 0) {
    head_ = 0;
    if (storage_.size() > kKeepWhenEmptyBytes) storage_ = {};
    return;
  }
  head_ = (head_ + count) % storage_.size();
}

}  // namespace egw::tunnel
