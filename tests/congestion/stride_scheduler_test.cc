#include "congestion/stride_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace egw::congestion {
namespace {

// Class shares by tickets alone: render-blocking precedence off (its own
// tests: stride_scheduler_render_blocking_test.cc).
SchedulerConfig with_policy(SchedulingPolicy policy) {
  SchedulerConfig c;
  c.policy = policy;
  c.render_blocking_cap_percent = 0;
  return c;
}

// Picks and charges `n` packets among the members `eligible` accepts;
// returns the senders in order.
std::vector<MemberId> run(StrideScheduler& s, int n,
                          const std::function<bool(MemberId)>& eligible) {
  std::vector<MemberId> out;
  for (int i = 0; i < n; ++i) {
    auto id = s.pick(eligible);
    if (!id) break;
    s.on_sent(*id);
    out.push_back(*id);
  }
  return out;
}

std::vector<MemberId> run(StrideScheduler& s, int n) {
  return run(s, n, [](MemberId) { return true; });
}

std::map<MemberId, int> count(const std::vector<MemberId>& v) {
  std::map<MemberId, int> c;
  for (MemberId id : v) ++c[id];
  return c;
}

TEST(StrideScheduler, ContentSharesFollowTicketRatio) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::html);   // 12 tickets
  s.add(2, ContentClass::image);  // 3 tickets
  EXPECT_EQ(s.tickets(1), 12u);
  EXPECT_EQ(s.tickets(2), 3u);
  auto c = count(run(s, 150));
  // 150 * 12 / 15 = 120 and 150 * 3 / 15 = 30; stride scheduling errs by <= 1.
  EXPECT_NEAR(c[1], 120, 1);
  EXPECT_NEAR(c[2], 30, 1);
}

TEST(StrideScheduler, FourClassesShareByTickets) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));  // 12/6/3/1
  s.add(10, ContentClass::html);
  s.add(11, ContentClass::script);
  s.add(12, ContentClass::image);
  s.add(13, ContentClass::bulk);
  auto c = count(run(s, 220));
  // 220 / (12 + 6 + 3 + 1) = 10 packets per ticket.
  EXPECT_NEAR(c[10], 120, 1);
  EXPECT_NEAR(c[11], 60, 1);
  EXPECT_NEAR(c[12], 30, 1);
  EXPECT_NEAR(c[13], 10, 1);
}

TEST(StrideScheduler, ErrorStaysWithinOnePacketAtEveryPrefix) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::html);   // 12
  s.add(2, ContentClass::script); // 6
  s.add(3, ContentClass::bulk);   // 1
  auto seq = run(s, 190);
  std::map<MemberId, int> c;
  const std::map<MemberId, double> share{{1, 12.0 / 19}, {2, 6.0 / 19}, {3, 1.0 / 19}};
  for (std::size_t i = 0; i < seq.size(); ++i) {
    ++c[seq[i]];
    for (auto [id, f] : share) {
      // After k packets a member with share f has sent k*f within one packet.
      EXPECT_NEAR(c[id], f * static_cast<double>(i + 1), 1.0) << "after " << i + 1;
    }
  }
}

TEST(StrideScheduler, FairGivesEqualShares) {
  SchedulerConfig cfg = with_policy(SchedulingPolicy::fair);
  StrideScheduler s(cfg);
  s.add(1, ContentClass::html);
  s.add(2, ContentClass::bulk);
  s.add(3, ContentClass::image);
  for (MemberId id : {1, 2, 3}) EXPECT_EQ(s.tickets(id), 1u);
  auto c = count(run(s, 99));
  // 99 / 3 = 33 each.
  EXPECT_EQ(c[1], 33);
  EXPECT_EQ(c[2], 33);
  EXPECT_EQ(c[3], 33);
}

TEST(StrideScheduler, PreemptClassGoesStrictlyFirst) {
  StrideScheduler s(with_policy(SchedulingPolicy::preempt));
  s.add(1, ContentClass::bulk);
  s.add(2, ContentClass::image);
  s.add(3, ContentClass::html);
  s.add(4, ContentClass::html);
  // While html is eligible only html sends, shared 1:1 by equal html tickets.
  auto c = count(run(s, 40));
  EXPECT_EQ(c[1], 0);
  EXPECT_EQ(c[2], 0);
  EXPECT_EQ(c[3], 20);
  EXPECT_EQ(c[4], 20);
  // Without eligible html, the others share by content tickets: image 3, bulk 1.
  auto rest = count(run(s, 40, [](MemberId id) { return id == 1 || id == 2; }));
  // 40 * 3 / 4 = 30, 40 * 1 / 4 = 10.
  EXPECT_NEAR(rest[2], 30, 1);
  EXPECT_NEAR(rest[1], 10, 1);
  // Html is back: it preempts at once.
  EXPECT_EQ(s.pick([](MemberId) { return true; }), MemberId{3});
}

