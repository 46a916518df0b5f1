// Live rates for `ensemble-gw status`: bytes per second per content class
// and ensemble, from the monotonic bytes_by_class counters of snapshots the
// status server takes once a second. A query is answered at once with the
// rate since the oldest sample of the last few seconds, so a single
// `ensemble-gw status` shows them and no second query is needed.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <string>

#include "proxy/gateway_snapshot.h"

namespace egw::proxy {

class ClassRates {
 public:
  using Clock = std::chrono::steady_clock;
  // Rates span at most this (older samples are dropped) and at least kMinSpan
  // (a younger sample would give a noisy rate: the query then has none).
  static constexpr std::chrono::milliseconds kMaxSpan{3000};
  static constexpr std::chrono::milliseconds kMinSpan{500};

  // Keeps the snapshot's per-ensemble byte counters, taken at `at`.
  void sample(const GatewaySnapshot& snapshot, Clock::time_point at);
  // Fills each ensemble's bytes_per_second_by_class and rate_window_seconds
  // of `snapshot`, taken at `at`, against the oldest usable sample. An
  // ensemble absent from that sample (new since) counts from zero.
  void fill(GatewaySnapshot& snapshot, Clock::time_point at) const;

 private:
  struct Sample {
    Clock::time_point at;
    std::map<std::string, PerClass<std::uint64_t>> bytes;  // by ensemble key
  };
  std::deque<Sample> samples_;  // oldest first
};

}  // namespace egw::proxy
