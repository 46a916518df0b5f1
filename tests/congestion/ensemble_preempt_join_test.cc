// A join under the preempt policy (E-TCP HTML-pre): the joiner's ACK-clocked
// share (seed 003) must not overtake the preempting class.
//
//   H (html): |==== 10 packets in flight (cwnd 12000) ====| still has data
//   I (image) joins: share = 12000 * 3 / (12 + 3) tickets = 2400 bytes = 2 packets
//   While the join runs each ack frees one slot (the increase is held); every
//   slot goes to H while H has data; I's share is used only once H has
//   nothing to send.
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
    h.ack_range(acked, acked);  // one slot: the increase is held for the join
    while (auto m = h.pick(has_data, {H, I})) {
      picks.push_back(*m);
      h.send(*m);
      if (*m == H) --html_data_left;
    }
  }
  // 8 acks free 8 slots: the first 6 are H's (all its data), then I's 2.
  ASSERT_EQ(picks.size(), 8u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(picks[i], H) << "pick " << i;
  for (int i = 6; i < 8; ++i) EXPECT_EQ(picks[i], I) << "pick " << i;
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
  h.ack_range(1, 1);  // frees 1 slot (the increase is held for the join)
  // share = 12000 * 12 / 24 = 6000 bytes = 5 clocked packets: the slot is H2's.
  std::vector<MemberId> picks;
  while (auto m = h.pick(always, {H, H2})) {
    picks.push_back(*m);
    h.send(*m);
  }
  EXPECT_EQ(picks, (std::vector<MemberId>{H2}));
}

}  // namespace
}  // namespace egw::congestion
