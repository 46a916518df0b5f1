// Joining an ensemble that already has data in flight (seed 003, EFCM).
//
//   A: |==== 10 packets in flight (cwnd 12000) ====|
//   B joins here: share = 12000 * 1 / 2 tickets = 6000 bytes = 5 packets
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
  return h;
}

const auto kAlwaysData = [](MemberId) { return true; };

TEST(EnsembleJoin, AckClockedJoinTakesFreedSlotsAndNeverExceedsTheWindow) {
  auto config = test_config();
  config.join = JoinMode::ack_clocked;
  Harness h(config);
  start_with_a_full_window(h);
  EXPECT_FALSE(h.ensemble.can_send(B, h.now));  // no burst: the window is full
  EXPECT_FALSE(h.pick(kAlwaysData, {A, B}));

  std::vector<MemberId> picks;
  for (PacketNumber acked = 1; acked <= 10; ++acked) {
    h.now += ms(10);
    h.ack_range(acked, acked);  // slow start: each ack frees 2 slots
    while (auto m = h.pick(kAlwaysData, {A, B})) {
      picks.push_back(*m);
      h.send(*m);
      ASSERT_LE(h.flight(), h.cwnd());  // the aggregate never overshoots
    }
  }
  ASSERT_GE(picks.size(), 5u);
  // The first 5 freed slots (share 6000 / 1200) all go to the joiner.
  EXPECT_TRUE(std::all_of(picks.begin(), picks.begin() + 5, [](MemberId m) { return m == B; }));
  // After that the stride scheduler shares fairly again.
  EXPECT_NE(std::find(picks.begin() + 5, picks.end(), A), picks.end());
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
  EXPECT_EQ(h.cwnd(), 7800u);  // (12000 + 3600) / 2
  // Flight 7..11 = 6000. With the 4800 left of its share B could send 4 more
  // whatever the window; without it only (7800 - 6000) / 1200 = 1.
  EXPECT_EQ(h.fill(B), 1);
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
