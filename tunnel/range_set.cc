#include "tunnel/range_set.h"

#include <algorithm>

namespace egw::tunnel {

void RangeSet::insert(std::uint64_t start, std::uint64_t end) {
  if (start >= end) return;
  // Merge with a predecessor that overlaps or touches [start, end).
  auto it = intervals_.upper_bound(start);
  if (it != intervals_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= start) {
      start = prev->first;
      end = std::max(end, prev->second);
      it = intervals_.erase(prev);
    }
  }
  // Swallow successors that start inside or right after [start, end).
  while (it != intervals_.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = intervals_.erase(it);
  }
  intervals_.emplace(start, end);
}

void RangeSet::erase(std::uint64_t start, std::uint64_t end) {
  if (start >= end) return;
  auto it = intervals_.upper_bound(start);
  if (it != intervals_.begin()) {
    auto prev = std::prev(it);
    if (prev->second > start) {
      const std::uint64_t prev_end = prev->second;
      prev->second = start;  // keep the part before `start`
      if (prev->first == prev->second) intervals_.erase(prev);
      if (prev_end > end) {
        intervals_.emplace(end, prev_end);  // the part after `end`
        return;
      }
    }
  }
  while (it != intervals_.end() && it->first < end) {
    if (it->second > end) {
      const std::uint64_t tail_end = it->second;
      intervals_.erase(it);
      intervals_.emplace(end, tail_end);
      return;
    }
    it = intervals_.erase(it);
  }
}

bool RangeSet::contains(std::uint64_t value) const {
  auto it = intervals_.upper_bound(value);
  if (it == intervals_.begin()) return false;
  return std::prev(it)->second > value;
}

std::vector<Interval> RangeSet::gaps(std::uint64_t start, std::uint64_t end) const {
  std::vector<Interval> out;
  if (start >= end) return out;
  std::uint64_t cursor = start;
  auto it = intervals_.upper_bound(start);
  if (it != intervals_.begin()) --it;
  for (; it != intervals_.end() && it->first < end && cursor < end; ++it) {
    if (it->second <= cursor) continue;
    if (it->first > cursor) out.push_back({cursor, it->first});
    cursor = std::max(cursor, it->second);
  }
  if (cursor < end) out.push_back({cursor, end});
  return out;
}

std::optional<Interval> RangeSet::first() const {
  if (intervals_.empty()) return std::nullopt;
  return Interval{intervals_.begin()->first, intervals_.begin()->second};
}

}  // namespace egw::tunnel