TEST(StrideScheduler, PreemptedMembersGetNoCreditForTheWait) {
  StrideScheduler s(with_policy(SchedulingPolicy::preempt));
  s.add(1, ContentClass::bulk);
  s.add(2, ContentClass::image);
  s.add(3, ContentClass::html);
  run(s, 500);  // html only
  s.remove(3);
  // Both resume level with the virtual time: image:bulk = 3:1 from the start.
  auto c = count(run(s, 8));
  EXPECT_NEAR(c[2], 6, 1);  // 8 * 3 / 4 = 6
  EXPECT_NEAR(c[1], 2, 1);  // 8 * 1 / 4 = 2
}

TEST(StrideScheduler, DecayHalvesAfterThe5th10th20th40thPacket) {
  StrideScheduler s(with_policy(SchedulingPolicy::decay));
  s.add(7, ContentClass::bulk);
  // tickets after n packets sent: 16 until 5, then 8, 4 from 10, 2 from 20, 1 from 40.
  const std::map<int, std::uint32_t> expected{{0, 16}, {4, 16}, {5, 8},  {9, 8},  {10, 4},
                                              {19, 4}, {20, 2}, {39, 2}, {40, 1}, {100, 1}};
  int sent = 0;
  for (auto [n, t] : expected) {
    while (sent < n) {
      s.on_sent(7);
      ++sent;
    }
    EXPECT_EQ(s.tickets(7), t) << "after " << n << " packets";
  }
}

TEST(StrideScheduler, DecayFavoursTheNewcomer) {
  StrideScheduler s(with_policy(SchedulingPolicy::decay));
  s.add(1, ContentClass::bulk);
  run(s, 100);  // member 1 decays to 1 ticket
  ASSERT_EQ(s.tickets(1), 1u);
  s.add(2, ContentClass::bulk);  // 16 tickets
  auto seq = run(s, 6);
  // Packets 1..5 of member 2 are charged at 16 tickets vs 1: member 2 sends
  // its first 5 back to back (16:1), then one tie-broken pick goes either way.
  EXPECT_EQ(count(std::vector<MemberId>(seq.begin(), seq.begin() + 5))[2], 5);
}

TEST(StrideScheduler, LateJoinerGetsNoBurstOfCredit) {
  StrideScheduler s(with_policy(SchedulingPolicy::fair));
  s.add(1, ContentClass::bulk);
  run(s, 1000);
  s.add(2, ContentClass::bulk);
  // E-TCP Fig. 4: the joiner splits the window 1:1 at once, it does not get
  // the 1000 packets member 1 sent alone.
  auto c = count(run(s, 10));
  EXPECT_NEAR(c[2], 5, 1);
  EXPECT_NEAR(c[1], 5, 1);
}

TEST(StrideScheduler, IneligibleMemberIsSkippedAndGetsNoBacklog) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::bulk);
  s.add(2, ContentClass::bulk);
  auto only1 = run(s, 100, [](MemberId id) { return id == 1; });
  EXPECT_EQ(count(only1)[1], 100);
  EXPECT_EQ(count(only1)[2], 0);
  // Member 2 comes back: 1:1 from here, not 100 packets in a row.
  auto c = count(run(s, 20));
  EXPECT_NEAR(c[2], 10, 1);
  EXPECT_NEAR(c[1], 10, 1);
}

TEST(StrideScheduler, PickNeverReturnsIneligibleAndDoesNotAdvance) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::html);
  s.add(2, ContentClass::bulk);
  EXPECT_FALSE(s.pick([](MemberId) { return false; }).has_value());
  auto only2 = [](MemberId id) { return id == 2; };
  EXPECT_EQ(s.pick(only2), MemberId{2});
  EXPECT_EQ(s.pick(only2), MemberId{2});  // pick alone changes nothing
  EXPECT_EQ(s.pick([](MemberId) { return true; }), MemberId{1});
  StrideScheduler empty;
  EXPECT_FALSE(empty.pick([](MemberId) { return true; }).has_value());
}

