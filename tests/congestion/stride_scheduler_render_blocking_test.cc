// Issue 21 item 4: render-blocking classes (html, script) ahead of the other
// classes within render_blocking_cap_percent, classes sharing by tickets
// past it, realtime and the preempt class still first.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "congestion/stride_scheduler.h"

namespace egw::congestion {
namespace {

std::map<MemberId, int> run(StrideScheduler& s, int n) {
  std::map<MemberId, int> sent;
  for (int i = 0; i < n; ++i) {
    auto id = s.pick();
    if (!id) break;
    s.on_sent(*id);
    ++sent[*id];
  }
  return sent;
}

SchedulerConfig cap(std::uint32_t percent, SchedulingPolicy policy = SchedulingPolicy::content) {
  SchedulerConfig c;
  c.policy = policy;
  c.render_blocking_cap_percent = percent;
  return c;
}

TEST(StrideSchedulerRenderBlocking, OneScriptBesideFiveImagesGetsTheCap) {
  // The case: per-stream tickets gave the script 6 / (6 + 5 x 3) of
  // the packets, class shares 6 / 9; first within the cap, 90 %.
  StrideScheduler s(cap(90));
  s.add(1, ContentClass::script);
  for (MemberId id = 2; id <= 6; ++id) s.add(id, ContentClass::image);
  auto sent = run(s, 1000);
  EXPECT_NEAR(sent[1], 900, 2);
  for (MemberId id = 2; id <= 6; ++id) EXPECT_NEAR(sent[id], 20, 1) << id;  // evenly within the class
}

TEST(StrideSchedulerRenderBlocking, CapZeroIsClassSharesByTickets) {
  StrideScheduler s(cap(0));
  s.add(1, ContentClass::script);
  for (MemberId id = 2; id <= 6; ++id) s.add(id, ContentClass::image);
  auto sent = run(s, 900);
  EXPECT_NEAR(sent[1], 600, 1);  // 6 / (6 + 3)
  EXPECT_NEAR(sent[2] + sent[3] + sent[4] + sent[5] + sent[6], 300, 1);
}

TEST(StrideSchedulerRenderBlocking, RenderBlockingClassesShareTheirTurnsByTickets) {
  // html 12 : script 6 among themselves; the image gets what the cap leaves.
  StrideScheduler s(cap(90));
  s.add(1, ContentClass::html);
  s.add(2, ContentClass::script);
  s.add(3, ContentClass::image);
  auto sent = run(s, 3000);
  EXPECT_NEAR(sent[1] + sent[2], 2700, 3);
  EXPECT_NEAR(sent[1], 1800, 3);
  EXPECT_NEAR(sent[3], 300, 3);
}

TEST(StrideSchedulerRenderBlocking, AloneTheyOweNothingAndImagesAloneShareByTickets) {
  StrideScheduler s(cap(90));
  s.add(1, ContentClass::script);
  s.add(2, ContentClass::image);
  s.set_ready(2, false);
  EXPECT_EQ(run(s, 500)[1], 500);
  s.set_ready(2, true);
  EXPECT_EQ(s.pick(), MemberId{1});  // nothing owed: first again at once
  s.set_ready(1, false);
  s.add(3, ContentClass::bulk);
  auto sent = run(s, 400);
  EXPECT_NEAR(sent[2], 300, 1);  // image 3 : bulk 1
  EXPECT_NEAR(sent[3], 100, 1);
}

TEST(StrideSchedulerRenderBlocking, RealtimeAndThePreemptClassStillGoFirst) {
  StrideScheduler s(cap(90, SchedulingPolicy::preempt));  // html preempts
  s.add(1, ContentClass::html);
  s.add(2, ContentClass::script);
  s.add(3, ContentClass::image);
  auto sent = run(s, 100);
  EXPECT_EQ(sent[1], 100);  // strictly first, no cap
  s.set_ready(1, false);
  s.add(4, ContentClass::realtime);
  EXPECT_EQ(s.pick(), MemberId{4});  // a call below its cap
  s.remove(4);
  sent = run(s, 1000);
  EXPECT_NEAR(sent[2], 900, 2);
  EXPECT_NEAR(sent[3], 100, 2);
}

TEST(StrideSchedulerRenderBlocking, FairAndDecayIgnoreIt) {
  StrideScheduler s(cap(90, SchedulingPolicy::fair));
  s.add(1, ContentClass::script);
  s.add(2, ContentClass::image);
  auto sent = run(s, 1000);
  EXPECT_EQ(sent[1], 500);
  EXPECT_EQ(sent[2], 500);
}

TEST(StrideSchedulerRenderBlocking, ACapChangeByReloadTakesEffect) {
  StrideScheduler s(cap(90));
  s.add(1, ContentClass::script);
  s.add(2, ContentClass::image);
  run(s, 100);
  s.set_config(cap(0));
  auto sent = run(s, 900);
  EXPECT_NEAR(sent[1], 600, 2);
  s.set_config(cap(90));
  sent = run(s, 1000);
  EXPECT_NEAR(sent[1], 900, 20);
}

TEST(StrideSchedulerRenderBlocking, PrecedenceShareIsWhatAJoinerGetsAhead) {
  StrideScheduler s(cap(90));
  s.add(1, ContentClass::script);
  for (MemberId id = 2; id <= 6; ++id) s.add(id, ContentClass::image);
  auto share = s.precedence_share(1);
  ASSERT_TRUE(share);
  EXPECT_EQ(share->numerator, 9u);  // the cap, not 6 / (6 + 5 x 3)
  EXPECT_EQ(share->denominator, 10u);
  EXPECT_FALSE(s.precedence_share(2));  // images take turns by tickets
  s.add(7, ContentClass::html);  // html 12 : script 6 of the cap
  share = s.precedence_share(1);
  ASSERT_TRUE(share);
  EXPECT_EQ(share->numerator * 10, share->denominator * 3);  // 90 % x 6 / 18
  for (MemberId id = 2; id <= 6; ++id) s.set_ready(id, false);
  EXPECT_FALSE(s.precedence_share(1));  // nobody below waits: by tickets
  StrideScheduler off(cap(0));
  off.add(1, ContentClass::script);
  off.add(2, ContentClass::image);
  EXPECT_FALSE(off.precedence_share(1));
  off.add(3, ContentClass::realtime);  // a call below its cap: realtime_cap
  share = off.precedence_share(3);
  ASSERT_TRUE(share);
  EXPECT_EQ(share->numerator * 100, share->denominator * 30);
}

}  // namespace
}  // namespace egw::congestion
