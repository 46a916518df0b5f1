#include "congestion/cubic.h"

#include <cmath>

#include <gtest/gtest.h>

namespace egw::congestion {
namespace {

constexpr ByteCount kMss = 1200;
const WindowLawParams kParams{kMss, 10 * kMss, 2 * kMss};
const Instant t0 = instant_at(ms(1'000));
const RttInfo kRtt{ms(100), ms(100), ms(100)};

TEST(Cubic, NFlowConstants) {
  EXPECT_DOUBLE_EQ(Cubic::beta_for(1), 0.7);
  EXPECT_DOUBLE_EQ(Cubic::beta_for(4), 0.925);  // (4 - 1 + 0.7) / 4
  EXPECT_DOUBLE_EQ(Cubic::c_for(1), 0.4);
  EXPECT_DOUBLE_EQ(Cubic::c_for(4), 1.6);  // 4 * 0.4
}

TEST(Cubic, DecreaseAndKMatchRfc9438) {
  Cubic law(kParams);
  law.set_state(120000, kInfiniteSsthresh);  // 100 segments
  law.on_congestion_event(t0, 1);
  EXPECT_EQ(law.cwnd_bytes(), 84000u);  // 120000 * 0.7 (4.6)
  EXPECT_EQ(law.ssthresh_bytes(), 84000u);
  EXPECT_DOUBLE_EQ(law.w_max_bytes(), 120000.0);
  law.on_ack(kMss, kRtt, t0, 1);  // first ack in CA starts the epoch
  // K = cbrt((W_max - cwnd_epoch) / C) = cbrt((100 - 70) / 0.4) = cbrt(75) = 4.2172 s
  EXPECT_NEAR(law.k_seconds(), 4.2172, 1e-4);
  EXPECT_NEAR(law.w_cubic_bytes(law.k_seconds()), 120000.0, 1e-6);  // W_cubic(K) = W_max
  // W_cubic(0) = C * (-K)^3 + W_max = 100 - 0.4 * 75 = 70 segments
  EXPECT_NEAR(law.w_cubic_bytes(0), 84000.0, 1e-6);
}

TEST(Cubic, FastConvergenceLowersWmax) {
  Cubic law(kParams);
  law.set_state(120000, kInfiniteSsthresh);
  law.on_congestion_event(t0, 1);  // W_max = 120000, cwnd = 84000
  EXPECT_DOUBLE_EQ(law.w_max_bytes(), 120000.0);
  law.on_congestion_event(t0 + ms(1), 1);  // again before reaching W_max
  // 4.7: W_max = 84000 * (1 + 0.7) / 2 = 71400
  EXPECT_NEAR(law.w_max_bytes(), 71400.0, 1e-6);
  EXPECT_EQ(law.cwnd_bytes(), 58800u);  // 84000 * 0.7
}

TEST(Cubic, NFlowsDecreaseIsGentler) {
  Cubic law(kParams);
  law.set_state(120000, kInfiniteSsthresh);
  law.on_congestion_event(t0, 4);
  EXPECT_EQ(law.cwnd_bytes(), 111000u);  // 120000 * 0.925
}

TEST(Cubic, RenoFriendlyRegionAtTheStartOfAnEpoch) {
  Cubic law(kParams);
  law.set_state(84000, 84000);  // in CA, no W_max remembered: W_max = cwnd, K = 0
  law.on_ack(kMss, kRtt, t0, 1);
  EXPECT_DOUBLE_EQ(law.k_seconds(), 0.0);
  // W_est = 84000 + alpha(=1, no prior reduction) * 1200 * 1200 / 84000 = 84017.14;
  // W_cubic(0) = W_max = 84000 < W_est, so cwnd = W_est (4.3).
  EXPECT_NEAR(law.w_est_bytes(), 84017.14, 0.01);
  EXPECT_EQ(law.cwnd_bytes(), 84017u);
}

TEST(Cubic, WindowReachesWmaxAfterKAndThenProbesBeyond) {
  Cubic law(kParams);
  law.set_state(120000, kInfiniteSsthresh);
  law.on_congestion_event(t0, 1);
  // Acks arrive every 10 ms, each for a tenth of the window (RTT 100 ms).
  Instant now = t0;
  const double k = std::cbrt(75.0);  // 4.2172 s, as above
  while (now < t0 + us(static_cast<std::int64_t>(k * 1e6))) {
    law.on_ack(law.cwnd_bytes() / 10, kRtt, now, 1);
    now += ms(10);
  }
  // target = W_cubic(t + RTT): at t = K the window is at W_max, within 2 %.
  EXPECT_NEAR(static_cast<double>(law.cwnd_bytes()), 120000.0, 2400.0);
  EXPECT_LT(law.cwnd_bytes(), 123000u);  // the plateau: no overshoot at K
  for (int i = 0; i < 100; ++i) {  // one more second: convex region
    law.on_ack(law.cwnd_bytes() / 10, kRtt, now, 1);
    now += ms(10);
  }
  // W_cubic(K + 1.1) = 100 + 0.4 * 1.1^3 = 100.53 segments = 120639 bytes.
  // (Later, near t = 5.7 s, the Reno-friendly W_est = 84000 + 0.53 * 1200
  // per RTT would overtake the cubic curve at this 100 ms RTT.)
  EXPECT_GT(law.cwnd_bytes(), 120000u);
  EXPECT_NEAR(static_cast<double>(law.cwnd_bytes()), 120639.0, 1000.0);
  EXPECT_LT(law.w_est_bytes(), 120000.0);
}

TEST(Cubic, RtoRestartsFromOneSegment) {
  Cubic law(kParams);
  law.set_state(120000, kInfiniteSsthresh);
  law.on_rto(120000, 1);
  EXPECT_EQ(law.cwnd_bytes(), kMss);
  EXPECT_EQ(law.ssthresh_bytes(), 84000u);  // 4.8: ssthresh = cwnd * beta
}

}  // namespace
}  // namespace egw::congestion
