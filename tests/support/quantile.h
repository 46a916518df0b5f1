// Quantiles as the WAN lab computes them (bench/lab/experiments.py:
// linear between the two nearest ranks), so that a simulator's p99 reads
// like the lab's figure for the same link.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "common/units.h"

namespace egw::test_support {

inline double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double i = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(i);
  if (lo + 1 >= sorted.size()) return sorted[lo];
  return sorted[lo] + (sorted[lo + 1] - sorted[lo]) * (i - static_cast<double>(lo));
}

inline Duration quantile_sorted(const std::vector<Duration>& sorted, double q) {
  if (sorted.empty()) return Duration{0};
  const double i = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(i);
  if (lo + 1 >= sorted.size()) return sorted[lo];
  const double frac = i - static_cast<double>(lo);
  return sorted[lo] + Duration{static_cast<std::int64_t>(frac * static_cast<double>((sorted[lo + 1] - sorted[lo]).count()))};
}

template <class T>
T quantile(std::vector<T> values, double q) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, q);
}

}  // namespace egw::test_support