TEST(StrideScheduler, ClassChangeTakesEffectOnNextPacketWithoutBackCredit) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::bulk);
  s.add(2, ContentClass::bulk);
  // 1:1 alternation, 1 then 2: after 100 packets both passes are one bulk
  // stride S ahead of the virtual time (the last start, 49 S).
  run(s, 100);
  s.set_class(2, ContentClass::html);
  EXPECT_EQ(s.tickets(2), 12u);
  auto seq = run(s, 130);
  // Rescaled, member 2 is only S/12 ahead and sends its next 11 packets
  // (49 S + k S/12 < 50 S for k <= 11) before member 1 at 50 S. Without the
  // rescale it would wait behind member 1 (tie at 50 S, lower id first).
  EXPECT_EQ(count(std::vector<MemberId>(seq.begin(), seq.begin() + 11))[2], 11);
  auto c = count(seq);
  // 130 * 12 / 13 = 120, 130 * 1 / 13 = 10.
  EXPECT_NEAR(c[2], 120, 1);
  EXPECT_NEAR(c[1], 10, 1);

  // Back to bulk: the html pass is no credit for member 2 as a bulk member.
  s.set_class(2, ContentClass::bulk);
  auto back = count(run(s, 20));
  EXPECT_NEAR(back[1], 10, 1);  // 20 * 1 / 2
  EXPECT_NEAR(back[2], 10, 1);
}

TEST(StrideScheduler, ConfigChangeSwitchesPolicyMidStream) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::html);
  s.add(2, ContentClass::bulk);
  run(s, 65);
  s.set_config(with_policy(SchedulingPolicy::fair));
  auto c = count(run(s, 40));
  EXPECT_NEAR(c[1], 20, 1);  // 40 / 2
  EXPECT_NEAR(c[2], 20, 1);
  SchedulerConfig custom = with_policy(SchedulingPolicy::content);
  custom.class_tickets = {2, 1, 1, 1};
  s.set_config(custom);
  auto d = count(run(s, 30));
  EXPECT_NEAR(d[1], 20, 1);  // 30 * 2 / 3
  EXPECT_NEAR(d[2], 10, 1);
}

TEST(StrideScheduler, UnscheduledChargeCostsOnlyTheSender) {
  // Html 12 : bulk 1, stopped mid-cycle; `extra` charges bulk out of turn.
  auto html_before_bulk = [](const std::function<void(StrideScheduler&)>& extra) {
    StrideScheduler s(with_policy(SchedulingPolicy::content));
    s.add(1, ContentClass::html);
    s.add(2, ContentClass::bulk);
    run(s, 20);
    extra(s);
    const auto seq = run(s, 40);
    return std::find(seq.begin(), seq.end(), MemberId{2}) - seq.begin();
  };
  const auto baseline = html_before_bulk([](StrideScheduler&) {});
  // A retransmission charged out of turn delays bulk by one bulk stride,
  // i.e. 12 html packets, and leaves html's own position alone.
  EXPECT_EQ(html_before_bulk([](StrideScheduler& s) { s.on_sent_unscheduled(2); }),
            baseline + 12);
  // Charged as if scheduled, it would also move the virtual time and cost html
  // its lead: html gets fewer packets before bulk's next turn.
  EXPECT_LT(html_before_bulk([](StrideScheduler& s) { s.on_sent(2); }), baseline + 12);
}

// A run's packets (the ensemble lets the last sender go on within its
// class): charged in a run, member 1's 5 extra packets leave the members'
// clock where the run began, so 2 and 3, which waited, catch up (5 packets
// each) before 1 sends again. Charged as in turn, the clock would move to
// 1's pass, and since a waiting member's pass is read as at least the
// clock, 2 and 3 would lose those turns: the run would be free.
TEST(StrideScheduler, ARunsChargeLetsTheOthersCatchUp) {
  auto next_of_1 = [](bool in_run) {
    StrideScheduler s(with_policy(SchedulingPolicy::fair));
    for (MemberId id : {1, 2, 3}) s.add(id, ContentClass::bulk);
    run(s, 9);  // 1 2 3 1 2 3 1 2 3: all level
    EXPECT_EQ(s.pick(), MemberId{1});
    s.on_sent(1);  // the run's first packet, in turn
    for (int i = 0; i < 5; ++i) in_run ? s.on_sent_in_run(1) : s.on_sent(1);
    const auto seq = run(s, 20);
    return std::find(seq.begin(), seq.end(), MemberId{1}) - seq.begin();
  };
  EXPECT_EQ(next_of_1(true), 12);  // 2 3 2 3 ... (6 each), then 1
  EXPECT_EQ(next_of_1(false), 2);  // 2 3 1: the others' turns lost
}

