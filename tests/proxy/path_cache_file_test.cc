// The temporal cache survives a restart through its file; a corrupt file
// means an empty cache plus a warning, a missing one a silent fresh start.
#include "proxy/path_cache_file.h"

#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>

namespace egw::proxy {
namespace {

using std::chrono::seconds;
using SysTime = std::chrono::system_clock::time_point;

class PathCacheFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("egw-path-cache-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path file() const { return dir_ / "paths.cache"; }

  std::filesystem::path dir_;
};

congestion::PathState state(ByteCount cwnd) {
  congestion::PathState s;
  s.cwnd_bytes = cwnd;
  s.ssthresh_bytes = cwnd / 2;
  s.srtt = ms(100);
  s.rttvar = ms(10);
  s.min_rtt = ms(95);
  s.max_datagram_bytes = 1200;
  return s;
}

TEST_F(PathCacheFile, StateSurvivesARestartWithItsAge) {
  const SysTime wall0{seconds(1'700'000'000)};
  congestion::TemporalCache before;
  before.store("hub-1", state(96'000), instant_at(seconds(50)));
  // Saved 10 s after the store.
  ASSERT_EQ(save_path_cache(file(), before, instant_at(seconds(60)), wall0), std::nullopt);

  // The new process starts its monotonic clock anew (now = 5 s) 20 s later.
  congestion::TemporalCache after;
  const auto load = load_path_cache(file(), after, instant_at(seconds(5)), wall0 + seconds(20));
  EXPECT_EQ(load.entries, 1u);
  EXPECT_FALSE(load.warning);
  const auto got = after.lookup("hub-1", instant_at(seconds(5)));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->cwnd_bytes, 96'000u);
  EXPECT_EQ(got->srtt, ms(100));
  // Age is 10 s before the save + 20 s down = 30 s: saved_at = 5 s - 30 s.
  EXPECT_EQ(got->saved_at, instant_at(seconds(5) - seconds(30)));
}

TEST_F(PathCacheFile, MissingFileIsAFreshStartWithoutWarning) {
  congestion::TemporalCache cache;
  const auto load = load_path_cache(file(), cache, instant_at(seconds(1)), SysTime{});
  EXPECT_EQ(load.entries, 0u);
  EXPECT_FALSE(load.warning);
}

TEST_F(PathCacheFile, CorruptFileGivesAnEmptyCacheAndAWarning) {
  std::ofstream(file()) << "egw-temporal-cache v1\nthis is not an entry\n";
  congestion::TemporalCache cache;
  cache.store("stale", state(10'000), instant_at(seconds(1)));
  const auto load = load_path_cache(file(), cache, instant_at(seconds(2)), SysTime{});
  ASSERT_TRUE(load.warning);
  EXPECT_NE(load.warning->find(file().string()), std::string::npos) << *load.warning;
  EXPECT_EQ(cache.size(), 0u);
}

TEST_F(PathCacheFile, SaveIntoAMissingDirectoryReportsAnError) {
  congestion::TemporalCache cache;
  const auto error = save_path_cache(dir_ / "no-such-dir" / "paths.cache", cache,
                                     instant_at(seconds(1)), SysTime{});
  EXPECT_TRUE(error);
}

}  // namespace
}  // namespace egw::proxy
