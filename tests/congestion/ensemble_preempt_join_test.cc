// A join under the preempt policy (E-TCP HTML-pre): the joiner's ACK-clocked
// share (seed 003) must not overtake the preempting class.
//
//   H (html): |==== 10 packets in flight (cwnd 12000) ====| still has data
//   I (image) joins: share = 12000 * 3 / (12 + 3) tickets = 2400 bytes = 2 packets
//   Every slot goes to H while H has data; I's share is used only once H has
//   nothing to send.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "congestion/ensemble.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::test_config;

constexpr MemberId H = 1;
constexpr MemberId I = 2;

TEST(EnsemblePreemptJoin, ClockedJoinerDoesNotOvertakeThePreemptingClass) {
  auto config = test_config();
  config.join = JoinMode::ack_clocked;
  config.scheduler.policy = SchedulingPolicy::preempt;
  Harness h(config);
  h.ensemble.add_member(H, ContentClass::html, h.now);
  ASSERT_EQ(h.fill(H), 10);
  h.ensemble.add_member(I, ContentClass::image, h.now);

  h.ensemble.set_backlogged(I, true, h.now);  // I joins
  h.ensemble.set_backlogged(H, true, h.now);
  int html_data_left = 6;
  const auto has_data = [&](MemberId id) { return id == I || html_data_left > 0; };
  std::vector<MemberId> picks;
  for (PacketNumber acked = 1; acked <= 8; ++acked) {
    h.now += ms(10);
    h.ack_range(acked, acked);  // slow start: 2 slots per ack
    while (auto m = h.pick(has_data, {H, I})) {
      picks.push_back(*m);
      h.send(*m);
      if (*m == H) --html_data_left;
    }
  }
  // The first 6 slots are H's (all its data), only then I's share.
  ASSERT_GE(picks.size(), 8u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(picks[i], H) << "pick " << i;
  for (std::size_t i = 6; i < picks.size(); ++i) EXPECT_EQ(picks[i], I) << "pick " << i;
}

TEST(EnsemblePreemptJoin, HtmlJoinerStillGetsItsClockedSlots) {
  auto config = test_config();
  config.join = JoinMode::ack_clocked;
  config.scheduler.policy = SchedulingPolicy::preempt;
  Harness h(config);
  h.ensemble.add_member(H, ContentClass::html, h.now);
  ASSERT_EQ(h.fill(H), 10);
  constexpr MemberId H2 = 3;  // a second HTML part joins
  h.ensemble.add_member(H2, ContentClass::html, h.now);
  h.ensemble.set_backlogged(H2, true, h.now);  // H2 joins
  h.ensemble.set_backlogged(H, true, h.now);
  const auto always = [](MemberId) { return true; };
  h.now += ms(10);
  h.ack_range(1, 1);  // slow start: frees 2 slots
  // share = 12000 * 12 / 24 = 6000 bytes = 5 clocked packets: the released
  // slot is H2's, the growth slot goes by stride.
  std::vector<MemberId> picks;
  while (auto m = h.pick(always, {H, H2})) {
    picks.push_back(*m);
    h.send(*m);
  }
  ASSERT_EQ(picks.size(), 2u);
  EXPECT_EQ(picks.front(), H2);
}

// The same for a call: below its cap a realtime member goes first, and a
// joiner's ACK-clocked slots do not overtake it (cap 100 %: always below).
TEST(EnsemblePreemptJoin, ClockedJoinerDoesNotOvertakeACallBelowItsCap) {
  constexpr MemberId R = 1;
  constexpr MemberId B = 2;
  auto config = test_config();
  config.join = JoinMode::ack_clocked;
  config.scheduler.policy = SchedulingPolicy::content;
  config.scheduler.realtime_cap_percent = 100;
  Harness h(config);
  h.ensemble.add_member(R, ContentClass::realtime, h.now);
  ASSERT_EQ(h.fill(R), 10);
  h.ensemble.add_member(B, ContentClass::web, h.now);  // share: 12000 * 12 / 24 = 5 packets
  h.ensemble.set_backlogged(B, true, h.now);  // B joins
  h.ensemble.set_backlogged(R, true, h.now);
  int call_data_left = 6;
  const auto has_data = [&](MemberId id) { return id == B || call_data_left > 0; };
  std::vector<MemberId> picks;
  for (PacketNumber acked = 1; acked <= 8; ++acked) {
    h.now += ms(10);
    h.ack_range(acked, acked);
    while (auto m = h.pick(has_data, {R, B})) {
      picks.push_back(*m);
      h.send(*m);
      if (*m == R) --call_data_left;
    }
  }
  std::string order;
  for (MemberId m : picks) order += m == R ? 'R' : 'B';
  ASSERT_GE(picks.size(), 8u) << order;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(picks[i], R) << "pick " << i << ": " << order;
  for (std::size_t i = 6; i < picks.size(); ++i) EXPECT_EQ(picks[i], B) << "pick " << i;
}

// Issue 21 item 4: under the defaults (content, render-blocking first within
// its cap) a new image stream's ACK-clocked share does not overtake a running
// script: each released slot goes to the joiner only in its class's turn,
// the scheduler's (a script beside one image: 9 packets in 10).
TEST(EnsemblePreemptJoin, ClockedImageJoinerWaitsForTheScriptsTurnUnderContent) {
  constexpr MemberId S = 1;
  constexpr MemberId I = 2;
  auto config = test_config();
  config.join = JoinMode::ack_clocked;
  config.scheduler.policy = SchedulingPolicy::content;
  config.scheduler.render_blocking_cap_percent = 90;
  Harness h(config);
  h.ensemble.add_member(S, ContentClass::script, h.now);
  ASSERT_EQ(h.fill(S), 10);
  h.ensemble.add_member(I, ContentClass::image, h.now);  // share: a third of the window
  h.ensemble.set_backlogged(I, true, h.now);  // I joins
  h.ensemble.set_backlogged(S, true, h.now);
  const auto always = [](MemberId) { return true; };
  std::vector<MemberId> picks;
  for (PacketNumber acked = 1; acked <= 8; ++acked) {
    h.now += ms(10);
    h.ack_range(acked, acked);
    while (auto m = h.pick(always, {S, I})) {
      picks.push_back(*m);
      h.send(*m);
    }
  }
  std::string order;
  for (MemberId m : picks) order += m == S ? 'S' : 'I';
  ASSERT_GE(picks.size(), 12u) << order;
  EXPECT_EQ(picks.front(), S) << order;
  // Before: every released slot went to I first (I S I S I S I S ...).
  EXPECT_LE(std::count(picks.begin(), picks.begin() + 12, I), 2) << order;
}

}  // namespace
}  // namespace egw::congestion