TEST(StrideScheduler, ZeroTicketsCountAsOne) {
  SchedulerConfig cfg = with_policy(SchedulingPolicy::content);
  cfg.class_tickets = {0, 0, 0, 0};
  StrideScheduler s(cfg);
  s.add(1, ContentClass::html);
  s.add(2, ContentClass::bulk);
  EXPECT_EQ(s.tickets(1), 1u);
  auto c = count(run(s, 10));
  EXPECT_EQ(c[1], 5);
  EXPECT_EQ(c[2], 5);
}

TEST(StrideScheduler, TiesGoToLowestIdAndRunsAreDeterministic) {
  auto build = [] {
    StrideScheduler s(with_policy(SchedulingPolicy::content));
    s.add(9, ContentClass::image);
    s.add(3, ContentClass::image);
    s.add(5, ContentClass::script);
    return s;
  };
  StrideScheduler a = build();
  StrideScheduler b = build();
  // Equal passes at start: script (5) and the images tie at the virtual time;
  // the lowest id, 3, goes first.
  EXPECT_EQ(a.pick([](MemberId) { return true; }), MemberId{3});
  EXPECT_EQ(run(a, 200), run(b, 200));
}

TEST(StrideScheduler, MembershipBookkeeping) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::html);
  s.add(2, ContentClass::bulk);
  s.add(1, ContentClass::image);  // re-adding updates the class
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.tickets(1), 3u);
  s.on_sent(~MemberId{0});  // unknown (control) member: ignored
  s.remove(1);
  EXPECT_FALSE(s.contains(1));
  EXPECT_TRUE(s.contains(2));
  EXPECT_EQ(s.tickets(1), 0u);
  EXPECT_EQ(s.size(), 1u);
  EXPECT_EQ(s.pick([](MemberId) { return true; }), MemberId{2});
}

}  // namespace
}  // namespace egw::congestion

namespace egw::congestion {
namespace {

TEST(StrideSchedulerReady, OnlyReadyMembersArePickedAndTheyGetNoCreditForIdleTime) {
  StrideScheduler s(with_policy(SchedulingPolicy::fair));
  s.add(1, ContentClass::bulk);
  s.add(2, ContentClass::bulk);
  s.set_ready(2, false);
  EXPECT_EQ(s.ready_count(), 1u);
  auto only1 = run(s, 100);
  EXPECT_EQ(count(only1)[1], 100);  // 2 is not ready: never picked, never asked
  s.set_ready(2, true);            // back level with the virtual time
  auto c = count(run(s, 20));
  EXPECT_NEAR(c[1], 10, 1);
  EXPECT_NEAR(c[2], 10, 1);
  s.set_ready(1, false);
  s.set_ready(2, false);
  EXPECT_FALSE(s.pick());
}

TEST(StrideSchedulerReady, TicketTotalsAreRunningSums) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));  // content 12/6/3/1
  s.add(1, ContentClass::html);
  s.add(2, ContentClass::image);
  s.add(3, ContentClass::bulk);
  EXPECT_EQ(s.total_tickets(), 16u);
  EXPECT_EQ(s.ready_tickets(), 16u);
  s.set_ready(1, false);
  EXPECT_EQ(s.ready_tickets(), 4u);
  s.set_class(3, ContentClass::script);
  EXPECT_EQ(s.total_tickets(), 21u);
  EXPECT_EQ(s.ready_tickets(), 9u);
  s.remove(2);
  EXPECT_EQ(s.total_tickets(), 18u);
  EXPECT_EQ(s.ready_tickets(), 6u);
}

