// Temporal sharing (RFC 2140, E-TCP's cached ECBs, TCP fast start): when the
// last stream of an ensemble ends, its PathState is kept per key so the next
// ensemble on that key can skip slow start. Modelled on Linux tcp_metrics.c:
// timestamped entries that go stale, a bounded table that reuses the oldest
// entry. No file I/O and no clock here: the driver passes `now` (monotonic)
// and, for persistence, the wall time, and writes the text atomically.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/units.h"
#include "congestion/path_state.h"

namespace egw::congestion {

enum class CacheAging {
  none,                  // state is used as saved while younger than lifetime
  halve_per_idle_rto,    // RFC 2861 style: cwnd halves per RTO of idle time
};

struct TemporalCacheConfig {
  std::size_t capacity = 1024;        // entries; the oldest is reused beyond it
  Duration lifetime = ms(10 * 60 * 1000);  // older state is discarded
  CacheAging aging = CacheAging::none;
};

class TemporalCache {
 public:
  explicit TemporalCache(const TemporalCacheConfig& config = {});

  // Keep `state` for `key` (state.saved_at is set to now).
  void store(std::string_view key, PathState state, Instant now);
  // A usable state for `key`, aged per config; stale entries are erased.
  std::optional<PathState> lookup(std::string_view key, Instant now);
  void erase(std::string_view key);
  std::size_t size() const;

  // Persistence: a versioned text format that records each entry's wall-clock
  // save time, so ages survive a restart (monotonic instants do not).
  std::string serialize(Instant now, std::chrono::system_clock::time_point wall_now) const;
  struct LoadResult {
    std::size_t loaded = 0;
    std::optional<std::string> error;  // set when the text was corrupt: the cache is then left empty
  };
  LoadResult deserialize(std::string_view text, Instant now,
                         std::chrono::system_clock::time_point wall_now);

 private:
  // (implementer: private state goes here)
  TemporalCacheConfig config_;
};

}  // namespace egw::congestion
