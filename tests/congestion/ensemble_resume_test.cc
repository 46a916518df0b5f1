// Resuming from a cached PathState (careful resume, TCP fast start); the state
// machine is drawn in congestion/careful_resume.h.
//
//   cache: cwnd 96000 (80 packets), ssthresh 60000, srtt 100 ms, min_rtt 90 ms
//   t = 0      reconnaissance: the initial window, 10 packets, unmarked
//   t = 100 ms their acks: RTT 100 ms passes the check (45..900 ms); slow
//              start reached 24000, the jump is max(24000, 96000 / 2) = 48000
//   then       20 packets on the ACK clock, unmarked (what slow start would
//              send), and the extra 20 paced at 48000 per 100 ms, marked
//              low priority (DSCP LE)
#include <gtest/gtest.h>

#include "congestion/ensemble.h"
#include "congestion/pacer.h"
#include "congestion/window_law.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::kMss;
using testing::numbers;
using testing::pass_reconnaissance;
using testing::test_config;

constexpr MemberId A = 1;

PathState cached() { return testing::cached_path(); }

TEST(EnsembleResume, StartsAsAFreshFlow) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  const auto st = h.stats();
  EXPECT_TRUE(st.resumed);
  EXPECT_EQ(st.cwnd_bytes, 12000u);  // reconnaissance: the initial window
  // The saved RTT is only compared with the first sample: the timer runs on
  // RFC 6298's initial RTT, so a path that got slower causes no spurious RTO.
  EXPECT_EQ(st.srtt, ms(333));
  EXPECT_FALSE(h.ensemble.low_priority());
  EXPECT_EQ(h.fill(A), 10);  // not paced, not marked
}

// A lost first packet of a resumed busy period (a request, a stream's open)
// is probed on the saved RTT: srtt 100 ms, rttvar 10 ms, max_ack_delay 25 ms
// give a PTO of 165 ms, where RFC 6298's initial RTT gave 999 ms (3 x 333,
// the RTO; the WAN lab's pages at 1-5 % loss stalled on it). The probe sends
// one packet and declares nothing lost; the first sample then rules.
TEST(EnsembleResume, ALostFirstPacketIsProbedOnTheSavedRtt) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  const Instant sent = h.now;
  h.send(A);
  ASSERT_TRUE(h.ensemble.next_timeout());
  EXPECT_EQ(*h.ensemble.next_timeout(), sent + ms(165));
  h.now = *h.ensemble.next_timeout();
  const auto out = h.ensemble.on_timeout(h.now);
  EXPECT_FALSE(out.rto_fired);
  EXPECT_TRUE(out.lost.empty());
  ASSERT_EQ(out.probes.size(), 1u);
  EXPECT_EQ(h.stats().srtt, ms(333));  // the estimator itself still starts fresh
  const PacketNumber probe = h.send(A);
  EXPECT_EQ(*h.ensemble.next_timeout(), h.now + 2 * ms(165));  // backed off
  h.now += ms(100);
  h.ack_range(probe, probe);
  EXPECT_EQ(h.stats().srtt, ms(100));  // the first sample
}

TEST(EnsembleResume, WithoutTheRttCheckTheJumpIsTakenAtOnce) {
  // TCP fast start as published (and the papers' experiments): the saved
  // state is trusted at once; the part beyond the initial window is paced
  // over the saved srtt and marked.
  auto config = test_config();
  config.resume.rtt_check_first = false;
  Harness h(config, cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  EXPECT_EQ(h.cwnd(), 48000u);
  EXPECT_EQ(h.stats().srtt, ms(100));  // seeded
  EXPECT_EQ(h.fill(A), 10 + 2);        // the initial window, then one paced burst
  EXPECT_EQ(h.marked, 2);
  EXPECT_EQ(h.fill_paced(A), 28);      // 40 in all
  EXPECT_EQ(h.marked, 30);
}

TEST(EnsembleResume, JumpsToHalfTheCachedWindowAfterTheRttCheck) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  pass_reconnaissance(h, A);
  EXPECT_EQ(h.cwnd(), 48000u);  // slow start alone: 24000
  EXPECT_EQ(h.stats().ssthresh_bytes, kInfiniteSsthresh);
  EXPECT_FALSE(h.ensemble.low_priority());  // first the ACK-clocked part
}

TEST(EnsembleResume, NoJumpWhenTheRttCheckFails) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  EXPECT_EQ(h.fill(A), 10);
  h.now += ms(1'000);  // > 10 x min_rtt 90 ms: another path
  h.ack_range(1, 10);
  EXPECT_EQ(h.cwnd(), 24000u);  // plain slow start
  EXPECT_FALSE(h.ensemble.low_priority());
}

TEST(EnsembleResume, ExtraBeyondSlowStartIsPacedAndMarked) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  pass_reconnaissance(h, A);
  const Instant start = h.now;
  // Slow start's window at once and unmarked, then one burst of the extra.
  EXPECT_EQ(h.fill(A), 20 + 2);
  EXPECT_EQ(h.marked, 2);
  EXPECT_TRUE(h.ensemble.low_priority());
  const auto release = h.ensemble.next_pacing_release(h.now);
  ASSERT_TRUE(release);
  // The jump window's rate: 40 packets in bursts of 2 per 100 ms, 5 ms apart.
  EXPECT_EQ(*release, h.now + burst_interval_for(48000, ms(100), 2, kMss));
  EXPECT_EQ(*release, h.now + ms(5));
  EXPECT_EQ(h.fill_paced(A), 18);  // the other 9 bursts
  EXPECT_EQ(h.marked, 20);
  EXPECT_EQ(h.now, start + ms(45));
  EXPECT_FALSE(h.ensemble.low_priority());      // the extra is used up
  EXPECT_FALSE(h.ensemble.can_send(A, h.now));  // and the window is full
}

