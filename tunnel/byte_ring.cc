#include "tunnel/byte_ring.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

namespace egw::tunnel {

namespace {
constexpr std::size_t kMinCapacityBytes = BufferPool::kMinBlockBytes;
// The most an empty ring takes beyond its need (BufferPool::largest_kept):
// half the pool, so a busy stream (a hub's receive ring holds up to a few
// hundred KB to 1 MB between two reads when the server is the slower side)
// refills at the size it grew to.
constexpr std::size_t kRefillBytes = BufferPool::kMaxBytes / 2;
}  // namespace

std::optional<std::size_t> BufferPool::size_class(std::size_t bytes) {
  std::size_t size = kMinBlockBytes;
  for (std::size_t c = 0; c < kClasses; ++c, size *= 2) {
    if (bytes == size) return c;
  }
  return std::nullopt;
}

std::vector<std::byte> BufferPool::take(std::size_t bytes) {
  std::size_t size = kMinBlockBytes;
  for (std::size_t c = 0; c < kClasses; ++c, size *= 2) {
    if (size < bytes || free_[c].empty()) continue;
    std::vector<std::byte> block = std::move(free_[c].back());
    free_[c].pop_back();
    bytes_ -= block.size();
    return block;
  }
  return std::vector<std::byte>(bytes);
}

std::size_t BufferPool::largest_kept(std::size_t limit) const {
  std::size_t size = kMinBlockBytes << (kClasses - 1);
  for (std::size_t c = kClasses; c-- > 0; size /= 2) {
    if (size <= limit && !free_[c].empty()) return size;
  }
  return 0;
}

void BufferPool::give(std::vector<std::byte>&& block) {
  const auto c = size_class(block.size());
  if (!c || block.size() > kMaxBytes) {
    std::vector<std::byte>().swap(block);
    return;
  }
  // Make room by freeing smaller blocks, smallest first.
  for (std::size_t smaller = 0; smaller < *c && bytes_ + block.size() > kMaxBytes; ++smaller) {
    while (!free_[smaller].empty() && bytes_ + block.size() > kMaxBytes) {
      bytes_ -= free_[smaller].back().size();
      free_[smaller].pop_back();
    }
  }
  if (bytes_ + block.size() > kMaxBytes) {
    std::vector<std::byte>().swap(block);
    return;
  }
  bytes_ += block.size();
  free_[*c].push_back(std::move(block));
}

ByteRing::~ByteRing() { release_storage(); }

void ByteRing::release_storage() {
  if (pool_) {
    pool_->give(std::move(storage_));
  }
  std::vector<std::byte>().swap(storage_);
  head_ = 0;
}

void ByteRing::reserve(std::size_t capacity) {
  if (capacity <= storage_.size()) return;
  std::size_t wanted = std::max(storage_.size(), kMinCapacityBytes);
  if (storage_.empty() && pool_) wanted = std::max(wanted, pool_->largest_kept(kRefillBytes));
  while (wanted < capacity) wanted *= 2;
  std::vector<std::byte> grown = pool_ ? pool_->take(wanted) : std::vector<std::byte>(wanted);
  read_at(0, std::span<std::byte>(grown.data(), size_));  // linearise
  std::swap(storage_, grown);
  head_ = 0;
  if (pool_) pool_->give(std::move(grown));
}

void ByteRing::zero_at(std::size_t position, std::size_t count) {
  if (count == 0) return;
  const std::size_t start = (head_ + position) % storage_.size();
  const std::size_t first = std::min(count, storage_.size() - start);
  std::memset(storage_.data() + start, 0, first);
  std::memset(storage_.data(), 0, count - first);
}

void ByteRing::grow_to(std::size_t new_size) {
  if (new_size <= size_) return;
  reserve(new_size);
  const std::size_t old_size = size_;
  size_ = new_size;
  // Zero the new bytes: they may hold stale data from before a wrap.
  zero_at(old_size, new_size - old_size);
}

void ByteRing::append(std::span<const std::byte> data) {
  if (data.empty()) return;
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
  if (count == 0) return;
  size_ -= count;
  if (size_ == 0) {
    release_storage();  // drained: an idle stream holds no buffer
    return;
  }
  head_ = (head_ + count) % storage_.size();
}

ByteRing::ConstPieces ByteRing::at(std::size_t position, std::size_t bytes) const {
  if (position >= size_) return {};
  bytes = std::min(bytes, size_ - position);
  const std::size_t start = (head_ + position) % storage_.size();
  const std::size_t first = std::min(bytes, storage_.size() - start);
  return {std::span<const std::byte>(storage_.data() + start, first),
          std::span<const std::byte>(storage_.data(), bytes - first)};
}

ByteRing::Pieces ByteRing::back_room(std::size_t bytes) {
  if (bytes == 0) return {};
  reserve(size_ + bytes);
  const std::size_t start = (head_ + size_) % storage_.size();
  const std::size_t first = std::min(bytes, storage_.size() - start);
  return {std::span<std::byte>(storage_.data() + start, first), std::span<std::byte>(storage_.data(), bytes - first)};
}

void ByteRing::commit_back(std::size_t bytes) {
  assert(size_ + bytes <= storage_.size());
  size_ += bytes;
  if (size_ == 0 && !storage_.empty()) release_storage();
}

}  // namespace egw::tunnel
