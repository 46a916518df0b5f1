// RingDeque: a double-ended queue in one contiguous ring whose capacity only
// grows (powers of two). Packet histories push at the back and pop at the
// front once per packet; std::deque would allocate and free a block every few
// packets, this allocates only while the peak size grows, so a steady packet
// path does no heap allocation. Indexing is from the front: [0] is the oldest.
#pragma once

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace egw {

template <typename T>
class RingDeque {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return slots_.size(); }

  T& operator[](std::size_t i) {
    assert(i < size_);
    return slots_[(head_ + i) & (slots_.size() - 1)];
  }
  const T& operator[](std::size_t i) const {
    assert(i < size_);
    return slots_[(head_ + i) & (slots_.size() - 1)];
  }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(T value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(value);
    ++size_;
  }
  // The popped slot keeps its value (and any capacity it owns) for reuse.
  void pop_front() {
    assert(size_ > 0);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }
  void pop_back() {
    assert(size_ > 0);
    --size_;
  }
  void clear() {
    head_ = 0;
    size_ = 0;
  }
  // Gives the memory back (for a ring that drained after a burst).
  void release() {
    std::vector<T>().swap(slots_);
    clear();
  }

 private:
  void grow() {
    std::vector<T> bigger(slots_.empty() ? 16 : slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;  // size is 0 or a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace egw
