// Properties every window law must have, run against each kind.
#include "congestion/window_law.h"

#include <gtest/gtest.h>

#include "congestion/cubic.h"
#include "congestion/ensemble.h"
#include "congestion/newreno.h"

namespace egw::congestion {
namespace {

const WindowLawParams kParams{1200, 12000, 2400};
const Instant t0 = instant_at(ms(0));
const RttInfo kRtt{ms(50), ms(50), ms(50)};

class WindowLawTest : public ::testing::TestWithParam<WindowLawKind> {};

TEST_P(WindowLawTest, FactoryBuildsTheRequestedKind) {
  auto law = make_window_law(GetParam(), kParams);
  if (GetParam() == WindowLawKind::cubic) {
    EXPECT_NE(dynamic_cast<Cubic*>(law.get()), nullptr);
  } else {
    EXPECT_NE(dynamic_cast<NewReno*>(law.get()), nullptr);
  }
  EXPECT_EQ(law->cwnd_bytes(), 12000u);
  EXPECT_TRUE(law->in_slow_start());
}

TEST_P(WindowLawTest, SlowStartDoublesPerWindow) {
  auto law = make_window_law(GetParam(), kParams);
  law->on_ack(12000, kRtt, t0, 1);
  EXPECT_EQ(law->cwnd_bytes(), 24000u);  // 12000 + 12000
}

TEST_P(WindowLawTest, CongestionEventShrinksAndLeavesSlowStart) {
  auto law = make_window_law(GetParam(), kParams);
  law->set_state(48000, kInfiniteSsthresh);
  law->on_congestion_event(t0, 1);
  EXPECT_LT(law->cwnd_bytes(), 48000u);
  EXPECT_GE(law->cwnd_bytes(), 24000u);  // halving is the most any law takes
  EXPECT_FALSE(law->in_slow_start());
  law->on_ack(1200, kRtt, t0 + ms(10), 1);
  EXPECT_LT(law->cwnd_bytes(), law->ssthresh_bytes() + 1200);  // CA grows slowly
}

TEST_P(WindowLawTest, SetStateOverwrites) {
  auto law = make_window_law(GetParam(), kParams);
  law->set_state(30000, 60000);
  EXPECT_EQ(law->cwnd_bytes(), 30000u);
  EXPECT_EQ(law->ssthresh_bytes(), 60000u);
  law->set_state(30000, 0);  // 0 = unknown: a fresh flow's ssthresh
  EXPECT_EQ(law->ssthresh_bytes(), kInfiniteSsthresh);
}

// RFC 9002 7.2 / 7.3.3: after path MTU discovery raises the datagram size
// to 1472, congestion avoidance adds one full datagram per window acked and
// an RTO leaves one; the window itself is not rescaled.
TEST_P(WindowLawTest, NewDatagramSizeIsTheUnitFromThenOn) {
  auto law = make_window_law(GetParam(), kParams);
  law->set_state(14720, 14720);
  law->set_params(WindowLawParams{1472, 14720, 2944});
  EXPECT_EQ(law->cwnd_bytes(), 14720u);  // untouched
  EXPECT_EQ(law->ssthresh_bytes(), 14720u);
  // NewReno: + SMSS per cwnd acked. CUBIC: at the start of an epoch W_cubic
  // is W_max = cwnd, below the Reno-friendly W_est = cwnd + 1 * SMSS.
  law->on_ack(14720, kRtt, t0, 1);
  EXPECT_EQ(law->cwnd_bytes(), 14720u + 1472u);
  law->on_rto(16192, 1);
  EXPECT_EQ(law->cwnd_bytes(), 1472u);  // RFC 5681 3.1: LW = 1 SMSS
}

INSTANTIATE_TEST_SUITE_P(AllLaws, WindowLawTest,
                         ::testing::Values(WindowLawKind::newreno, WindowLawKind::cubic));

}  // namespace
}  // namespace egw::congestion