TEST(StrideSchedulerReady, PreemptClassGoesFirstAmongManyToggledMembers) {
  // 1000 members of mixed classes, readiness toggled while they run: the heap
  // only ever returns ready members, html first whenever one is ready.
  StrideScheduler s(with_policy(SchedulingPolicy::preempt));
  for (MemberId id = 0; id < 1000; ++id) s.add(id, static_cast<ContentClass>(id % 4));
  for (int i = 0; i < 20000; ++i) {
    if (i % 7 == 0) s.set_ready(static_cast<MemberId>((i * 31) % 1000), (i / 7) % 3 != 0);
    const auto id = s.pick();
    if (!id) continue;
    ASSERT_TRUE(s.ready(*id));
    if (static_cast<ContentClass>(*id % 4) != ContentClass::html) {
      // Under preempt, html goes first whenever an html member is ready.
      for (MemberId h = 0; h < 1000; h += 4) ASSERT_FALSE(s.ready(h)) << i;
    }
    s.on_sent(*id);
  }
}

}  // namespace
}  // namespace egw::congestion

namespace egw::congestion {
namespace {

// Issue 21 item 4: tickets are the classes' shares, split evenly within a class.
TEST(StrideSchedulerClasses, FiveImagesAgainstOneScriptShareByClassTickets) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));  // content 12/6/3/1
  s.add(1, ContentClass::script);
  for (MemberId id = 10; id < 15; ++id) s.add(id, ContentClass::image);
  auto c = count(run(s, 900));
  // Script class 6 : image class 3 -> 600 : 300; per stream tickets (E-TCP)
  // would have given the script 900 * 6 / 21 = 257.
  EXPECT_NEAR(c[1], 600, 1);
  for (MemberId id = 10; id < 15; ++id) EXPECT_NEAR(c[id], 60, 1) << id;  // 300 / 5 each
}

TEST(StrideSchedulerClasses, StreamsWithinAClassStayEqualAtEveryPrefix) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::html);
  for (MemberId id = 2; id < 5; ++id) s.add(id, ContentClass::bulk);
  auto seq = run(s, 390);
  std::map<MemberId, int> c;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    ++c[seq[i]];
    // Html 12/13 of the packets; the three bulk streams share 1/13 evenly,
    // each within one packet of the class's share and of each other.
    const double k = static_cast<double>(i + 1);
    EXPECT_NEAR(c[1], k * 12 / 13, 1.0) << "after " << i + 1;
    for (MemberId id = 2; id < 5; ++id) {
      EXPECT_NEAR(c[id], k / 13 / 3, 1.5) << id << " after " << i + 1;
    }
  }
  for (MemberId id = 2; id < 5; ++id) EXPECT_NEAR(c[id], 10, 1) << id;
}

TEST(StrideSchedulerClasses, AStreamJoiningAClassSplitsItsShareNotTheOthers) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::script);
  s.add(2, ContentClass::image);
  run(s, 90);
  s.add(3, ContentClass::image);  // joins the running image class
  auto c = count(run(s, 90));
  EXPECT_NEAR(c[1], 60, 1);  // the script keeps 6/9
  EXPECT_NEAR(c[2], 15, 1);  // the images split 3/9
  EXPECT_NEAR(c[3], 15, 1);
}

TEST(StrideSchedulerClasses, IdleMembersOfAClassDoNotDiluteIt) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::script);
  for (MemberId id = 10; id < 110; ++id) {
    s.add(id, ContentClass::image);
    if (id != 10) s.set_ready(id, false);  // open but with nothing to send
  }
  auto c = count(run(s, 90));
  EXPECT_NEAR(c[1], 60, 1);
  EXPECT_NEAR(c[10], 30, 1);
}

TEST(StrideSchedulerClasses, SetClassMovesAStreamBetweenClasses) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::script);
  for (MemberId id = 10; id < 15; ++id) s.add(id, ContentClass::image);
  run(s, 90);
  // A stream learned to be a script: the script class now splits 6/9 between
  // two, the four images split 3/9.
  s.set_class(14, ContentClass::script);
  EXPECT_EQ(s.tickets(14), 6u);
  auto c = count(run(s, 180));
  EXPECT_NEAR(c[1], 60, 1);
  EXPECT_NEAR(c[14], 60, 1);
  for (MemberId id = 10; id < 14; ++id) EXPECT_NEAR(c[id], 15, 1) << id;
  // And back: no credit from its time as a script.
  s.set_class(14, ContentClass::image);
  auto d = count(run(s, 90));
  EXPECT_NEAR(d[1], 60, 1);
  for (MemberId id = 10; id < 15; ++id) EXPECT_NEAR(d[id], 6, 1) << id;
}

