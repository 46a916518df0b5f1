// Scenario: the model law's competitive mode (congestion/model_law.h) in
// the WAN lab's time frame. Beside CUBIC flows that keep a deep buffer full
// it must switch soon enough to hold 0.5x-2x one CUBIC flow's share in the
// lab's window (4-15 s after all flows start at once); on an asymmetric
// line with random loss, where the only standing queue is the gateways'
// own (the upload's, in the download's ACK path), it must never switch.
// Deterministic (seeded simulator); a few seconds of CPU.
#include <cstdio>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "tests/scenarios/asymmetric_line.h"
#include "tests/scenarios/bulk_competition.h"
#include "tests/sim/scenario.h"

namespace egw::scenarios {
namespace {

using congestion::WindowLawKind;

// compete-cubic of bench/run: 20 Mbit/s, 60 ms RTT, its window (4-15 s,
// all flows at once) instead of ScenarioModelLaw's 20-40 s.
CompetitionPath lab_competition_path(std::size_t queue_packets, std::size_t runs) {
  CompetitionPath path;
  path.bottleneck_bits_per_second = 20'000'000;
  path.one_way_delay = ms(30);
  path.queue_limit_packets = queue_packets;
  path.law = WindowLawKind::cubic;
  path.warmup = ms(4'000);
  path.horizon = ms(15'000);
  path.start_spread = ms(0);
  path.start_spacing = ms(0);
  path.runs = runs;
  return path;
}

// The model law's ensemble beside `cubic_flows` CUBIC flows on `path`: its
// share of one CUBIC flow's rate in each run. Checks every run's link use
// and the ensemble's bytes.
std::vector<double> model_shares_beside_cubic(const CompetitionPath& path, std::size_t cubic_flows) {
  CompetitionGroup ensemble{"ensemble", congestion::CouplingMode::single, 1, true, 0, WindowLawKind::model};
  CompetitionGroup cubic{"cubic", congestion::CouplingMode::single, cubic_flows, false, 0, WindowLawKind::cubic};
  const CompetitionResult r = run_competition(path, {ensemble, cubic});
  EXPECT_GT(r.bottleneck_utilization, 0.9);
  EXPECT_EQ(r.groups.at(0).mismatches, 0u);
  std::vector<double> shares = run_ratios(r, 0, 1);
  for (double& share : shares) share *= static_cast<double>(cubic_flows);
  return shares;
}

// The 600-packet buffer. Beside one CUBIC flow the share is bimodal over
// seeds: the law either competes early (0.7-0.9x) or yields for most of the
// window (0.2-0.5x), in 7 of 24 runs without ACK timestamps and 11 of 24
// with them (means 0.62x and 0.59x; session 34), so two runs said little:
// the mean over 24 runs must hold 0.5x-2x, and no run may starve (0.15x).
// Beside four: means 1.11x with stamps, 0.96x without (0 and 4 of 24 runs
// below 0.5x). Since competing is paced after its slow start (session 39):
// 0.59x (9 of 24 below 0.5x) and 1.17x (1 of 24); paced in its slow start as
// well, 0.16x beside one (ModelLaw::competitive_pacing_rate).
TEST(ScenarioModelLawCompete, HoldsAShareBesideCubicWithinTheLabWindow) {
  const CompetitionPath path = lab_competition_path(600, 24);
  for (const std::size_t cubic_flows : {std::size_t{1}, std::size_t{4}}) {
    const std::vector<double> shares = model_shares_beside_cubic(path, cubic_flows);
    double mean = 0;
    std::size_t below_half = 0;
    for (std::size_t run = 0; run < shares.size(); ++run) {
      const double share = shares[run];
      mean += share / static_cast<double>(shares.size());
      if (share < 0.5) ++below_half;
      EXPECT_GE(share, 0.15) << cubic_flows << " flows, run " << run;
      EXPECT_LE(share, 2.0) << cubic_flows << " flows, run " << run;
    }
    std::printf("model vs %zu CUBIC: mean %.2fx one CUBIC flow over %zu runs, %zu below 0.5x\n", cubic_flows, mean,
                shares.size(), below_half);
    EXPECT_GE(mean, 0.5);
    EXPECT_LE(mean, 2.0);
  }
}

// compete-cubic-bdp of bench/run: the same line with a one-BDP buffer (100
// packets). CUBIC's queue there is 0.4-1 min_rtt, never a whole one, so with
// a standing threshold of one min_rtt the law never competed and yielded:
// 0.24x one CUBIC flow beside one, 0.46x beside four (means of 12 runs; the
// lab 0.16-0.20x / 0.30-0.34x). Runs vary (the share depends on where CUBIC's
// sawtooth is when the 3 s rule looks), so the mean of 6 runs is asserted.
// (0.88x / 0.90x; 0.74x / 1.03x since competing is paced after its slow start.)
// A CUBIC cut drains most of this buffer: in the cycle in which the law had
// just started to compete, the cut's RTT near min_rtt ended competing at
// the cycle's end, and the next 3 s went to the model (the lab's 0.31x one
// CUBIC flow in 5 of 11 runs one morning; here 2 of 6 runs below 0.5x beside
// one). Only a cycle that began competing may end it (ModelLaw::
// enter_competitive): 1 of 6 below 0.5x, means 1.27x / 1.35x.
TEST(ScenarioModelLawCompete, HoldsAShareBesideCubicOnAOneBdpBuffer) {
  const CompetitionPath path = lab_competition_path(100, 6);
  for (const std::size_t cubic_flows : {std::size_t{1}, std::size_t{4}}) {
    double sum = 0;
    std::size_t below_half = 0;
    for (const double share : model_shares_beside_cubic(path, cubic_flows)) {
      sum += share;
      if (share < 0.5) ++below_half;
    }
    const double mean = sum / static_cast<double>(path.runs);
    std::printf("model vs %zu CUBIC on 1 BDP: mean %.2fx one CUBIC flow over %zu runs, %zu below 0.5x\n",
                cubic_flows, mean, path.runs, below_half);
    EXPECT_GE(mean, 0.5) << cubic_flows << " flows";
    EXPECT_LE(mean, 2.0) << cubic_flows << " flows";
    if (cubic_flows == 1) {
      EXPECT_LE(below_half, 1u);
    }
  }
}

// full-links-asym without a competitor: 4 Mbit/s down, 1 Mbit/s up, 30 ms
// one way, 100-packet buffers (1.2 s up), 0.2 % random loss each way, a
// download and an upload through one tunnel, both gateways on the model
// law. The uplink's queue (the branch's upload and the download's ACKs) is
// the gateways' own: neither law may take it for a CUBIC flow's.
TEST(ScenarioModelLawCompete, OwnQueueOnAnAsymmetricLossyLineIsNoCompetitor) {
  sim::Scenario s(asymmetric_line(0.002, 5, 1));
  sim::PairConfig pair_config;
  pair_config.law = WindowLawKind::model;
  pair_config.customize = wide_receive_windows;
  const std::size_t pair = s.add_pair(pair_config);
  const auto bulk = s.add_bulk_both_ways(pair, 64 << 20, instant_at(ms(10)));
  sim::BulkTransfer& download = bulk.download;
  sim::BulkTransfer& upload = bulk.upload;
  int hub_competitive = 0;
  int branch_competitive = 0;
  const Duration to = ms(20'000);
  for (Duration t = ms(100); t <= to; t += ms(100)) {
    s.run_until(instant_at(t));
    const auto hub = s.server(pair).connection().stats().ensemble;
    const auto branch = s.client(pair).connection().stats().ensemble;
    hub_competitive += std::strcmp(hub.law.state, "competitive") == 0;
    branch_competitive += std::strcmp(branch.law.state, "competitive") == 0;
  }
  const auto rate = [&](const sim::BulkTransfer& b, double bps) {
    const ByteCount bytes = b.bytes_delivered_by(instant_at(to)) - b.bytes_delivered_by(instant_at(ms(4'000)));
    return static_cast<double>(bytes) * 8 / to_seconds(to - ms(4'000)) / bps;
  };
  std::printf("asymmetric, 0.2 %% loss: download %.0f %%, upload %.0f %%; competitive samples hub %d, branch %d\n",
              100 * rate(download, 4e6), 100 * rate(upload, 1e6), hub_competitive, branch_competitive);
  EXPECT_EQ(hub_competitive, 0);
  EXPECT_EQ(branch_competitive, 0);
  EXPECT_EQ(download.mismatches(), 0u);
  EXPECT_EQ(upload.mismatches(), 0u);
}

}  // namespace
}  // namespace egw::scenarios
