#include "congestion/temporal_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/congestion/path_state_builder.h"

namespace egw::congestion {
namespace {

using std::chrono::seconds;
using WallClock = std::chrono::system_clock;

// A fixed wall time: 2024-01-01T00:00:00Z = 1704067200 s since the epoch.
const WallClock::time_point kWall = WallClock::time_point(seconds(1'704'067'200));

PathState path(ByteCount cwnd, ByteCount ssthresh = 50'000) {
  return testing::path_state(cwnd, ssthresh);
}

Instant at(Duration d) { return instant_at(d); }

TEST(TemporalCache, StoreThenLookupReturnsTheStateStampedNow) {
  TemporalCache c;
  c.store("peer-a", path(96'000), at(seconds(10)));
  auto s = c.lookup("peer-a", at(seconds(11)));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->cwnd_bytes, 96'000u);
  EXPECT_EQ(s->ssthresh_bytes, 50'000u);
  EXPECT_EQ(s->srtt, ms(100));
  EXPECT_EQ(s->saved_at, at(seconds(10)));
  EXPECT_FALSE(c.lookup("peer-b", at(seconds(11))).has_value());
  EXPECT_EQ(c.size(), 1u);
}

TEST(TemporalCache, StoreReplacesTheEntryForTheSameKey) {
  TemporalCache c;
  c.store("k", path(10'000), at(seconds(1)));
  c.store("k", path(20'000), at(seconds(2)));
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.lookup("k", at(seconds(2)))->cwnd_bytes, 20'000u);
  c.erase("k");
  EXPECT_EQ(c.size(), 0u);
  EXPECT_FALSE(c.lookup("k", at(seconds(2))).has_value());
}

TEST(TemporalCache, EntriesOlderThanLifetimeAreDiscardedAtLookup) {
  TemporalCacheConfig cfg;
  cfg.lifetime = seconds(60);
  TemporalCache c(cfg);
  c.store("k", path(10'000), at(seconds(100)));
  // Age exactly the lifetime (160 - 100 = 60 s) is still usable.
  EXPECT_TRUE(c.lookup("k", at(seconds(160))).has_value());
  EXPECT_EQ(c.size(), 1u);
  // One microsecond older is stale and erased.
  EXPECT_FALSE(c.lookup("k", at(seconds(160) + us(1))).has_value());
  EXPECT_EQ(c.size(), 0u);
}

TEST(TemporalCache, FullTableReusesTheOldestEntry) {
  TemporalCacheConfig cfg;
  cfg.capacity = 3;
  TemporalCache c(cfg);
  c.store("a", path(1'000'000), at(seconds(1)));
  c.store("b", path(2'000'000), at(seconds(2)));
  c.store("c", path(3'000'000), at(seconds(3)));
  c.store("d", path(4'000'000), at(seconds(4)));  // evicts a (saved at 1 s)
  EXPECT_EQ(c.size(), 3u);
  EXPECT_FALSE(c.lookup("a", at(seconds(5))).has_value());
  c.store("b", path(2'000'000), at(seconds(5)));  // b is now the newest
  c.store("e", path(5'000'000), at(seconds(6)));  // evicts c (saved at 3 s)
  EXPECT_FALSE(c.lookup("c", at(seconds(6))).has_value());
  for (const char* k : {"b", "d", "e"}) EXPECT_TRUE(c.lookup(k, at(seconds(6))).has_value()) << k;
}

TEST(TemporalCache, ZeroCapacityAndOverlongKeysStoreNothing) {
  TemporalCacheConfig cfg;
  cfg.capacity = 0;
  TemporalCache off(cfg);
  off.store("k", path(1), at(seconds(1)));
  EXPECT_EQ(off.size(), 0u);
  TemporalCache c;
  c.store(std::string(TemporalCache::kMaxKeyBytes + 1, 'x'), path(1), at(seconds(1)));
  EXPECT_EQ(c.size(), 0u);
  c.store(std::string(TemporalCache::kMaxKeyBytes, 'x'), path(1), at(seconds(1)));
  EXPECT_EQ(c.size(), 1u);
}

TEST(TemporalCache, AgingNoneKeepsStateUnchangedWithinLifetime) {
  TemporalCache c;  // aging none, lifetime 10 min
  c.store("k", path(96'000), at(seconds(0)));
  auto s = c.lookup("k", at(seconds(599)));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->cwnd_bytes, 96'000u);
  EXPECT_EQ(s->ssthresh_bytes, 50'000u);
}

TEST(TemporalCache, AgingHalvesCwndPerIdleRto) {
  TemporalCacheConfig cfg;
  cfg.aging = CacheAging::halve_per_idle_rto;
  TemporalCache c(cfg);
  PathState saved = path(96'000, 50'000);
  saved.srtt = ms(200);
  saved.rttvar = ms(25);  // RTO = srtt + 4 * rttvar = 200 + 4 * 25 = 300 ms
  c.store("k", saved, at(seconds(0)));
  EXPECT_EQ(c.lookup("k", at(ms(299)))->cwnd_bytes, 96'000u);  // less than one RTO idle
  auto one = c.lookup("k", at(ms(300)));
  EXPECT_EQ(one->cwnd_bytes, 48'000u);        // 96000 / 2
  EXPECT_EQ(one->ssthresh_bytes, 72'000u);    // max(50000, 96000 * 3 / 4)
  EXPECT_EQ(c.lookup("k", at(ms(3 * 300)))->cwnd_bytes, 12'000u);  // 96000 / 2^3
  // Lookups do not compound: the same idle time gives the same answer.
  EXPECT_EQ(c.lookup("k", at(ms(3 * 300)))->cwnd_bytes, 12'000u);
  // 96000 / 2^6 = 1500 would be below 2 * 1200 = 2400: floored.
  EXPECT_EQ(c.lookup("k", at(ms(6 * 300)))->cwnd_bytes, 2'400u);
  EXPECT_EQ(c.lookup("k", at(seconds(500)))->cwnd_bytes, 2'400u);
}

TEST(TemporalCache, AgingRtoHasA200msFloorAndA1sDefault) {
  TemporalCacheConfig cfg;
  cfg.aging = CacheAging::halve_per_idle_rto;
  TemporalCache c(cfg);
  PathState fast = path(96'000);
  fast.srtt = ms(10);
  fast.rttvar = ms(1);  // 10 + 4 * 1 = 14 ms, floored to 200 ms
  c.store("fast", fast, at(seconds(0)));
  EXPECT_EQ(c.lookup("fast", at(ms(199)))->cwnd_bytes, 96'000u);
  EXPECT_EQ(c.lookup("fast", at(ms(200)))->cwnd_bytes, 48'000u);
  PathState unmeasured = path(96'000);
  unmeasured.srtt = Duration::zero();  // no RTT sample: RTO 1 s (RFC 6298 2.1)
  unmeasured.rttvar = Duration::zero();
  c.store("new", unmeasured, at(seconds(0)));
  EXPECT_EQ(c.lookup("new", at(ms(999)))->cwnd_bytes, 96'000u);
  EXPECT_EQ(c.lookup("new", at(ms(1000)))->cwnd_bytes, 48'000u);
  // A saved cwnd already below the floor is kept, not raised.
  c.store("tiny", path(1'000), at(seconds(0)));
  EXPECT_EQ(c.lookup("tiny", at(seconds(100)))->cwnd_bytes, 1'000u);
}

TEST(TemporalCache, SerializeRoundTripRebuildsAgesAcrossARestart) {
  TemporalCache before;
  before.store("peer-a", path(96'000), at(seconds(1000)));
  before.store("peer-b", path(24'000, 12'000), at(seconds(1020)));
  // Saved at monotonic 1030 s, when the wall clock read kWall.
  const std::string text = before.serialize(at(seconds(1030)), kWall);
  EXPECT_TRUE(text.starts_with("egw-temporal-cache v1\n")) << text;

  // Restart: the monotonic clock starts again near 0, one minute of wall time later.
  TemporalCache after;
  auto r = after.deserialize(text, at(seconds(5)), kWall + seconds(60));
  ASSERT_FALSE(r.error.has_value()) << *r.error;
  EXPECT_EQ(r.loaded, 2u);
  auto a = after.lookup("peer-a", at(seconds(5)));
  ASSERT_TRUE(a.has_value());
  // Age of peer-a: 30 s before the save + 60 s of downtime = 90 s: 5 - 90 = -85 s.
  EXPECT_EQ(a->saved_at, at(seconds(-85)));
  EXPECT_EQ(a->cwnd_bytes, 96'000u);
  EXPECT_EQ(a->ssthresh_bytes, 50'000u);
  EXPECT_EQ(a->srtt, ms(100));
  EXPECT_EQ(a->rttvar, ms(10));
  EXPECT_EQ(a->min_rtt, ms(90));
  EXPECT_EQ(a->max_datagram_bytes, 1200u);
  auto b = after.lookup("peer-b", at(seconds(5)));
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->saved_at, at(seconds(5 - 70)));  // 10 s + 60 s
  EXPECT_EQ(b->cwnd_bytes, 24'000u);
}

TEST(TemporalCache, KeysWithSpacesNewlinesAndBinarySurviveTheTextFormat) {
  const std::string keys[] = {"10.0.0.1:443", "with space", "two\nlines", "100% sure",
                              std::string("nul\0byte", 8), "\xff\xfe utf", "", "[::1]:80"};
  TemporalCache c;
  ByteCount cwnd = 10'000;
  for (const auto& k : keys) c.store(k, path(cwnd++), at(seconds(1)));
  const std::string text = c.serialize(at(seconds(1)), kWall);
  // Header + 8 records + trailer, each ending in '\n': no raw newline from a key.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 10);
  TemporalCache d;
  auto r = d.deserialize(text, at(seconds(1)), kWall);
  ASSERT_FALSE(r.error.has_value()) << *r.error;
  EXPECT_EQ(r.loaded, 8u);
  cwnd = 10'000;
  for (const auto& k : keys) {
    auto s = d.lookup(k, at(seconds(1)));
    ASSERT_TRUE(s.has_value()) << k;
    EXPECT_EQ(s->cwnd_bytes, cwnd++) << k;
  }
}

TEST(TemporalCache, CorruptTextLeavesTheCacheEmptyAndNamesTheLine) {
  TemporalCache good;
  good.store("a", path(10'000), at(seconds(1)));
  good.store("b", path(20'000), at(seconds(2)));
  const std::string text = good.serialize(at(seconds(2)), kWall);
  const std::string header = "egw-temporal-cache v1\n";
  const std::string rec = "a 10000 50000 100000 10000 90000 1200 1704067199000000\n";
  struct Case {
    std::string name, text, line;
  };
  const Case cases[] = {
      {"empty", "", "line 1:"},
      {"unknown version", "egw-temporal-cache v2\nend 0\n", "line 1:"},
      {"no trailer", header + rec, "line 3:"},
      {"cut mid-record", text.substr(0, text.size() - 20), "line 3:"},
      {"no final newline", header + "end 0", "line 2:"},
      {"count mismatch", header + rec + "end 2\n", "line 3:"},
      {"bad number", header + "a 10x00 50000 100000 10000 90000 1200 1704067199000000\nend 1\n",
       "line 2:"},
      {"negative", header + "a 10000 50000 -1 10000 90000 1200 1704067199000000\nend 1\n",
       "line 2:"},
      {"seven fields", header + rec + "b 1 2 3 4 5 6\nend 2\n", "line 3:"},
      {"bad escape", header + "a%G1 10000 50000 100000 10000 90000 1200 1\nend 1\n", "line 2:"},
      {"cut escape", header + "a%4 10000 50000 100000 10000 90000 1200 1\nend 1\n", "line 2:"},
      {"raw unsafe byte", header + "a\tb 10000 50000 100000 10000 90000 1200 1\nend 1\n",
       "line 2:"},
      {"duplicate key", header + rec + rec + "end 2\n", "line 3:"},
      {"rtt over 1 h", header + "a 1 1 3600000001 0 0 1200 1\nend 1\n", "line 2:"},
      {"datagram too big", header + "a 1 1 0 0 0 65536 1\nend 1\n", "line 2:"},
  };
  for (const auto& tc : cases) {
    TemporalCache c;
    c.store("kept-before", path(1), at(seconds(1)));
    auto r = c.deserialize(tc.text, at(seconds(2)), kWall);
    ASSERT_TRUE(r.error.has_value()) << tc.name;
    EXPECT_TRUE(r.error->starts_with(tc.line)) << tc.name << ": " << *r.error;
    EXPECT_EQ(r.loaded, 0u) << tc.name;
    EXPECT_EQ(c.size(), 0u) << tc.name;
  }
  // The unmodified text loads (the cases above fail for their own reason).
  TemporalCache c;
  EXPECT_FALSE(c.deserialize(text, at(seconds(2)), kWall).error.has_value());
  EXPECT_EQ(c.size(), 2u);
}

TEST(TemporalCache, LoadSkipsStaleRecordsAndKeepsTheNewestUpToCapacity) {
  TemporalCacheConfig cfg;
  cfg.capacity = 2;
  cfg.lifetime = seconds(100);
  const std::int64_t wall_us = 1'704'067'200'000'000;  // kWall in unix microseconds
  auto line = [&](const char* key, std::int64_t age_s) {
    return std::string(key) + " 10000 5000 100000 10000 90000 1200 " +
           std::to_string(wall_us - age_s * 1'000'000) + "\n";
  };
  const std::string text = "egw-temporal-cache v1\n" + line("stale", 101) + line("old", 50) +
                           line("newer", 20) + line("newest", 10) + line("future", -30) +
                           "end 5\n";
  TemporalCache c(cfg);
  auto r = c.deserialize(text, at(seconds(1000)), kWall);
  ASSERT_FALSE(r.error.has_value()) << *r.error;
  // 4 fresh records, capacity 2: the two newest stay ("future" has age 0, then "newest").
  EXPECT_EQ(r.loaded, 2u);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_FALSE(c.lookup("stale", at(seconds(1000))).has_value());
  EXPECT_FALSE(c.lookup("old", at(seconds(1000))).has_value());
  EXPECT_FALSE(c.lookup("newer", at(seconds(1000))).has_value());
  EXPECT_EQ(c.lookup("newest", at(seconds(1000)))->saved_at, at(seconds(990)));
  // A save time in the future (wall clock stepped back) counts as age 0.
  EXPECT_EQ(c.lookup("future", at(seconds(1000)))->saved_at, at(seconds(1000)));
}

TEST(TemporalCache, SerializeLeavesOutStaleEntries) {
  TemporalCacheConfig cfg;
  cfg.lifetime = seconds(100);
  TemporalCache c(cfg);
  c.store("old", path(1'000), at(seconds(0)));
  c.store("new", path(2'000), at(seconds(150)));
  const std::string text = c.serialize(at(seconds(160)), kWall);  // old is 160 s old
  EXPECT_EQ(text.find("old "), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("end 1\n")) << text;
}

}  // namespace
}  // namespace egw::congestion
