// Scenario: a lone bulk download on seed 003's link (10 Mbit/s, RTT 100 ms,
// 1-BDP drop-tail queue) with no random loss at all, under Veno's random
// loss test (`random_loss: veno`, the default) and with every loss taken as
// congestion (bulk_loss_experiment.h). Every loss here is an overflow, so
// Veno must take none for random: the same loss rounds, drops and time.
// Held by flow control (stream windows of 128 and 256 KiB, the gateway's
// default) the sender bursts as credit arrives, and the loss at a burst's
// tail is detected by acks of the next burst, which found the queue empty.
// Before the fix (the backlog from the latest RTT sample and cwnd) Veno took
// 5 of 5 rounds for random there: 233 drops instead of 77, 3 % slower; the
// WAN lab's join experiment showed the same (321 drops before the join
// instead of 108). With a 1 MiB window the download is window-limited.
#include <gtest/gtest.h>

#include "tests/scenarios/bulk_loss_experiment.h"

namespace egw::scenarios {
namespace {

TEST(ScenarioBulkLoss, VenoTakesNoOverflowForRandomLoss) {
  for (const auto law : {congestion::WindowLawKind::newreno, congestion::WindowLawKind::cubic}) {
    for (const ByteCount window : {ByteCount{128 * 1024}, ByteCount{256 * 1024}, ByteCount{1 << 20}}) {
      BulkLossParams p;
      p.law = law;
      p.stream_window_bytes = window;
      const auto runs = run_bulk_loss(p);
      ASSERT_EQ(runs.size(), 2u);
      const BulkLossRun& congestion = runs[0];
      const BulkLossRun& veno = runs[1];
      SCOPED_TRACE(report_bulk_loss(p, runs));
      EXPECT_GT(congestion.fct_ms, 0);
      EXPECT_EQ(veno.random_loss_rounds, 0u);
      EXPECT_EQ(veno.loss_rounds, congestion.loss_rounds);
      EXPECT_EQ(veno.drops, congestion.drops);
      EXPECT_EQ(veno.fct_ms, congestion.fct_ms);
      EXPECT_EQ(veno.rtos, 0u);
    }
  }
}

}  // namespace
}  // namespace egw::scenarios
