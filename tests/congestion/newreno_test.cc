#include "congestion/newreno.h"

#include <gtest/gtest.h>

namespace egw::congestion {
namespace {

constexpr ByteCount kMss = 1200;
const WindowLawParams kParams{kMss, 10 * kMss, 2 * kMss};
const Instant t0 = instant_at(ms(0));
const RttInfo kRtt{ms(100), ms(100), ms(100)};

TEST(NewReno, SlowStartCountsBytes) {
  NewReno law(kParams);
  EXPECT_EQ(law.cwnd_bytes(), 12000u);
  EXPECT_EQ(law.ssthresh_bytes(), kInfiniteSsthresh);
  law.on_ack(1200, kRtt, t0, 1);
  EXPECT_EQ(law.cwnd_bytes(), 13200u);  // 12000 + 1200
  law.on_ack(12000, kRtt, t0, 1);
  EXPECT_EQ(law.cwnd_bytes(), 25200u);  // a whole window acked doubles it
}

TEST(NewReno, AckCrossingSsthreshSpillsIntoCongestionAvoidance) {
  NewReno law(kParams);
  law.set_state(12000, 13200);
  law.on_ack(3600, kRtt, t0, 1);
  EXPECT_EQ(law.cwnd_bytes(), 13200u);  // capped at ssthresh; 2400 counted for CA
  law.on_ack(10800, kRtt, t0, 1);       // 2400 + 10800 = 13200 = one full cwnd
  EXPECT_EQ(law.cwnd_bytes(), 14400u);  // + 1 MSS
}

TEST(NewReno, CongestionAvoidanceAddsNMssPerWindow) {
  NewReno one(kParams);
  one.set_state(12000, 12000);
  one.on_ack(6000, kRtt, t0, 1);
  EXPECT_EQ(one.cwnd_bytes(), 12000u);  // half a window: nothing yet
  one.on_ack(6000, kRtt, t0, 1);
  EXPECT_EQ(one.cwnd_bytes(), 13200u);  // RFC 5681 3.1: + SMSS per cwnd acked

  NewReno three(kParams);
  three.set_state(12000, 12000);
  three.on_ack(12000, kRtt, t0, 3);
  EXPECT_EQ(three.cwnd_bytes(), 15600u);  // 12000 + 3 * 1200 (n = 3 flows)
}

TEST(NewReno, DecreaseEmulatesOneOfNFlowsHalving) {
  NewReno one(kParams);
  one.set_state(24000, kInfiniteSsthresh);
  one.on_congestion_event(t0, 1);
  EXPECT_EQ(one.cwnd_bytes(), 12000u);  // 24000 * (1 - 1/2)
  EXPECT_EQ(one.ssthresh_bytes(), 12000u);

  NewReno four(kParams);
  four.set_state(24000, kInfiniteSsthresh);
  four.on_congestion_event(t0, 4);
  EXPECT_EQ(four.cwnd_bytes(), 21000u);  // 24000 * (1 - 1/8) = 24000 * 7 / 8

  NewReno small(kParams);
  small.set_state(3000, kInfiniteSsthresh);
  small.on_congestion_event(t0, 1);
  EXPECT_EQ(small.cwnd_bytes(), 2400u);  // 1500 floored at min_cwnd = 2 * 1200
}

TEST(NewReno, RtoGoesToLossWindow) {
  NewReno law(kParams);
  law.set_state(40000, kInfiniteSsthresh);
  law.on_rto(30000, 1);
  EXPECT_EQ(law.cwnd_bytes(), 1200u);      // LW = 1 SMSS
  EXPECT_EQ(law.ssthresh_bytes(), 15000u);  // max(30000 / 2, 2400)
  law.on_rto(1000, 1);
  EXPECT_EQ(law.ssthresh_bytes(), 2400u);  // max(500, 2 * 1200)
}

}  // namespace
}  // namespace egw::congestion
