// Idle members must not make an `n_flows` ensemble more aggressive (issue
// "Ensemble core under real traffic", defect 2: n counted open streams, so
// one bulk stream plus idle ones took n times its share).
//
//   right(0) sender: n_flows ensemble, 1 bulk stream + k idle streams \  reverse bottleneck: / left(0)
//                                                                       => 10 Mbit/s, 50 ms  =>
//   right(1) sender: one independent single-stream ensemble           /   queue 102 pkts     \ left(1)
//
// bulk_competition.h with 1200-byte datagrams (+ 28 B), queue 1 BDP =
// 10^7 * 0.1 / (1228 * 8) = 102 packets, NewReno, IW 10, 1 ms jitter, both
// bulk streams starting at random instants in [0, 1 s); the k idle streams
// are opened by the ensemble's client at t = 0 and never written (they are
// members on both ends). Throughput over 4-16 s (a shorter window leaves two
// NewReno flows too far from converged: 4-10 s gave ratios of 0.2-4.2 per
// seed; before the fix 5-20 s gave 31.7x and 7.7x), 20 seeds. With 1,000
// idle streams their opening (1,000 small control frames each way, reordered
// by the 1 ms jitter) used to cost a spurious loss round before the bulk
// stream started (ratio 0.43); decreases are now undone when every "lost"
// packet arrives after all.
#pragma once

#include <string>
#include <vector>

#include "tests/scenarios/bulk_competition.h"
#include "tests/scenarios/seed_stats.h"

namespace egw::scenarios {

struct IdleMembersParams {
  CompetitionPath path = [] {
    CompetitionPath p;
    p.packet_bytes = 1200;
    p.queue_limit_packets = 102;
    p.warmup = ms(4'000);
    p.horizon = ms(16'000);
    return p;
  }();
  std::vector<std::size_t> idle_counts = {9, 3, 1000};
};

struct IdleMembersCase {
  std::size_t idle = 0;
  CompetitionResult run;  // groups: [0] the n_flows ensemble's bulk stream, [1] the competitor
  double ratio() const;   // mean throughputs: bulk / competitor
  SeedStats ratio_stats() const;  // per seed
};

struct IdleMembersResult {
  IdleMembersParams params;
  std::vector<IdleMembersCase> cases;
};

IdleMembersResult run_idle_members(const IdleMembersParams& params = {});
std::string report_idle_members(const IdleMembersResult& result);

}  // namespace egw::scenarios
