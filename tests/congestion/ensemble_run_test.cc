// Runs (congestion/ensemble.cc, "Runs"): at high pacing rates the member
// that sent the last packet goes on while the scheduler's choice is in its
// class, for up to Ensemble::kRunDuration at the pacing rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

// An ensemble paced as the gateway's (runs are measured at the pacing
// rate), sending whatever pick_sender() names. step() sends one packet and
// appends its member to `order` ("1212..."), or waits for the pacer, or,
// when the window is full, lets a round trip of `rtt` pass, acks everything
// and appends '|'; it returns the member that sent, if one did.
struct Picks {
  Picks() : h([] {
      EnsembleConfig c = testing::test_config();
      c.scheduler.policy = SchedulingPolicy::content;
      c.pacing.enabled = true;
      return c;
    }()) {}
  std::optional<MemberId> step(Duration rtt) {
    if (const auto id = h.ensemble.pick_sender(h.now)) {
      order += std::to_string(*id);
      h.send(*id);
      return id;
    }
    if (const auto release = h.ensemble.next_pacing_release(h.now)) {
      h.now = *release;
    } else {
      h.now += rtt;
      h.ack_range(first, h.next_number - 1);
      order += '|';
    }
    return std::nullopt;
  }
  testing::Harness h;
  const PacketNumber first = h.next_number;
  std::string order;
};

// Members 1 and 2 (bulk) and 3 (`third`, backlogged after the first round
// when `third_ready`): the picks of `packets` packets and the rounds between.
std::string picks(Duration rtt, int packets, ContentClass third = ContentClass::bulk, bool third_ready = false) {
  Picks p;
  for (MemberId id : {1, 2, 3}) p.h.ensemble.add_member(id, id == 3 ? third : ContentClass::bulk, p.h.now);
  p.h.ensemble.set_backlogged(1, true, p.h.now);
  p.h.ensemble.set_backlogged(2, true, p.h.now);
  p.h.ensemble.set_backlogged(3, false, p.h.now);
  while (static_cast<int>(p.order.size()) < packets) {
    const std::size_t before = p.order.size();
    p.step(rtt);
    if (third_ready && p.order.size() > before && p.order.back() == '|') p.h.ensemble.set_backlogged(3, true, p.h.now);
  }
  return p.order;
}

int count(const std::string& s, char c) { return static_cast<int>(std::count(s.begin(), s.end(), c)); }

// The first window goes at IW over the initial RTT (a slow pacing rate):
// packet by packet. After a 20 us round trip the rate reads GB/s, 100 us at
// it more than the window: a run is bounded by the window, so the members
// take turns by windows (20 packets after slow start's first round, then
// 40), and their shares hold.
TEST(EnsembleRuns, AtHighRatesAMemberRunsAtMostAWindow) {
  const std::string order = picks(us(20), 140);
  EXPECT_EQ(order.substr(0, 11), "1212121212|") << order;
  // The second window: member 2 ended the first, so its run has one packet
  // of the window's 20 already; then member 1's.
  EXPECT_EQ(order.substr(11, 21), std::string(19, '2') + "1|") << order;
  // The third (40 packets): member 1's run, which began at the second's end.
  EXPECT_EQ(order.substr(32, 41), std::string(39, '1') + "2|") << order;
  const std::string settled = order.substr(0, order.rfind('|'));
  EXPECT_LE(std::abs(count(settled, '1') - count(settled, '2')), 40) << order;
}

// At a 1 ms round trip slow start paces at 2 x 24 KB / 1 ms = 48 MB/s:
// 100 us of it is 4.8 KB, a fifth of the window, so runs of 4 packets.
TEST(EnsembleRuns, ARunLastsAtMostItsTimeAtThePacingRate) {
  const std::string order = picks(ms(1), 31);
  EXPECT_EQ(order.substr(0, 11), "1212121212|") << order;
  EXPECT_EQ(order.substr(11, 20), "22211112222111122221") << order;
}

// At a 100 ms round trip the pacing rate is hundreds of KB/s: 100 us is a
// fraction of a packet, so the schedule stays E-TCP's, packet by packet.
TEST(EnsembleRuns, AtWanRatesMembersAlternatePacketByPacket) {
  const std::string order = picks(ms(100), 40);
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (order[i] != '|' && order[i - 1] != '|') {
      EXPECT_NE(order[i], order[i - 1]) << order;
    }
  }
}

// Four bulk members in runs (a 1 ms round trip, as above); a fifth of the
// same class, which sent before, becomes ready again in the middle of a
// run: it starts level with the members that waited (a run's packets do not
// move the members' clock: on_sent_in_run), not behind the run.
TEST(EnsembleRuns, AMemberReadyAgainStartsLevelWithThoseThatWaited) {
  Picks p;
  for (MemberId id = 1; id <= 5; ++id) p.h.ensemble.add_member(id, ContentClass::bulk, p.h.now);
  for (MemberId id = 1; id <= 5; ++id) p.h.ensemble.set_backlogged(id, true, p.h.now);
  // Member 5 sends one packet, then has nothing more for a while (a
  // request's stream between requests): it is no joiner when it comes back.
  while (p.order.find('5') == std::string::npos) ASSERT_TRUE(p.step(ms(1))) << p.order;
  p.h.ensemble.set_backlogged(5, false, p.h.now);
  // Windows of 10, 20, 40 packets; member 5 becomes ready 2 packets into
  // a run of the third window.
  std::size_t ready_at = std::string::npos;
  const std::string& order = p.order;
  while (order.size() < 200) {
    const auto rounds = count(order, '|');
    if (rounds == 2 && ready_at == std::string::npos && order.size() > 2 && order.back() == order[order.size() - 2] &&
        order[order.size() - 3] != order.back()) {
      p.h.ensemble.set_backlogged(5, true, p.h.now);
      ready_at = order.size();
    }
    if (p.step(ms(1)) == MemberId{5} && ready_at != std::string::npos) break;
  }
  ASSERT_NE(ready_at, std::string::npos) << order;
  ASSERT_EQ(order.back(), '5') << order;
  // It starts level with the members that had not run since the run it
  // arrived in began (2's): the rest of that run, then 3's and 4's (level
  // too; ties go to the lower id), then 5, before 1, which had run last.
  // Were a run's packets to move the members' clock, 5 would start level
  // with the end of 2's run, behind 1's next run as well.
  const std::string waited = order.substr(ready_at, order.size() - 1 - ready_at);
  EXPECT_EQ(waited.find('1'), std::string::npos) << order;
  for (char c : std::string("234")) {
    const auto a = waited.find(c);
    if (a != std::string::npos) {  // one contiguous run each
      EXPECT_EQ(waited.find_last_of(c) - a + 1, static_cast<std::size_t>(count(waited, c))) << order;
    }
  }
}

// A page's HTML (a class that render-blocking precedence puts first) does
// not wait for a bulk member's run.
TEST(EnsembleRuns, AnotherClassDueBreaksTheRun) {
  const std::string order = picks(us(20), 20, ContentClass::html, true);
  const std::size_t bar = order.find('|');
  ASSERT_NE(bar, std::string::npos);
  ASSERT_GT(order.size(), bar + 1);
  EXPECT_EQ(order[bar + 1], '3') << order;
}

}  // namespace
}  // namespace egw::congestion
