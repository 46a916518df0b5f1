// Loading and saving the temporal cache (congestion/temporal_cache.h) across
// gateway restarts. The cache itself is sans-IO; this is the driver's side:
// the file is written atomically (common/atomic_file.h), and a missing file is
// a fresh start while a corrupt one is an empty cache plus a warning: cached
// path state is an optimisation, never a reason to refuse to start.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "common/units.h"
#include "congestion/temporal_cache.h"

namespace egw::proxy {

struct PathCacheLoad {
  std::size_t entries = 0;
  // Set when the file existed but could not be used; the cache is then empty.
  std::optional<std::string> warning;
};

// `now` is the driver's monotonic time, `wall_now` the system clock: entry
// ages are carried across the restart through the wall clock.
PathCacheLoad load_path_cache(const std::filesystem::path& file, congestion::TemporalCache& cache,
                              Instant now, std::chrono::system_clock::time_point wall_now);

// Returns an error message, or nullopt on success.
std::optional<std::string> save_path_cache(const std::filesystem::path& file,
                                           const congestion::TemporalCache& cache, Instant now,
                                           std::chrono::system_clock::time_point wall_now);

}  // namespace egw::proxy
