// Scenario: ACK-clocked join (seed 003 section 3, Algorithm 1; issue 2
// section 5 item 3).
//
//   client (receiver)                                     server (sender)
//   left(0) <==== reverse: 10 Mbit/s, 50 ms, drop-tail 83 pkts ==== right(0)
//           ====> forward: 10 Mbit/s, 50 ms, drop-tail 83 pkts ===>
//              (requests and ACKs)            RTT 100 ms, 1 BDP queue
//
// Parameters (paper: ns-2 dumbbell, 10 Mbit/s, RTT 100 ms, 1500-byte packets,
// queue 1 BDP = 83 packets; long flow started within the first second, short
// flow within the sixth):
//   - packets: 1472-byte tunnel datagrams + 28 B IPv4/UDP = 1500 B on the wire;
//   - long stream 25 MB starting at 0.5 s (25e6 * 8 / 10e6 = 20 s of line
//     rate, so it is still running at 20 s); short stream 200 KB at 6.0 s;
//     both bulk class, scheduler `fair`, one tunnel connection;
//   - window law CUBIC with IW 10 (the paper ran Linux 3.17 TCP code through
//     ns-2's TCP-Linux: CUBIC is that kernel's default, IW10 is RFC 6928);
//     delayed ACKs every 2 packets / 25 ms (Linux-like); 20 seeds (1..20),
//     each its own pair of start times.
//   - coupled mode n_flows (seed 003's coupling, ctrlTCP, is as aggressive as
//     n flows, like EFCM); `single` is printed next to it.
//
// Criteria (all asserted):
//  (a) short-stream FCT (from its start) with ack_clocked at least 40 % below
//      the uncoupled bundle (CouplingMode::none);
//  (b) during the first RTT after the join ([join, join + srtt), join = the
//      instant the sender's ensemble gained the short stream, srtt = the
//      ensemble's smoothed RTT then) ack_clocked drops nothing at the
//      bottleneck and its queue stays below 83, while the immediate unpaced
//      share drops packets in that same window;
//  (c) the long stream's cost: 1 - bytes delivered by t = 20 s with the
//      ack_clocked join / bytes delivered by t = 20 s with no join at all
//      (same coupling, same seed) is at most 2 %. The short stream's own
//      200 KB already cost 0.87 % of ~22.9 MB on a saturated link.
// The paper averaged 10 runs with random start times; we run 20 seeds and
// assert every criterion on the mean over seeds (and print min/max/sd).
// CPU: per seed two 20 s runs (ack_clocked, no_join) and two short ones.
#include <iostream>

#include <gtest/gtest.h>

#include "tests/scenarios/ack_clocked_join_experiment.h"

namespace egw::scenarios {
namespace {

class ScenarioAckClockedJoin : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    result_ = new AckClockedJoinSeeds(run_ack_clocked_join_seeds(AckClockedJoinParams{}, false));
  }
  static void TearDownTestSuite() {
    delete result_;
    result_ = nullptr;
  }
  static const AckClockedJoinSeeds& r() { return *result_; }

 private:
  static AckClockedJoinSeeds* result_;
};
AckClockedJoinSeeds* ScenarioAckClockedJoin::result_ = nullptr;

TEST_F(ScenarioAckClockedJoin, ShortStreamCompletesAtLeastFortyPercentSoonerThanUncoupled) {
  ASSERT_EQ(r().runs.size(), 20u);
  EXPECT_EQ(r().unfinished_short, 0u);
  EXPECT_EQ(r().mismatches, 0u);
  ASSERT_EQ(r().fct_reduction.n(), 20u);
  std::cout << "short FCT: ack_clocked " << format_stats(r().ack_fct_ms, 1.0, "ms", 0)
            << ", uncoupled " << format_stats(r().uncoupled_fct_ms, 1.0, "ms", 0) << "; reduction "
            << format_stats(r().fct_reduction, 100.0, "%") << " (paper: > 40 %)\n";
  // At least 40 % sooner on the mean over seeds.
  EXPECT_GE(r().fct_reduction.mean, 0.40);
}

TEST_F(ScenarioAckClockedJoin, AckClockNeitherDropsNorFillsTheQueueInTheFirstRttAfterTheJoin) {
  for (const AckClockedJoinResult& x : r().runs) {
    // The join is seen at the sender one forward trip after the request left.
    EXPECT_GE(x.ack_clocked.join_at, instant_at(x.params.short_start + x.params.one_way_delay));
    EXPECT_GT(x.ack_clocked.rtt_at_join.count(), 0);
  }
  std::cout << "ack_clocked, first RTT after the join: drops "
            << format_stats(r().ack_drops_in_window, 1.0, "", 2) << ", max queue "
            << format_stats(r().ack_max_queue_in_window, 1.0, "", 1) << " of "
            << r().params.queue_limit_packets << "\n";
  // Mean 0 drops: no seed drops. Queue below 83 on the mean and on every seed.
  EXPECT_EQ(r().ack_drops_in_window.mean, 0.0);
  EXPECT_LT(r().ack_max_queue_in_window.mean, static_cast<double>(r().params.queue_limit_packets));
  EXPECT_LT(r().ack_max_queue_in_window.max, static_cast<double>(r().params.queue_limit_packets));
}

TEST_F(ScenarioAckClockedJoin, ImmediateUnpacedShareOverflowsTheQueueInTheFirstRttAfterTheJoin) {
  std::cout << "immediate, first RTT after the join: drops "
            << format_stats(r().immediate_drops_in_window, 1.0, "", 2) << ", max queue "
            << format_stats(r().immediate_max_queue_in_window, 1.0, "", 1) << " of "
            << r().params.queue_limit_packets << "\n";
  EXPECT_GT(r().immediate_drops_in_window.mean, 0.0);
  // Full (83) on the mean: on every seed.
  EXPECT_EQ(r().immediate_max_queue_in_window.mean,
            static_cast<double>(r().params.queue_limit_packets));
}

TEST_F(ScenarioAckClockedJoin, LongStreamIsNotSlowedByMoreThanTwoPercent) {
  for (const AckClockedJoinResult& x : r().runs) {
    // "Still running at 20 s": 25 MB need 20 s of line rate.
    EXPECT_FALSE(x.ack_clocked.long_complete);
    EXPECT_FALSE(x.no_join.long_complete);
  }
  ASSERT_EQ(r().long_cost.n(), 20u);
  std::cout << "long stream cost by 20 s (1 - with join / without): "
            << format_stats(r().long_cost, 100.0, "%", 2) << " (paper: <= 0.66 %)\n";
  // At most 2 % slower on the mean over seeds.
  EXPECT_LE(r().long_cost.mean, 0.02);
}

TEST_F(ScenarioAckClockedJoin, ReportAgainstThePaper) { std::cout << report_ack_clocked_join_seeds(r()); }

}  // namespace
}  // namespace egw::scenarios
