// Pacing (issue 20 item 1) against the two known limits docs/architecture.md
// names, each run with and without it on the same simulated path:
//
//  - credit-released bursts: a stream held by its 64 KB receive window beside
//    a joiner (paper_experiments rwndjoin: 10 Mbit/s, 50 ms, a 20-packet
//    queue). Each MAX_STREAM_DATA let the held stream send what it may at
//    line rate: up to 21 packets reached the bottleneck at one instant.
//    Paced, never more than the burst allowance (2 packets).
//  - slow start overshooting a small queue: the E-TCP graphics page at IW 10
//    (paper_experiments lossy-pages, 0 %: 800 kbit/s, 50 ms, a 10-packet
//    queue), where slow start's ACK-clocked pairs overflowed the queue once
//    at the 9-12 KB images. Paced, the queue takes fewer drops and the page
//    loads sooner.
#include <gtest/gtest.h>

#include "tests/scenarios/lossy_pages_experiment.h"
#include "tests/scenarios/rwnd_join_experiment.h"
#include "tests/scenarios/web_pages_experiment.h"

namespace egw::scenarios {
namespace {

RwndJoinResult rwnd_join(bool pacing) {
  RwndJoinParams p;
  p.seeds = 5;
  p.pacing = pacing;
  return run_rwnd_join(p);
}

TEST(ScenarioPacing, CreditReleasedBurstsAreSpreadByThePacer) {
  const RwndJoinResult paced = rwnd_join(true);
  const RwndJoinResult unpaced = rwnd_join(false);
  for (const RwndJoinResult* r : {&paced, &unpaced}) {
    EXPECT_EQ(r->coupled.unfinished, 0u);
    EXPECT_EQ(r->coupled.mismatches, 0u);
  }
  // Both streams, from the join until the short one completed.
  EXPECT_LE(paced.coupled.max_at_one_instant.max, 2.0);
  EXPECT_GT(unpaced.coupled.max_at_one_instant.max, 2.0);
  EXPECT_LE(paced.coupled.drops_first_rtt.max, 0.0);
  std::cout << "max packets at one instant, coupled: paced "
            << paced.coupled.max_at_one_instant.mean << " (max "
            << paced.coupled.max_at_one_instant.max << "), unpaced "
            << unpaced.coupled.max_at_one_instant.mean << " (max "
            << unpaced.coupled.max_at_one_instant.max << ")\n";
}

FetchTimes graphics_page(bool pacing) {
  WebPagesParams p = LossyPagesParams{}.web;
  p.pages = {EtcpPage::graphics};
  p.variants = {{"single-veno", congestion::CouplingMode::single,
                 congestion::SchedulingPolicy::content, congestion::RandomLoss::veno}};
  p.pacing = pacing;
  const WebPagesResult r = run_web_pages(p);
  const FetchTimes* t = r.find(EtcpPage::graphics, "single-veno");
  EXPECT_NE(t, nullptr);
  return t ? *t : FetchTimes{};
}

TEST(ScenarioPacing, SlowStartOvershootsTheSmallQueueLessWhenPaced) {
  const FetchTimes paced = graphics_page(true);
  const FetchTimes unpaced = graphics_page(false);
  ASSERT_TRUE(paced.complete);
  ASSERT_TRUE(unpaced.complete);
  EXPECT_EQ(paced.errors + unpaced.errors, 0u);
  std::cout << "graphics page: paced " << to_seconds(paced.page) * 1000 << " ms, "
            << paced.bottleneck_drops << " drops; unpaced " << to_seconds(unpaced.page) * 1000
            << " ms, " << unpaced.bottleneck_drops << " drops\n";
  EXPECT_LT(paced.bottleneck_drops, unpaced.bottleneck_drops);
  EXPECT_LT(paced.page, unpaced.page);
}

}  // namespace
}  // namespace egw::scenarios
