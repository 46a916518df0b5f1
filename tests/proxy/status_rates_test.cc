// Live rates per class for `ensemble-gw status`: from the byte counters of
// samples a second apart, over the oldest sample of the last few seconds.
#include "proxy/status_rates.h"

#include <gtest/gtest.h>

#include "proxy/status_text.h"

namespace egw::proxy {
namespace {

using std::chrono::milliseconds;
using Clock = ClassRates::Clock;

GatewaySnapshot with_bytes(PerClass<std::uint64_t> bytes, const std::string& key = "hub") {
  GatewaySnapshot s;
  s.role = "branch";
  EnsembleSnapshot e;
  e.peer = key;
  e.key = key;
  e.bytes_by_class = bytes;
  s.ensembles.push_back(e);
  return s;
}

TEST(ClassRates, NoSampleNoRate) {
  ClassRates rates;
  auto s = with_bytes({100, 0, 0, 0});
  rates.fill(s, Clock::now());
  EXPECT_EQ(s.rate_window_seconds, 0);
  EXPECT_EQ(s.ensembles[0].bytes_per_second_by_class[0], 0);
  EXPECT_EQ(render_status(s).find("rates:"), std::string::npos);
}

TEST(ClassRates, BytesPerSecondPerClassOverTheOldestRecentSample) {
  ClassRates rates;
  const auto t0 = Clock::now();
  rates.sample(with_bytes({0, 0, 0, 0}), t0);
  rates.sample(with_bytes({1000, 0, 0, 500}), t0 + milliseconds(1000));
  auto s = with_bytes({4000, 200, 0, 500});
  rates.fill(s, t0 + milliseconds(2000));
  EXPECT_DOUBLE_EQ(s.rate_window_seconds, 2.0);  // the oldest within kMaxSpan
  const auto& r = s.ensembles[0].bytes_per_second_by_class;
  EXPECT_DOUBLE_EQ(r[0], 2000);
  EXPECT_DOUBLE_EQ(r[1], 100);
  EXPECT_DOUBLE_EQ(r[2], 0);
  EXPECT_DOUBLE_EQ(r[3], 250);
  const std::string text = render_status(s);
  EXPECT_NE(text.find("rates: bytes/s per class over the last 2.0 s\n"), std::string::npos) << text;
  EXPECT_TRUE(text.find("  2.0K/100/0/250/0/0/0/0\n") != std::string::npos) << text;
}

TEST(ClassRates, OldSamplesAreDroppedAndYoungOnesNotUsed) {
  ClassRates rates;
  const auto t0 = Clock::now();
  rates.sample(with_bytes({0, 0, 0, 0}), t0);
  rates.sample(with_bytes({9000, 0, 0, 0}), t0 + milliseconds(9000));
  auto s = with_bytes({9100, 0, 0, 0});
  rates.fill(s, t0 + milliseconds(9100));  // the only kept sample is 100 ms old: too young
  EXPECT_EQ(s.rate_window_seconds, 0);
  rates.fill(s, t0 + milliseconds(9500));
  EXPECT_DOUBLE_EQ(s.rate_window_seconds, 0.5);
  EXPECT_DOUBLE_EQ(s.ensembles[0].bytes_per_second_by_class[0], 200);
}

TEST(ClassRates, NewEnsembleCountsFromZeroAndACounterGoingBackShowsNoRate) {
  ClassRates rates;
  const auto t0 = Clock::now();
  GatewaySnapshot before = with_bytes({5000, 0, 0, 0}, "a");
  rates.sample(before, t0);
  GatewaySnapshot now = with_bytes({1000, 0, 0, 0}, "a");
  now.ensembles.push_back(with_bytes({0, 0, 3000, 0}, "b").ensembles[0]);
  rates.fill(now, t0 + milliseconds(1000));
  EXPECT_EQ(now.ensembles[0].bytes_per_second_by_class[0], 0);
  EXPECT_DOUBLE_EQ(now.ensembles[1].bytes_per_second_by_class[2], 3000);
}

}  // namespace
}  // namespace egw::proxy
