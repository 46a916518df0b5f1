// SortedIds: a set of stream ids in one sorted vector. The connection marks
// streams with pending control frames or retransmissions once per packet or
// so; a std::set would allocate a node per insert, this keeps its capacity
// (no allocation once it has held its peak) and iterates in id order, as the
// set did.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/units.h"

namespace egw::tunnel {

class SortedIds {
 public:
  bool contains(StreamId id) const { return std::binary_search(ids_.begin(), ids_.end(), id); }
  void insert(StreamId id) {
    auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    if (it == ids_.end() || *it != id) ids_.insert(it, id);
  }
  void erase(StreamId id) {
    auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    if (it != ids_.end() && *it == id) ids_.erase(it);
  }
  bool empty() const { return ids_.empty(); }
  std::size_t size() const { return ids_.size(); }
  StreamId operator[](std::size_t i) const { return ids_[i]; }
  // Removes the id at index i (for loops that erase as they go).
  void erase_at(std::size_t i) { ids_.erase(ids_.begin() + static_cast<std::ptrdiff_t>(i)); }

 private:
  std::vector<StreamId> ids_;  // ascending
};

}  // namespace egw::tunnel
