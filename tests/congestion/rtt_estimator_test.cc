#include "congestion/rtt_estimator.h"

#include <gtest/gtest.h>

namespace egw::congestion {
namespace {

TEST(RttEstimator, BeforeAnySampleUsesInitialRtt) {
  RttEstimator rtt(RttConfig{ms(333), ms(200), ms(60'000), ms(1)});
  EXPECT_FALSE(rtt.has_sample());
  EXPECT_EQ(rtt.srtt(), ms(333));
  EXPECT_EQ(rtt.rttvar(), us(166'500));  // 333 / 2 (RFC 9002 6.2.2)
  EXPECT_EQ(rtt.rto(), us(999'000));     // 333 + 4 * 166.5
}

TEST(RttEstimator, FirstAndSecondSampleFollowRfc6298) {
  RttEstimator rtt;
  rtt.on_sample(ms(100), ms(0));
  EXPECT_EQ(rtt.srtt(), ms(100));   // 2.2: SRTT = R
  EXPECT_EQ(rtt.rttvar(), ms(50));  //      RTTVAR = R / 2
  EXPECT_EQ(rtt.rto(), ms(300));    // 100 + 4 * 50
  rtt.on_sample(ms(120), ms(0));
  EXPECT_EQ(rtt.rttvar(), us(42'500));  // (3 * 50 + |100 - 120|) / 4 = 42.5
  EXPECT_EQ(rtt.srtt(), us(102'500));   // (7 * 100 + 120) / 8 = 102.5
  EXPECT_EQ(rtt.min_rtt(), ms(100));
}

TEST(RttEstimator, AckDelayIsSubtractedOnlyAboveMinRtt) {
  RttEstimator a;
  a.on_sample(ms(100), ms(0));
  a.on_sample(ms(130), ms(20));  // 130 >= 100 + 20: adjusted = 110 (RFC 9002 5.3)
  EXPECT_EQ(a.srtt(), us(101'250));  // (7 * 100 + 110) / 8
  EXPECT_EQ(a.rttvar(), ms(40));     // (3 * 50 + 10) / 4

  RttEstimator b;
  b.on_sample(ms(100), ms(0));
  b.on_sample(ms(110), ms(20));  // 110 < 100 + 20: the raw 110 is used
  EXPECT_EQ(b.srtt(), us(101'250));
  EXPECT_EQ(b.min_rtt(), ms(100));
}

TEST(RttEstimator, RtoIsClampedAndBacksOff) {
  RttEstimator rtt(RttConfig{ms(333), ms(200), ms(2'000), ms(1)});
  rtt.on_sample(ms(10), ms(0));
  EXPECT_EQ(rtt.rto(), ms(200));  // 10 + 4 * 5 = 30 < min_rto
  rtt.on_rto_expired();
  EXPECT_EQ(rtt.rto(), ms(400));  // RFC 6298 5.5: doubled
  rtt.on_rto_expired();
  EXPECT_EQ(rtt.rto(), ms(800));
  for (int i = 0; i < 40; ++i) rtt.on_rto_expired();
  EXPECT_EQ(rtt.rto(), ms(2'000));  // capped at max_rto
  rtt.reset_backoff();
  EXPECT_EQ(rtt.rto(), ms(200));
}

TEST(RttEstimator, SeedContinuesSmoothing) {
  RttEstimator rtt;
  rtt.seed(ms(80), ms(10), ms(70));
  EXPECT_TRUE(rtt.has_sample());
  EXPECT_EQ(rtt.min_rtt(), ms(70));
  rtt.on_sample(ms(160), ms(0));
  EXPECT_EQ(rtt.srtt(), ms(90));     // (7 * 80 + 160) / 8, not reset to 160
  EXPECT_EQ(rtt.rttvar(), us(27'500));  // (3 * 10 + 80) / 4
}

}  // namespace
}  // namespace egw::congestion
