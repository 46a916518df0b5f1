// RangeSet: a set of byte offsets (or ids) stored as disjoint half-open
// intervals [start, end). Streams use it for "acknowledged", "lost, to
// resend" and "received" offsets; the connection for peer stream ids seen.
// Adjacent and overlapping inserts merge, so an in-order flow stays one
// interval. Memory is one map node per gap: callers cap interval_count()
// when the gaps are driven by the network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
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

  bool empty() const { return intervals_.empty(); }
  std::size_t interval_count() const { return intervals_.size(); }
  // The lowest interval.
  std::optional<Interval> first() const;
  void clear() { intervals_.clear(); }

 private:
  std::map<std::uint64_t, std::uint64_t> intervals_;  // start -> end, disjoint, non-adjacent
};

}  // namespace egw::tunnel
