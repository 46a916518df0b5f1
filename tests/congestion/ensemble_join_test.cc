// Joining an ensemble that already has data in flight (seed 003, EFCM).
//
//   A: |==== 10 packets in flight (cwnd 12000) ====|
//   B becomes backlogged here: share = 12000 * 1 / 2 active tickets = 6000
//   bytes = 5 packets. ack_clocked: each acked packet of A releases one
//   packet of B's share, A's window increase is held until the share is out,
//   and a timer releases one packet per SRTT / 5 if A's acks are too few.
#include <algorithm>

#include <gtest/gtest.h>

#include "congestion/ensemble.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::kMss;
using testing::test_config;

constexpr MemberId A = 1;
constexpr MemberId B = 2;

Harness& start_with_a_full_window(Harness& h) {
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  EXPECT_EQ(h.fill(A), 10);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  h.ensemble.set_backlogged(B, true, h.now);  // B joins: it has data
  return h;
}

const auto kAlwaysData = [](MemberId) { return true; };

TEST(EnsembleJoin, AckClockedJoinTakesOnePacketPerAckOfTheOthersInSlowStart) {
  auto config = test_config();
  config.join = JoinMode::ack_clocked;
  Harness h(config);
  start_with_a_full_window(h);
  EXPECT_FALSE(h.ensemble.can_send(B, h.now));  // no burst: nothing released yet
  EXPECT_FALSE(h.pick(kAlwaysData, {A, B}));

  std::vector<std::vector<MemberId>> picks_per_ack;
  for (PacketNumber acked = 1; acked <= 6; ++acked) {
    h.now += ms(10);
    h.ack_range(acked, acked);
    std::vector<MemberId> picks;
    while (auto m = h.pick(kAlwaysData, {A, B})) {
      picks.push_back(*m);
      h.send(*m);
      ASSERT_LE(h.flight(), h.cwnd());  // the aggregate never overshoots
    }
    picks_per_ack.push_back(picks);
  }
  // Slow start frees 2 slots per ack: the released one is B's, the growth
  // slot goes by stride (B already leads, so A) until B's 5 are out.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(picks_per_ack[i], (std::vector<MemberId>{B, A})) << i;
  }
  EXPECT_EQ(picks_per_ack[5].size(), 2u);  // the join is over: plain slow start
}

// A keep-alive PING (or MAX_DATA) in flight is no flow to join behind: a
// stream starting then gets the whole window at once, not a share released
// over an RTT (which, before any RTT sample, is initial_rtt = 333 ms).
TEST(EnsembleJoin, ControlPacketsInFlightAreNoFlowToJoinBehind) {
  auto config = test_config();
  config.join = JoinMode::ack_clocked;
  Harness h(config);
  h.send(kControlMember);  // a PING
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  h.ensemble.set_backlogged(B, true, h.now);
  EXPECT_EQ(h.fill(B), 9);  // the window less the PING, at once
}

