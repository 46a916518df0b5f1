// TemporalCache::learn: what an ensemble measured is blended into the entry
// the way Linux tcp_update_metrics does (congestion/temporal_cache.h).
#include <gtest/gtest.h>

#include "congestion/temporal_cache.h"
#include "congestion/window_law.h"
#include "tests/congestion/path_state_builder.h"

namespace egw::congestion {
namespace {

const Instant t0 = instant_at(ms(1'000));

PathObservation measured(ByteCount cwnd, ByteCount ssthresh, Duration srtt) {
  PathObservation o;
  o.state = testing::path_state(cwnd, ssthresh);
  o.state.srtt = srtt;
  return o;
}

TEST(TemporalCacheLearn, FirstObservationIsStoredAsMeasured) {
  TemporalCache cache;
  cache.learn("peer", measured(48000, 30000, ms(100)), t0);
  const auto s = cache.lookup("peer", t0);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cwnd_bytes, 48000u);
  EXPECT_EQ(s->srtt, ms(100));
}

TEST(TemporalCacheLearn, CongestionAvoidanceWindowsAreBlended) {
  TemporalCache cache;
  cache.learn("peer", measured(48000, 30000, ms(100)), t0);
  cache.learn("peer", measured(24000, 20000, ms(100)), t0 + ms(10));
  const auto s = cache.lookup("peer", t0 + ms(10));
  EXPECT_EQ(s->cwnd_bytes, 36000u);      // (48000 + 24000) / 2
  EXPECT_EQ(s->ssthresh_bytes, 30000u);  // max(24000 / 2, old 30000)
}

TEST(TemporalCacheLearn, RttIsBiasedTowardsOverestimation) {
  TemporalCache up;
  up.learn("peer", measured(48000, 30000, ms(100)), t0);
  up.learn("peer", measured(48000, 30000, ms(180)), t0);
  EXPECT_EQ(up.lookup("peer", t0)->srtt, ms(170));  // 180 - 80 / 8: almost all of it
  TemporalCache down;
  down.learn("peer", measured(48000, 30000, ms(180)), t0);
  down.learn("peer", measured(48000, 30000, ms(100)), t0);
  EXPECT_EQ(down.lookup("peer", t0)->srtt, ms(170));  // 180 - 80 / 8: only an eighth
}

TEST(TemporalCacheLearn, UnfinishedSlowStartOnlyRaisesTheWindow) {
  TemporalCache cache;
  cache.learn("peer", measured(48000, 30000, ms(100)), t0);
  PathObservation small = measured(12000, kInfiniteSsthresh, ms(100));
  small.in_initial_slow_start = true;  // a short transfer: a lower bound only
  cache.learn("peer", small, t0);
  EXPECT_EQ(cache.lookup("peer", t0)->cwnd_bytes, 48000u);
  PathObservation big = measured(96000, kInfiniteSsthresh, ms(100));
  big.in_initial_slow_start = true;
  cache.learn("peer", big, t0);
  EXPECT_EQ(cache.lookup("peer", t0)->cwnd_bytes, 96000u);
}

TEST(TemporalCacheLearn, UnreliableWindowKeepsTheOldOneAndStoresNoNewOne) {
  TemporalCache cache;
  PathObservation first = measured(96000, kInfiniteSsthresh, ms(100));
  first.window_unreliable = true;  // e.g. an unvalidated jump
  cache.learn("peer", first, t0);
  EXPECT_EQ(cache.lookup("peer", t0)->cwnd_bytes, 0u);  // RTT only: no jump
  EXPECT_EQ(cache.lookup("peer", t0)->srtt, ms(100));
  cache.learn("peer", measured(48000, 30000, ms(100)), t0);
  PathObservation unvalidated = measured(200000, kInfiniteSsthresh, ms(100));
  unvalidated.window_unreliable = true;
  cache.learn("peer", unvalidated, t0);
  EXPECT_EQ(cache.lookup("peer", t0)->cwnd_bytes, 48000u);
}

TEST(TemporalCacheLearn, BackoffErasesTheEntry) {
  TemporalCache cache;
  cache.learn("peer", measured(48000, 30000, ms(100)), t0);
  PathObservation failed = measured(1200, 24000, ms(100));
  failed.backed_off = true;
  cache.learn("peer", failed, t0);
  EXPECT_FALSE(cache.lookup("peer", t0));
}

TEST(TemporalCacheLearn, WindowsAreClamped) {
  TemporalCacheConfig config;
  config.max_cwnd_bytes = 1'000'000;
  TemporalCache cache(config);
  cache.learn("peer", measured(241'000'000, 241'000'000, ms(100)), t0);
  EXPECT_EQ(cache.lookup("peer", t0)->cwnd_bytes, 1'000'000u);
  EXPECT_EQ(cache.lookup("peer", t0)->ssthresh_bytes, 1'000'000u);
}

TEST(TemporalCacheLearn, WindowsLoadedFromDiskAreClamped) {
  TemporalCacheConfig config;
  config.max_cwnd_bytes = 1'000'000;
  TemporalCache cache(config);
  const auto wall = std::chrono::system_clock::now();
  const std::string text =
      "egw-temporal-cache v1\npeer 999999999999 999999999999 100000 10000 90000 1200 " +
      std::to_string(std::chrono::duration_cast<std::chrono::microseconds>(
                         wall.time_since_epoch()).count()) +
      "\nend 1\n";
  ASSERT_FALSE(cache.deserialize(text, t0, wall).error);
  EXPECT_EQ(cache.lookup("peer", t0)->cwnd_bytes, 1'000'000u);
}

}  // namespace
}  // namespace egw::congestion
