#include "tunnel/range_set.h"

#include <algorithm>

namespace egw::tunnel {

std::size_t RangeSet::first_ending_after(std::uint64_t value) const {
  auto it = std::upper_bound(intervals_.begin(), intervals_.end(), value,
                             [](std::uint64_t v, const Interval& i) { return v < i.end; });
  return static_cast<std::size_t>(it - intervals_.begin());
}

void RangeSet::insert(std::uint64_t start, std::uint64_t end) {
  if (start >= end) return;
  // [first, last): the intervals that overlap or touch [start, end).
  auto first = std::lower_bound(intervals_.begin(), intervals_.end(), start,
                                [](const Interval& i, std::uint64_t v) { return i.end < v; });
  auto last = first;
  while (last != intervals_.end() && last->start <= end) {
    start = std::min(start, last->start);
    end = std::max(end, last->end);
    ++last;
  }
  if (first == last) {
    intervals_.insert(first, Interval{start, end});
    return;
  }
  *first = Interval{start, end};
  intervals_.erase(first + 1, last);
}

void RangeSet::erase(std::uint64_t start, std::uint64_t end) {
  if (start >= end) return;
  const std::size_t i = first_ending_after(start);
  if (i == intervals_.size() || intervals_[i].start >= end) return;
  // One interval reaching over both ends: split it in two.
  if (intervals_[i].start < start && intervals_[i].end > end) {
    const Interval tail{end, intervals_[i].end};
    intervals_[i].end = start;
    intervals_.insert(intervals_.begin() + static_cast<std::ptrdiff_t>(i) + 1, tail);
    return;
  }
  std::size_t keep_from = i;  // intervals [i, keep_from) vanish entirely
  if (intervals_[i].start < start) {
    intervals_[i].end = start;  // keep the part before `start`
    keep_from = i + 1;
  }
  std::size_t j = keep_from;
  while (j < intervals_.size() && intervals_[j].end <= end) ++j;
  if (j < intervals_.size() && intervals_[j].start < end) intervals_[j].start = end;
  intervals_.erase(intervals_.begin() + static_cast<std::ptrdiff_t>(keep_from),
                   intervals_.begin() + static_cast<std::ptrdiff_t>(j));
}

bool RangeSet::contains(std::uint64_t value) const {
  const std::size_t i = first_ending_after(value);
  return i < intervals_.size() && intervals_[i].start <= value;
}

std::vector<Interval> RangeSet::gaps(std::uint64_t start, std::uint64_t end) const {
  std::vector<Interval> out;
  for_each_gap(start, end, [&](const Interval& gap) { out.push_back(gap); });
  return out;
}

std::optional<Interval> RangeSet::first() const {
  if (intervals_.empty()) return std::nullopt;
  return intervals_.front();
}

}  // namespace egw::tunnel
