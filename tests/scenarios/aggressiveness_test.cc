// Aggressiveness: an ensemble of 4 streams is as aggressive as one flow; the
// uncoupled bundle of 4 is not (issue 2 section 5 item 1; E-TCP section 3).
//
//   right(0): 4 bulk streams, one connection \                          / left(0)
//                                             +=> 10 Mbit/s, 50 ms  =>+
//   right(1): 1 bulk stream,  one connection /    queue 83 packets     \ left(1)
//             (NewReno, one flow)            <== same (requests, ACKs) <==
//
// Parameters: 10 Mbit/s bottleneck each way, 50 ms one way (RTT 100 ms),
// drop-tail queue of 83 packets = 1 BDP (10^7 * 0.1 / (1500 * 8) = 83.3),
// 1500-byte packets on the wire (1472-byte datagrams + 28 B IPv4/UDP),
// NewReno everywhere, IW10 (seed 003's Linux setup; the transient is
// discarded), up to 1 ms random per-packet jitter (below the 1.2 ms
// serialisation time: no reordering of data, but no drop-tail phase
// effects), every stream starts at a random instant in [0, 1 s) (drawn per
// seed), throughput counted over the steady state 10 s - 40 s (was 10-60 s
// in one to three runs; shortened to pay for the seeds), 20 seeds from 1,
// each ratio asserted on the mean over seeds (ratio of the mean throughputs;
// per-seed min/max/sd printed). Every stream is far longer than the run. The
// one flow is a separate connection with one stream (coupling `single`: with
// one member it is plain NewReno).
#include <chrono>
#include <iostream>

#include <gtest/gtest.h>

#include "tests/scenarios/aggressiveness_experiment.h"

namespace egw::scenarios {
namespace {

using congestion::CouplingMode;

void expect_healthy(const CompetitionResult& run) {
  for (const GroupResult& g : run.groups) {
    EXPECT_EQ(g.mismatches, 0u) << g.label;
    EXPECT_FALSE(g.any_stream_reset) << g.label;
    for (double bps : g.stream_bits_per_second) EXPECT_GT(bps, 0.0) << g.label;
  }
  // The bottleneck is the limit: it drops and stays busy. Content is at most
  // ~1444 of every 1500 wire bytes (headers, tag) = 0.963 of the rate; 0.90
  // catches an idle link.
  EXPECT_GT(run.bottleneck_drops, 0u);
  EXPECT_GT(run.bottleneck_utilization, 0.90);
}

long long cpu_ms_since(std::chrono::steady_clock::time_point start) {  // harness only
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

TEST(ScenarioAggressiveness, SingleEnsembleOfFourIsAsAggressiveAsOneFlow) {
  const auto cpu_start = std::chrono::steady_clock::now();
  const AggressivenessParams p;
  const CompetitionResult r = run_bundle_vs_one_flow(p, CouplingMode::single, p.coupled_runs);
  std::cout << "Aggressiveness, `single` ensemble of 4 vs one NewReno flow:\n"
            << report_bundle_vs_one_flow(r, "0.75-1.33") << "[ cpu      ] " << cpu_ms_since(cpu_start)
            << " ms\n";
  expect_healthy(r);
  ASSERT_EQ(r.runs, 20u);
  // Criterion 1a: ensemble total / one flow within [0.75, 1.33].
  const double ratio = AggressivenessResult::bundle_to_flow_ratio(r);
  EXPECT_GE(ratio, 0.75);
  EXPECT_LE(ratio, 1.33);
}

TEST(ScenarioAggressiveness, UncoupledBundleOfFourTakesAtLeastTwoAndAHalfTimesOneFlow) {
  const auto cpu_start = std::chrono::steady_clock::now();
  const AggressivenessParams p;
  const CompetitionResult r = run_bundle_vs_one_flow(p, CouplingMode::none, p.uncoupled_runs);
  std::cout << "Aggressiveness, `none` bundle of 4 vs one NewReno flow:\n"
            << report_bundle_vs_one_flow(r, ">= 2.5") << "[ cpu      ] " << cpu_ms_since(cpu_start)
            << " ms\n";
  expect_healthy(r);
  // Criterion 1b: the uncoupled bundle takes at least 2.5x the one flow.
  EXPECT_GE(AggressivenessResult::bundle_to_flow_ratio(r), 2.5);
}

TEST(ScenarioAggressiveness, SameSeedGivesSameThroughputs) {
  // A shorter window keeps the CPU cost down; determinism does not need 60 s.
  AggressivenessParams p;
  p.path.warmup = ms(1'000);
  p.path.horizon = ms(3'000);
  const CompetitionResult a = run_bundle_vs_one_flow(p, CouplingMode::single, 1);
  const CompetitionResult b = run_bundle_vs_one_flow(p, CouplingMode::single, 1);
  ASSERT_EQ(a.groups.size(), b.groups.size());
  for (std::size_t g = 0; g < a.groups.size(); ++g) {
    EXPECT_EQ(a.groups[g].stream_bits_per_second, b.groups[g].stream_bits_per_second);
  }
  EXPECT_EQ(a.bottleneck_drops, b.bottleneck_drops);
  EXPECT_EQ(a.events, b.events);
  // And the seed matters (the jitter draws differ), so the comparison above
  // is not trivially true.
  p.path.seed = 2;
  const CompetitionResult c = run_bundle_vs_one_flow(p, CouplingMode::single, 1);
  EXPECT_NE(a.events, c.events);
}

}  // namespace
}  // namespace egw::scenarios
