// `n_flows` coupling behaves like n flows (EFCM 2.4.2): the window grows by
// one SMSS per cwnd/n acked (spread, not n SMSS at once), and every member
// that loses in its own loss round takes one 1/(2n) decrease.
#include <gtest/gtest.h>

#include "congestion/cubic.h"
#include "congestion/newreno.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::kMss;
using testing::test_config;

const WindowLawParams kParams{kMss, 10 * kMss, 2 * kMss};
const Instant t0 = instant_at(ms(0));
const RttInfo kRtt{ms(100), ms(100), ms(100)};

TEST(NFlowsNewReno, GrowthIsSpreadOverTheWindow) {
  NewReno four(kParams);
  four.set_state(12000, 12000);
  four.on_ack(3000, kRtt, t0, 4);
  EXPECT_EQ(four.cwnd_bytes(), 13200u);  // 3000 = cwnd / 4 acked: + 1 SMSS already
  NewReno one(kParams);
  one.set_state(12000, 12000);
  one.on_ack(3000, kRtt, t0, 1);
  EXPECT_EQ(one.cwnd_bytes(), 12000u);  // one flow needs a whole cwnd
}

TEST(NFlowsCubic, BatchOfDecreasesKeepsOneWmax) {
  Cubic batch(kParams);
  batch.set_state(100 * kMss, 100 * kMss);
  batch.on_congestion_events(t0, 2, 2);
  // beta_2 = (2 - 1 + 0.7) / 2 = 0.85; twice: 120000 * 0.85 * 0.85 = 86700.
  EXPECT_EQ(batch.cwnd_bytes(), 86700u);
  EXPECT_EQ(batch.ssthresh_bytes(), 86700u);
  Cubic once(kParams);
  once.set_state(100 * kMss, 100 * kMss);
  once.on_congestion_events(t0, 2, 1);
  EXPECT_EQ(once.cwnd_bytes(), 102000u);  // 120000 * 0.85
}

// Members 1 and 2 each lose one packet, declared by one ack of later packets.
ByteCount cwnd_after_two_members_lose(CouplingMode coupling, std::uint64_t* rounds) {
  EnsembleConfig config = test_config(coupling);
  Harness h(config);
  h.ensemble.add_member(1, ContentClass::bulk, h.now);
  h.ensemble.add_member(2, ContentClass::bulk, h.now);
  h.send(1);  // 1: lost
  h.send(2);  // 2: lost
  for (int i = 0; i < 4; ++i) h.send(i % 2 == 0 ? 1 : 2);  // 3..6: acked
  h.now += ms(100);
  const AckOutcome out = h.ack_range(3, 6);
  EXPECT_EQ(out.lost.size(), 2u);  // 3 later packets acked (RFC 9002 6.1.1)
  *rounds = h.stats().loss_rounds;
  return h.cwnd();
}

TEST(NFlowsEnsemble, EachMemberThatLosesTakesOneDecrease) {
  std::uint64_t rounds = 0;
  // Losses before acks (RFC 9002 A.7), two decreases of 1/4 with both members
  // in flight (n = 2: 1 - 1/(2n) = 3/4): 12000 * 3/4 = 9000, 9000 * 3/4 = 6750.
  EXPECT_EQ(cwnd_after_two_members_lose(CouplingMode::n_flows, &rounds), 6750u);
  EXPECT_EQ(rounds, 2u);
  // `single`: one flow, one decrease per round: 12000 / 2 = 6000.
  EXPECT_EQ(cwnd_after_two_members_lose(CouplingMode::single, &rounds), 6000u);
  EXPECT_EQ(rounds, 1u);
}

TEST(NFlowsEnsemble, SecondLossOfTheSameMemberInItsRoundDoesNotDecreaseAgain) {
  Harness h(test_config(CouplingMode::n_flows));
  h.ensemble.add_member(1, ContentClass::bulk, h.now);
  h.ensemble.add_member(2, ContentClass::bulk, h.now);
  h.send(1);  // 1: lost
  for (int i = 0; i < 3; ++i) h.send(2);  // 2..4: acked
  h.send(1);  // 5: lost, sent before member 1's decrease
  for (int i = 0; i < 3; ++i) h.send(2);  // 6..8: acked
  h.now += ms(100);
  h.ack_range(2, 4);
  EXPECT_EQ(h.stats().loss_rounds, 1u);
  h.ack_range(6, 8);
  EXPECT_EQ(h.stats().packets_lost, 2u);
  EXPECT_EQ(h.stats().loss_rounds, 1u);  // packet 5 <= member 1's recovery point
}

}  // namespace
}  // namespace egw::congestion
