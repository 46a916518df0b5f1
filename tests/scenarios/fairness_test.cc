// Fairness: an `n_flows` ensemble of 4 is as aggressive as 4 flows and
// shares fairly among its members (issue 2 section 5 item 2; EFCM,
// Savoric & Karl TKN-04-007, sections 2.4.2 and 5).
//
//   right(0):    4 bulk streams, one connection (n_flows) \                          / left(0)
//   right(1..4): 1 bulk stream each, 4 connections         +=> 10 Mbit/s, 50 ms  =>+  left(1..4)
//                (independent NewReno flows)              /    queue 83 packets     \ .
//                                                         <== same (requests, ACKs) <==
//
// Parameters: 10 Mbit/s bottleneck each way, 50 ms one way (RTT 100 ms),
// drop-tail queue of 83 packets = 1 BDP (10^7 * 0.1 / (1500 * 8) = 83.3),
// 1500-byte packets on the wire (1472-byte datagrams + 28 B IPv4/UDP),
// NewReno everywhere, IW10, up to 1 ms random per-packet jitter (no
// reordering, no drop-tail phase effects), every stream starts at a random
// instant in [0, 1 s), throughput counted over the steady state 10 s - 40 s
// (was 10-60 s in one run; shortened to pay for the seeds), 20 seeds from 1:
// the ratio is the mean throughputs' ratio, Jain's index the mean of the
// per-seed indexes (min/max/sd printed). EFCM's own setup (100 Mbit/s core, 20-packet
// queues, WWW background) is not reproduced; its fairness numbers are
// printed for comparison.
#include <chrono>
#include <iostream>

#include <gtest/gtest.h>

#include "tests/scenarios/fairness_experiment.h"

namespace egw::scenarios {
namespace {

TEST(ScenarioFairness, NFlowsEnsembleOfFourMatchesFourFlowsAndSharesFairly) {
  const auto cpu_start = std::chrono::steady_clock::now();  // harness only
  const FairnessResult r = run_fairness();
  std::cout << report_fairness(r) << "[ cpu      ] "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - cpu_start)
                   .count()
            << " ms\n";

  ASSERT_EQ(r.run.groups.size(), 2u);
  for (const GroupResult& g : r.run.groups) {
    ASSERT_EQ(g.stream_bits_per_second.size(), 4u) << g.label;
    EXPECT_EQ(g.mismatches, 0u) << g.label;
    EXPECT_FALSE(g.any_stream_reset) << g.label;
  }
  // Content is at most ~0.963 of the wire rate (headers); 0.90 catches an idle link.
  EXPECT_GT(r.run.bottleneck_utilization, 0.90);
  // Criterion 2a: ensemble total / 4 independent flows within [0.75, 1.33].
  EXPECT_GE(r.ratio(), 0.75);
  EXPECT_LE(r.ratio(), 1.33);
  // Criterion 2b: Jain's index among the ensemble's 4 members >= 0.99
  // (EFCM: 0.9977 coupled vs 0.8112 uncoupled).
  EXPECT_GE(r.jain_ensemble_stats().mean, 0.99);
  // Not asserted (printed): Jain among the independent flows; with 50 s of
  // long flows at one RTT it is high too (0.97-0.999 over seeds), unlike
  // EFCM's short WWW transfers over a lossy last hop.
}

}  // namespace
}  // namespace egw::scenarios