TEST(EnsembleJoin, AckClockedJoinHoldsTheIncreaseInCongestionAvoidance) {
  Harness h(test_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  ASSERT_EQ(h.fill(A), 10);
  h.now += ms(100);
  h.ack_range(2, 10);  // 1 lost: cwnd = ssthresh = 6000, congestion avoidance
  ASSERT_EQ(h.cwnd(), 6000u);
  ASSERT_EQ(h.fill(A), 5);  // 11..15
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  h.ensemble.set_backlogged(B, true, h.now);  // share 6000 / 2 = 3000: 2 packets
  std::vector<std::vector<MemberId>> picks_per_ack;
  for (PacketNumber acked = 11; acked <= 14; ++acked) {
    h.now += ms(10);
    h.ack_range(acked, acked);
    std::vector<MemberId> picks;
    while (auto m = h.pick(kAlwaysData, {A, B})) {
      picks.push_back(*m);
      h.send(*m);
    }
    picks_per_ack.push_back(picks);
  }
  // One slot per ack (the increase is held), the first two are B's.
  EXPECT_EQ(picks_per_ack[0], std::vector<MemberId>{B});
  EXPECT_EQ(picks_per_ack[1], std::vector<MemberId>{B});
  EXPECT_EQ(picks_per_ack[2].size(), 1u);
  EXPECT_EQ(h.cwnd(), 6000u);
}

TEST(EnsembleJoin, ClockedJoinNeverBurstsIntoRoomInTheWindow) {
  // A is limited by its receiver: 2 packets in a 10-packet window. Room for
  // 8 changes nothing: B's share leaves one packet per ack of A, or per timer.
  auto config = test_config();
  Harness h(config);
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.send(A);
  h.send(A);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  h.ensemble.set_backlogged(B, true, h.now);
  EXPECT_EQ(h.fill(B), 0);
  h.now += ms(100);
  h.ack_range(1, 1);
  EXPECT_EQ(h.fill(B), 1);  // one per acked packet of A
  h.ack_range(2, 2);
  EXPECT_EQ(h.fill(B), 1);
  // No more acks of A: the timer releases the rest of the share (5 packets)
  // one at a time, SRTT / 5 apart: 20 ms on the 100 ms the acks of A
  // measured (the join began before any sample, on the initial 333 ms).
  for (int sent = 2; sent < 4; ++sent) {
    const auto release = h.ensemble.next_pacing_release(h.now);
    ASSERT_TRUE(release);
    EXPECT_EQ(*release - h.now, ms(20));
    h.now = *release;
    EXPECT_EQ(h.fill(B), 1);
  }
  // The last packet of the share ends the join: from there B is an ordinary
  // member and the window decides: cwnd 12000, B's 5 packets in flight.
  h.now = *h.ensemble.next_pacing_release(h.now);
  EXPECT_EQ(h.fill(B), 1 + 5);
  EXPECT_EQ(h.flight(), h.cwnd());
}

TEST(EnsembleJoin, ImmediateJoinBurstsBeyondTheWindow) {
  auto config = test_config();
  config.join = JoinMode::immediate;
  Harness h(config);
  start_with_a_full_window(h);
  EXPECT_FALSE(h.ensemble.can_send(A, h.now));
  EXPECT_TRUE(h.ensemble.can_send(B, h.now));
  EXPECT_EQ(h.fill(B), 5);  // the whole share at once
  EXPECT_EQ(h.flight(), 18000u);  // 12000 + 6000: cwnd exceeded by the share
  EXPECT_EQ(h.cwnd(), 12000u);
  EXPECT_FALSE(h.ensemble.can_send(B, h.now));
}

TEST(EnsembleJoin, PacedJoinReleasesTheShareByTimer) {
  auto config = test_config();
  config.join = JoinMode::paced;
  Harness h(config);
  start_with_a_full_window(h);
  EXPECT_EQ(h.fill(B), 2);  // one burst of max_burst_packets
  const auto release = h.ensemble.next_pacing_release(h.now);
  ASSERT_TRUE(release);
  // No RTT sample yet: SRTT = 333 ms, alpha = 2, cwnd 10 packets:
  // 2 * 333 ms / 10 = 66.6 ms between bursts.
  EXPECT_EQ(*release - h.now, us(66'600));
  h.now = *release;
  EXPECT_EQ(h.fill(B), 2);
  h.now = *h.ensemble.next_pacing_release(h.now);
  EXPECT_EQ(h.fill(B), 1);  // 6000 / 1200 = 5 in all
  EXPECT_EQ(h.flight(), 18000u);
  EXPECT_FALSE(h.ensemble.next_pacing_release(h.now));  // window-limited now
}

TEST(EnsembleJoin, NoJoinStateWhenNothingIsInFlight) {
  auto config = test_config();
  config.join = JoinMode::immediate;
  Harness h(config);
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  h.ensemble.set_backlogged(B, true, h.now);
  EXPECT_EQ(h.fill(B), 10);  // just the shared window
  EXPECT_EQ(h.flight(), 12000u);
}

TEST(EnsembleJoin, LossCancelsAnImmediateAllowance) {
  auto config = test_config();
  config.join = JoinMode::immediate;
  Harness h(config);
  start_with_a_full_window(h);
  h.send(B);  // 11: one packet of the share used
  h.now += ms(50);
  h.ack_range(4, 6);  // 1..3 lost: one decrease, the allowance is gone
  EXPECT_EQ(h.cwnd(), 6000u);  // 12000 / 2 (the loss before the acks)
  // Flight 7..11 = 6000. With the 4800 left of its share B could send 4 more
  // whatever the window; without it nothing: 6000 + 1200 > 6000.
  EXPECT_EQ(h.fill(B), 0);
}

TEST(EnsembleJoin, NFlowsJoinerBringsItsInitialWindow) {
  // EFCM 2.4.1: the aggregate grows by the newcomer's initial window, and its
  // fair share of that is what the ACK clock releases.
  Harness h(test_config(CouplingMode::n_flows));
  start_with_a_full_window(h);
  EXPECT_EQ(h.cwnd(), 24000u);  // 12000 + 12000
  for (PacketNumber acked = 1; acked <= 9; ++acked) {
    h.now += ms(10);
    h.ack_range(acked, acked);
    EXPECT_EQ(h.fill(B), 1) << "one packet per ack of A, " << acked;
  }
  // 24000 / 2 = 12000 = 10 packets: the 10th ack releases the last one.
}

TEST(EnsembleJoin, IdleMembersDoNotCountInNFlows) {
  // One bulk member and nine open but idle streams: the aggregate is as
  // aggressive as one flow, not ten (EFCM's n counts active members).
  Harness h(test_config(CouplingMode::n_flows));
  for (MemberId m = 1; m <= 10; ++m) h.ensemble.add_member(m, ContentClass::bulk, h.now);
  h.ensemble.set_backlogged(1, true, h.now);
  EXPECT_EQ(h.stats().active_members, 1u);
  EXPECT_EQ(h.fill(1), 10);
  h.now += ms(100);
  const auto out = h.ack_range(2, 10);  // 1 lost
  ASSERT_EQ(out.lost.size(), 1u);
  EXPECT_EQ(h.cwnd(), 6000u);  // halved as one flow: 12000 / 2, not 12000 * 19 / 20
}

TEST(EnsembleJoin, MemberSharesFollowTickets) {
  auto config = test_config();
  config.scheduler.policy = SchedulingPolicy::content;  // html 12, bulk 1
  Harness h(config);
  h.ensemble.add_member(A, ContentClass::html, h.now);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(A), 11076u);  // 12000 * 12 / 13 = 11076.9
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(B), 923u);    // 12000 * 1 / 13 = 923.1
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(99), 0u);
}

}  // namespace
}  // namespace egw::congestion
