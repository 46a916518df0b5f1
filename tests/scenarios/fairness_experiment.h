// Fairness of an `n_flows` ensemble (issue 2 section 5 item 2; EFCM,
// Savoric & Karl, TKN-04-007, sections 2.4 and 5: an ensemble of n members is
// as aggressive as n flows and shares its window fairly among them).
//
//   right(0) sender: `n_flows` ensemble of 4 bulk streams \   reverse bottleneck:  / left(0)
//   right(1..4) senders: 4 independent one-stream flows     ==> 10 Mbit/s, 50 ms, ==> left(1..4)
//                                                          /   queue 83 pkts (1 BDP)
//
// Same path as the aggressiveness experiment (bulk_competition.h). Measured:
//  - ratio: the ensemble's total steady-state throughput over the total of
//    the 4 independent flows (criterion [0.75, 1.33]);
//  - Jain's fairness index among the ensemble's 4 members (criterion >= 0.99)
//    and, for comparison, among the 4 independent flows (EFCM's uncoupled
//    baseline).
#pragma once

#include <string>

#include "tests/scenarios/bulk_competition.h"
#include "tests/scenarios/seed_stats.h"

namespace egw::sim {}
namespace egw::scenarios {

// Experiments are written in the simulator's vocabulary.
using namespace egw::sim;

struct FairnessParams {
  CompetitionPath path;  // 10 Mbit/s, 100 ms RTT, 1 BDP queue, NewReno, 10..60 s window
  std::size_t streams = 4;
};

struct FairnessResult {
  FairnessParams params;
  CompetitionResult run;  // groups: [0] n_flows ensemble, [1] independent flows

  double ratio() const;               // ensemble total / independent flows' total
  double jain_ensemble() const;       // among the ensemble's members
  double jain_independent() const;    // among the independent flows
  // Over seeds: per-run ratio, per-run Jain's index of each group.
  SeedStats ratio_stats() const;
  SeedStats jain_ensemble_stats() const;
  SeedStats jain_independent_stats() const;
};

FairnessResult run_fairness(const FairnessParams& params = {});
std::string report_fairness(const FairnessResult& result);

}  // namespace egw::scenarios
