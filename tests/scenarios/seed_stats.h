// Multi-seed statistics for the scenario experiments: every experiment that
// has randomness (random loss, jitter, cross traffic, random start times)
// runs over several seeds and reports mean and spread; the tests assert on
// the mean.
//
//   const SeedStats fct = over_seeds(20, /*first_seed=*/1, [&](std::uint64_t seed) {
//     return to_seconds(run_once(seed).fct);
//   });
//   fct.mean, fct.min, fct.max, fct.stddev, fct.values (one per seed, in seed order)
//   format_stats(fct, 1e3, "ms") -> "423 ms (min 310, max 611, sd 70, n 20)"
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/units.h"

namespace egw::scenarios {

struct SeedStats {
  std::vector<double> values;  // one per seed, in seed order
  double mean = 0.0;
  double min = 0.0;
  double max = 0.0;
  double stddev = 0.0;  // sample standard deviation (n - 1); 0 for n < 2

  std::size_t n() const { return values.size(); }
  void add(double v) { values.push_back(v); }
  // Recomputes mean, min, max and stddev from `values`.
  SeedStats& finish() {
    if (values.empty()) {
      mean = min = max = stddev = 0.0;
      return *this;
    }
    double sum = 0.0;
    for (double v : values) sum += v;
    mean = sum / static_cast<double>(values.size());
    min = *std::min_element(values.begin(), values.end());
    max = *std::max_element(values.begin(), values.end());
    double squares = 0.0;
    for (double v : values) squares += (v - mean) * (v - mean);
    stddev = values.size() < 2 ? 0.0 : std::sqrt(squares / static_cast<double>(values.size() - 1));
    return *this;
  }
};

inline SeedStats seed_stats(std::vector<double> values) {
  SeedStats s;
  s.values = std::move(values);
  s.finish();
  return s;
}

// Calls f(seed) for seeds first_seed .. first_seed + n - 1; f returns one number.
template <class F>
SeedStats over_seeds(std::size_t n, std::uint64_t first_seed, F&& f) {
  SeedStats s;
  s.values.reserve(n);
  for (std::size_t i = 0; i < n; ++i) s.add(static_cast<double>(f(first_seed + i)));
  s.finish();
  return s;
}

// "mean unit (min a, max b, sd c, n k)", every number multiplied by `scale`.
inline std::string format_stats(const SeedStats& s, double scale = 1.0, const char* unit = "",
                                int decimals = 1) {
  char line[200];
  std::snprintf(line, sizeof line, "%.*f%s%s (min %.*f, max %.*f, sd %.*f, n %zu)", decimals,
                s.mean * scale, *unit ? " " : "", unit, decimals, s.min * scale, decimals,
                s.max * scale, decimals, s.stddev * scale, s.n());
  return line;
}

// A uniformly random instant offset in [from, from + span) (span 0: from).
inline Duration random_offset(std::mt19937_64& rng, Duration from, Duration span) {
  const auto span_us = static_cast<std::uint64_t>(span.count());
  if (span_us == 0) return from;
  return from + us(static_cast<std::int64_t>(rng() % span_us));
}

// A seed's own random stream for start times, independent of the link's rng
// (which the Scenario seeds with the same number): a different mix.
inline std::mt19937_64 start_time_rng(std::uint64_t seed) {
  return std::mt19937_64(seed * 0x9E3779B97F4A7C15ULL + 0x5EED);
}

}  // namespace egw::scenarios