TEST(StrideSchedulerClasses, RemovingTheLastMemberOfAClassReturnsItsShare) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::script);
  s.add(2, ContentClass::image);
  s.add(3, ContentClass::image);
  run(s, 45);
  s.remove(1);
  auto c = count(run(s, 20));
  EXPECT_EQ(c[1], 0);
  EXPECT_NEAR(c[2], 10, 1);
  EXPECT_NEAR(c[3], 10, 1);
  s.remove(2);
  s.add(4, ContentClass::script);  // a new script class: level, 6:3 at once
  auto d = count(run(s, 9));
  EXPECT_NEAR(d[4], 6, 1);
  EXPECT_NEAR(d[3], 3, 1);
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.total_tickets(), 9u);
}

TEST(StrideSchedulerClasses, PreemptStillStrictWithManyStreamsPerClass) {
  StrideScheduler s(with_policy(SchedulingPolicy::preempt));
  s.add(1, ContentClass::html);
  s.add(2, ContentClass::html);
  s.add(3, ContentClass::script);
  for (MemberId id = 10; id < 15; ++id) s.add(id, ContentClass::image);
  auto c = count(run(s, 40));
  EXPECT_EQ(c[1], 20);
  EXPECT_EQ(c[2], 20);
  s.set_ready(1, false);
  s.set_ready(2, false);
  auto d = count(run(s, 90));
  EXPECT_NEAR(d[3], 60, 1);  // the rest by class shares, 6:3
  for (MemberId id = 10; id < 15; ++id) EXPECT_NEAR(d[id], 6, 1) << id;
  s.set_ready(2, true);
  EXPECT_EQ(s.pick(), MemberId{2});
}

TEST(StrideSchedulerClasses, DecayAndFairStayPerStream) {
  // Flat policies: members share by their own tickets, whatever their class.
  StrideScheduler fair(with_policy(SchedulingPolicy::fair));
  fair.add(1, ContentClass::script);
  for (MemberId id = 10; id < 15; ++id) fair.add(id, ContentClass::image);
  auto c = count(run(fair, 60));
  for (MemberId id : {1, 10, 11, 12, 13, 14}) EXPECT_EQ(c[id], 10) << id;

  StrideScheduler decay(with_policy(SchedulingPolicy::decay));
  decay.add(1, ContentClass::image);
  decay.add(2, ContentClass::image);
  run(decay, 100, [](MemberId id) { return id == 1; });
  ASSERT_EQ(decay.tickets(1), 1u);
  ASSERT_EQ(decay.tickets(2), 16u);
  // Same class, but the fresh stream (16 tickets) goes ahead of the decayed one.
  auto seq = run(decay, 5);
  EXPECT_EQ(count(seq)[2], 5);
}

TEST(StrideSchedulerClasses, ConfigChangeRegroupsMembers) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::script);
  for (MemberId id = 10; id < 15; ++id) s.add(id, ContentClass::image);
  run(s, 77);
  s.set_config(with_policy(SchedulingPolicy::fair));
  auto c = count(run(s, 60));
  for (MemberId id : {1, 10, 11, 12, 13, 14}) EXPECT_NEAR(c[id], 10, 1) << id;
  s.set_config(with_policy(SchedulingPolicy::content));
  auto d = count(run(s, 90));
  EXPECT_NEAR(d[1], 60, 1);
  for (MemberId id = 10; id < 15; ++id) EXPECT_NEAR(d[id], 6, 1) << id;
  EXPECT_EQ(s.total_tickets(), 6u + 5 * 3);
  EXPECT_EQ(s.ready_count(), 6u);
}

TEST(StrideSchedulerClasses, PickWithPredicateWalksClassesThenMembers) {
  StrideScheduler s(with_policy(SchedulingPolicy::content));
  s.add(1, ContentClass::html);
  s.add(2, ContentClass::html);
  s.add(3, ContentClass::image);
  s.add(4, ContentClass::image);
  // Html's members are both refused: the best image member comes next.
  EXPECT_EQ(s.pick([](MemberId id) { return id >= 3; }), MemberId{3});
  EXPECT_EQ(s.pick([](MemberId id) { return id == 4; }), MemberId{4});
  EXPECT_EQ(s.pick([](MemberId id) { return id == 2; }), MemberId{2});
  EXPECT_FALSE(s.pick([](MemberId id) { return id == 5; }).has_value());
}

}  // namespace
}  // namespace egw::congestion