TEST(EnsembleResume, ValidatedWhenTheJumpIsAckedWithoutLoss) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  pass_reconnaissance(h, A);
  ASSERT_EQ(h.fill_paced(A), 40);  // packets 11..50
  h.now += ms(100);
  h.ack_range(11, 30);
  EXPECT_EQ(h.cwnd(), 48000u);  // acks do not grow an unvalidated window
  h.ack_range(31, 50);
  const auto st = h.stats();
  EXPECT_EQ(st.cwnd_bytes, 48000u);       // the jump holds
  EXPECT_EQ(st.ssthresh_bytes, 60000u);   // the saved ssthresh
  EXPECT_EQ(st.loss_rounds, 0u);
  EXPECT_FALSE(h.ensemble.low_priority());
  // Normal operation: slow start up to the saved ssthresh, then CA.
  EXPECT_EQ(h.fill(A), 40);
  h.now += ms(100);
  h.ack_range(51, 90);
  EXPECT_EQ(h.cwnd(), 60000u);  // 48000 + 12000 reaches ssthresh; CA needs 60000 more
}

// The model law grows its window from rate samples, not through the
// domain's grow(): held there too while the jump is unvalidated. Its
// startup grows until the initial window is delivered (Linux BBR); a busy
// period that began with a request's two packets had not, and the jump's
// first acks grew the window past it (as after the idle restart of a
// keep-alive PING, ScenarioIdleRestart).
TEST(EnsembleResume, AnUnvalidatedJumpHoldsTheModelLawsWindowToo) {
  EnsembleConfig config = test_config();
  config.law = WindowLawKind::model;
  Harness h(config, cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.send(A);
  h.send(A);
  h.now += ms(100);
  h.ack_range(1, 2);  // the RTT check passes: the jump
  ASSERT_EQ(h.cwnd(), 48000u);
  ASSERT_GT(h.fill_paced(A), 30);
  h.now += ms(100);
  h.ack_range(3, 12);
  EXPECT_EQ(h.cwnd(), 48000u);
}

TEST(EnsembleResume, LossFallsBackWithoutPenalty) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  pass_reconnaissance(h, A);
  ASSERT_EQ(h.fill_paced(A), 40);  // packets 11..50
  h.now += ms(100);
  const auto out = h.ack_range(15, 50);
  EXPECT_EQ(numbers(out.lost), (std::vector<PacketNumber>{11, 12, 13, 14}));
  const auto st = h.stats();
  EXPECT_EQ(st.cwnd_bytes, 24000u);                 // what reconnaissance proved
  EXPECT_EQ(st.ssthresh_bytes, kInfiniteSsthresh);  // no decrease charged
  EXPECT_EQ(st.loss_rounds, 0u);
  EXPECT_EQ(st.packets_lost, 4u);
  EXPECT_FALSE(h.ensemble.low_priority());
  EXPECT_EQ(h.fill(A), 20);
}

TEST(EnsembleResume, LossInReconnaissanceIsAnOrdinaryLossRound) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  EXPECT_EQ(h.fill(A), 10);
  h.now += ms(100);
  const auto out = h.ack_range(2, 10);
  EXPECT_EQ(numbers(out.lost), (std::vector<PacketNumber>{1}));
  EXPECT_EQ(h.stats().loss_rounds, 1u);
  EXPECT_EQ(h.cwnd(), 6000u);  // 12000 / 2, and no jump after it
  EXPECT_FALSE(h.ensemble.low_priority());
}

TEST(EnsembleResume, SmallCachedWindowIsNoResume) {
  PathState small = cached();
  small.cwnd_bytes = 20000;  // half is 10000 < initial window 12000
  Harness h(test_config(), small);
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  EXPECT_EQ(h.cwnd(), 12000u);
  EXPECT_FALSE(h.ensemble.low_priority());
  EXPECT_EQ(h.fill(A), 10);  // not paced
}

TEST(EnsembleResume, DisabledResumeIsAFreshStart) {
  auto config = test_config();
  config.resume.enabled = false;
  Harness h(config, cached());
  EXPECT_EQ(h.cwnd(), 12000u);
  EXPECT_FALSE(h.stats().resumed);
  EXPECT_EQ(h.stats().srtt, ms(333));
}

TEST(EnsembleResume, AnUnvalidatedJumpIsNotObservedAsReliable) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  pass_reconnaissance(h, A);
  EXPECT_TRUE(h.ensemble.observe(h.now).window_unreliable);  // a claim, not knowledge
  h.fill_paced(A);
  h.now += ms(100);
  h.ack_range(11, 50);
  const PathObservation o = h.ensemble.observe(h.now);
  EXPECT_FALSE(o.window_unreliable);
  EXPECT_EQ(o.state.cwnd_bytes, 48000u);  // validated knowledge
}

}  // namespace
}  // namespace egw::congestion
