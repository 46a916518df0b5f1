// `random_loss: veno`: a loss round while the window keeps less than 3
// packets queued is taken as random (TCP Veno) and cuts 1/5, not 1/2.
#include <gtest/gtest.h>

#include "congestion/cubic.h"
#include "congestion/newreno.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion::testing {
namespace {

constexpr MemberId A = 1;

EnsembleConfig veno_config() {
  EnsembleConfig c = test_config();
  c.random_loss = RandomLoss::veno;
  return c;
}

// Slow start to 20 packets (RTT 100 ms), then a round whose acks arrive
// after `second_rtt` and reveal packet 11 lost (packets 12-14 acked).
void lose_one_after(Harness& h, Duration second_rtt) {
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.fill(A);
  h.now += ms(100);
  h.ack_range(1, 10);
  EXPECT_EQ(h.fill(A), 20);
  h.now += second_rtt;
  h.ack_range(12, 14);
}

TEST(EnsembleVeno, LossWithoutAQueueCutsOneFifth) {
  // Backlog: 20 packets * (110 - 100) / 110 = 1.8 < 3.
  Harness h(veno_config());
  lose_one_after(h, ms(110));
  EXPECT_EQ(h.cwnd(), 19200u);  // 24000 * 4/5
  EXPECT_EQ(h.stats().loss_rounds, 1u);
  EXPECT_EQ(h.stats().random_loss_rounds, 1u);
}

TEST(EnsembleVeno, LossWithAQueueHalves) {
  // Backlog: 20 packets * (150 - 100) / 150 = 6.7 >= 3: an overflow.
  Harness h(veno_config());
  lose_one_after(h, ms(150));
  EXPECT_EQ(h.cwnd(), 12000u);
  EXPECT_EQ(h.stats().random_loss_rounds, 0u);
}

TEST(EnsembleVeno, CongestionSettingHalvesEvenWithoutAQueue) {
  Harness h(test_config());
  lose_one_after(h, ms(110));
  EXPECT_EQ(h.cwnd(), 12000u);
  EXPECT_EQ(h.stats().random_loss_rounds, 0u);
}

TEST(EnsembleVeno, OneCutPerLossRoundAsForCongestion) {
  Harness h(veno_config());
  lose_one_after(h, ms(110));
  h.ack_range(16, 18);  // packet 15 lost in the same round
  EXPECT_EQ(h.cwnd(), 19200u);
  EXPECT_EQ(h.stats().loss_rounds, 1u);
}

// Seen in the WAN lab: a sender held back by flow control sends in bursts;
// the tail of one burst overflows the queue, and the loss is detected by
// acks of the next burst, sent after the queue drained, whose RTT is the
// minimum. The round's RTT (srtt) still shows the queue: an overflow.
TEST(EnsembleVeno, BurstTailLostAndDetectedAfterTheQueueDrainedHalves) {
  Harness h(veno_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.fill(A);  // 1-10
  h.now += ms(100);
  h.ack_range(1, 10);  // min RTT 100 ms; cwnd 20 packets
  for (int i = 0; i < 20; ++i) h.send(A);  // 11-30: a queue builds
  h.now += ms(180);
  for (PacketNumber n = 11; n <= 30; ++n) h.ack_range(n, n);  // 20 samples of 180 ms
  ASSERT_GT(h.stats().srtt, ms(160));
  // A burst of 20 (31-50); its tail, 50, overflows the queue.
  for (int i = 0; i < 20; ++i) h.send(A);
  h.now += ms(100);
  // The next burst (51-70) leaves once the queue has drained.
  for (int i = 0; i < 20; ++i) h.send(A);
  h.now += ms(80);
  h.ack_range(31, 49);
  h.now += ms(20);
  const ByteCount before = h.cwnd();
  h.ack({AckedRange{31, 49}, AckedRange{51, 53}});  // 51-53 after 100 ms, the minimum: 50 is lost
  EXPECT_EQ(h.stats().loss_rounds, 1u);
  EXPECT_EQ(h.stats().random_loss_rounds, 0u);
  EXPECT_EQ(h.cwnd(), before / 2);
}

TEST(EnsembleVeno, ProductDefault) { EXPECT_EQ(EnsembleConfig{}.random_loss, RandomLoss::veno); }

TEST(NewRenoVeno, RandomLossKeepsFourFifthsOrOneOfNFlowsCuttingOneFifth) {
  const WindowLawParams params{kMss, 10 * kMss, 2 * kMss};
  NewReno one(params);
  one.set_state(24000, kInfiniteSsthresh);
  one.on_random_loss_events(instant_at(ms(0)), 1, 1);
  EXPECT_EQ(one.cwnd_bytes(), 19200u);
  EXPECT_EQ(one.ssthresh_bytes(), 19200u);
  NewReno four(params);
  four.set_state(24000, kInfiniteSsthresh);
  four.on_random_loss_events(instant_at(ms(0)), 4, 2);  // two members, 1/20 each
  EXPECT_EQ(four.cwnd_bytes(), 21660u);                 // 24000 * 19/20 * 19/20
}

TEST(CubicVeno, RandomLossCutsTwoFifthsOfBetasCut) {
  const WindowLawParams params{kMss, 10 * kMss, 2 * kMss};
  Cubic law(params);
  law.set_state(24000, kInfiniteSsthresh);
  law.on_random_loss_events(instant_at(ms(0)), 1, 1);
  EXPECT_EQ(law.cwnd_bytes(), 21120u);  // 24000 * (1 - 0.3 * 0.4) = 24000 * 0.88
  EXPECT_DOUBLE_EQ(law.w_max_bytes(), 24000.0);
}

}  // namespace
}  // namespace egw::congestion::testing
