// RangeSet: a set of byte offsets (or ids) stored as disjoint half-open
// intervals [start, end). Streams use it for "acknowledged", "lost, to
// resend" and "received" offsets; the connection for peer stream ids seen.
// Adjacent and overlapping inserts merge, so an in-order flow stays one
// interval. The intervals live in one sorted vector whose capacity is kept
// (a map would allocate a node per insert: per packet on the stream path);
// memory is 16 bytes per gap: callers cap interval_count() when the gaps are
// driven by the network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace egw::tunnel {

struct Interval {
  std::uint64_t start = 0;
  std::uint64_t end = 0;  // exclusive
  std::uint64_t length() const { return end - start; }
  bool operator==(const Interval&) const = default;
};

class RangeSet {
 public:
  void insert(std::uint64_t start, std::uint64_t end);
  void erase(std::uint64_t start, std::uint64_t end);
  // Drops everything below `offset`.
  void erase_below(std::uint64_t offset) { erase(0, offset); }
  bool contains(std::uint64_t value) const;
  // The parts of [start, end) that are not in the set, ascending.
  std::vector<Interval> gaps(std::uint64_t start, std::uint64_t end) const;
  // The same without a vector: calls visit(Interval) for each gap.
  template <typename Visit>
  void for_each_gap(std::uint64_t start, std::uint64_t end, Visit&& visit) const {
    if (start >= end) return;
    std::uint64_t cursor = start;
    for (std::size_t i = first_ending_after(start);
         i < intervals_.size() && intervals_[i].start < end && cursor < end; ++i) {
      if (intervals_[i].start > cursor) visit(Interval{cursor, intervals_[i].start});
      if (intervals_[i].end > cursor) cursor = intervals_[i].end;
    }
    if (cursor < end) visit(Interval{cursor, end});
  }

  bool empty() const { return intervals_.empty(); }
  std::size_t interval_count() const { return intervals_.size(); }
  // The lowest interval.
  std::optional<Interval> first() const;
  void clear() { intervals_.clear(); }

 private:
  // Index of the first interval whose end is > value (intervals_.size() if none).
  std::size_t first_ending_after(std::uint64_t value) const;

  std::vector<Interval> intervals_;  // ascending, disjoint, non-adjacent
};

}  // namespace egw::tunnel
