// A FIFO over one growing array: push at the back, pop at the front, erase in
// the middle (for LE eviction). It only allocates when it outgrows its
// capacity, so a link in steady state allocates nothing per packet (unlike
// std::deque, which allocates and frees blocks as it moves).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace egw::wanem {

template <typename T>
class Ring {
 public:
  explicit Ring(std::size_t capacity = 64) : items_(round_up(capacity)) {}

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // i = 0 is the front.
  T& operator[](std::size_t i) { return items_[(head_ + i) & (items_.size() - 1)]; }
  const T& operator[](std::size_t i) const { return items_[(head_ + i) & (items_.size() - 1)]; }
  T& front() { return (*this)[0]; }
  const T& front() const { return (*this)[0]; }

  void push_back(T item) {
    if (size_ == items_.size()) grow();
    (*this)[size_] = std::move(item);
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & (items_.size() - 1);
    --size_;
  }
  // Removes item i, moving the later ones forward: O(size - i).
  void erase(std::size_t i) {
    for (; i + 1 < size_; ++i) (*this)[i] = std::move((*this)[i + 1]);
    --size_;
  }

 private:
  static std::size_t round_up(std::size_t n) {
    std::size_t c = 1;
    while (c < n) c <<= 1;
    return c;
  }
  void grow() {
    std::vector<T> bigger(items_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    items_ = std::move(bigger);
    head_ = 0;
  }

  std::vector<T> items_;  // size is a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace egw::wanem
