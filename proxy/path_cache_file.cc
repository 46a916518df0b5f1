#include "proxy/path_cache_file.h"

#include <system_error>

#include "common/atomic_file.h"

namespace egw::proxy {

PathCacheLoad load_path_cache(const std::filesystem::path& file, congestion::TemporalCache& cache,
                              Instant now, std::chrono::system_clock::time_point wall_now) {
  PathCacheLoad result;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return result;  // first start: nothing cached yet
  std::string error;
  const auto text = read_file(file, &error);
  if (!text) {
    result.warning = "path cache " + file.string() + " not loaded: " + error;
    return result;
  }
  const auto loaded = cache.deserialize(*text, now, wall_now);
  result.entries = loaded.loaded;
  if (loaded.error) {
    result.warning = "path cache " + file.string() + " is corrupt, starting empty: " + *loaded.error;
  }
  return result;
}

std::optional<std::string> save_path_cache(const std::filesystem::path& file,
                                           const congestion::TemporalCache& cache, Instant now,
                                           std::chrono::system_clock::time_point wall_now) {
  std::string error;
  if (write_file_atomically(file, cache.serialize(now, wall_now), &error)) return std::nullopt;
  return error;
}

}  // namespace egw::proxy
