// Temporal sharing (RFC 2140, E-TCP's cached ECBs, TCP fast start): when the
// last stream of an ensemble ends, its PathState is kept per key so the next
// ensemble on that key can skip slow start. Modelled on Linux tcp_metrics.c:
// timestamped entries that go stale, a bounded table that reuses the oldest
// entry. No file I/O and no clock here: the driver passes `now` (monotonic)
// and, for persistence, the wall time, and writes the text atomically.
//
// Learning (learn(), after Linux tcp_update_metrics): a new observation is
// blended into the entry rather than overwriting it:
//  - RTT biased towards overestimation: a larger srtt is taken almost whole
//    (new - (new - old) / 8), a smaller one only by 1/8 of the gap; rttvar
//    likewise by 1/4; min_rtt is the new one;
//  - cwnd only from congestion avoidance: blended (old + new) / 2, ssthresh
//    max(cwnd / 2, old ssthresh); from an unfinished initial slow start
//    cwnd = max(old, new) (the path took at least that much); from loss
//    recovery or an unvalidated window cwnd = (old + ssthresh) / 2 or, with
//    no old value, nothing (0: no jump);
//  - after an RTO backoff nothing is learned and the entry is erased: the
//    next connection starts afresh (Linux resets its RTT metric).
// Everything stored or loaded is clamped: cwnd and ssthresh to
// max_cwnd_bytes, RTTs to [0, 1 h].
//
// Staleness: an entry older than `lifetime` (now - saved_at > lifetime) is
// erased when looked up. Eviction: storing a new key into a full table drops
// the entry saved longest ago (tcp_metrics reuses its oldest bucket entry).
//
// Aging halve_per_idle_rto (RFC 2861 section 3, Linux tcp_cwnd_restart): for
// each whole RTO of idle time since saved_at the cwnd halves, never below
// 2 * max_datagram_bytes (a saved cwnd already below that is kept); before
// the first halving ssthresh becomes max(ssthresh, 3/4 cwnd) so the path's
// old capacity is remembered. RTO = max(srtt + 4 * rttvar, 200 ms) (RFC 6298
// 2.3 with Linux's floor), or 1 s when no RTT was ever measured (RFC 6298 2.1).
//
// Text format v1 (serialize/deserialize), one record per line, '\n' ends:
//   egw-temporal-cache v1
//   <key> <cwnd_bytes> <ssthresh_bytes> <srtt_us> <rttvar_us> <min_rtt_us>
//       <max_datagram_bytes> <saved_wall_unix_us>           (one line each)
//   end <number of records>
// Keys are percent-encoded (every byte outside [A-Za-z0-9._~:/@\[\]-] is
// %XX), so spaces and newlines in keys are safe. The trailer catches
// truncation. After a restart ages are rebuilt from the wall clock:
// saved_at = now - (wall_now - saved_wall), a save time in the future counts
// as age 0. Loading skips stale records, keeps the newest `capacity` ones and
// replaces what the cache held; any malformed line (bad encoding or number,
// duplicate key, RTT outside [0, 1 h], datagram over 65535 bytes) rejects the
// whole text. A capacity of 0 disables the cache.
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <map>
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
  // No window above this is stored or loaded (a corrupt or hostile file, a
  // measurement gone wrong): 64 MiB, a 5 Gbit/s x 100 ms path.
  ByteCount max_cwnd_bytes = ByteCount{64} << 20;
};

class TemporalCache {
 public:
  static constexpr std::size_t kMaxKeyBytes = 512;

  explicit TemporalCache(const TemporalCacheConfig& config = {});

  // Keep `state` for `key` (state.saved_at is set to now).
  // Keys longer than kMaxKeyBytes are not stored (bounded memory).
  void store(std::string_view key, PathState state, Instant now);
  // Blend what an ensemble measured into `key`'s entry (rules above).
  void learn(std::string_view key, const PathObservation& observed, Instant now);
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
  struct Entry {
    std::string key;
    PathState state;
  };
  using Entries = std::list<Entry>;  // in saved_at order, oldest first

  void insert_in_order(Entry entry);
  PathState aged(const PathState& state, Instant now) const;
  PathState clamped(PathState state) const;

  TemporalCacheConfig config_;
  Entries entries_;
  std::map<std::string, Entries::iterator, std::less<>> index_;
};

}  // namespace egw::congestion
