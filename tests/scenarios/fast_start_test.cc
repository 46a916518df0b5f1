// Scenario 6: restart from cache (TCP fast start, seed 004 sections 3-4).
//
//   bursty server  right(0) ---\                                   /--- left(0)  bursty client
//   cross servers  right(1..) --+== 1.5 Mbit/s, 50 ms, 50 pkts ===+--- left(1..) cross clients
//                                  (data flows right -> left)
//
// Parameters (the paper's Figure 1 and section 4):
//  - bottleneck 1.5 Mbit/s each way, 50 ms one-way (100 ms RTT), drop-tail
//    buffer of 50 packets; with priority drop (fs-pdrop) a low-priority
//    packet is dropped only when the buffer is full, and a normal arrival to
//    a full buffer pushes a queued low-priority packet out (section 3.3);
//  - 1 KB packets: our datagram is 1024 bytes (+ 28 bytes IPv4/UDP on the wire);
//  - cross traffic: bulk transfers whose maximum window is the receiver's
//    stream flow-control window. The paper's 8 KB window gives one flow
//    ~40 % of the link; our credit is re-advertised in half-window steps, so
//    16 KB gives that share (measured: 44 %; 8 KB would give 23 %);
//  - bursty pair: 30 KB at 3 s, idle 20 s after it completes, a second
//    30 KB burst; we report its completion time (request sent to last byte
//    read);
//  - light load: 1 cross flow throughout, started at a random instant in
//    [0, 2 s); mean of 20 seeds;
//  - changed (heavy) load: no cross traffic during the first burst, 10 flows
//    start 15-17 s into the idle period (10 x ~8 KB in flight exceed the
//    ~18-packet BDP plus the 50-packet buffer: Figure 4's right end); mean of
//    20 seeds that differ in the flows' start times (the paper: 10 runs;
//    10 were not enough: the mean moved between -19 % and +25 % over other
//    sets of 10);
//  - initial window 1 packet for every flow: the paper's ns-2 NewReno of 1998
//    (windowInit_ 1) starts there, and the percentages compare like for like
//    with its Figures 2 and 4. RFC 3390 would give 4 x 1 KB, which shortens
//    slow start and so the gain of a resume;
//  - resume: careful resume (congestion/careful_resume.h) jumps to half the
//    cached cwnd, paced over one SRTT, marked low priority; a loss or an RTO
//    in that phase falls back to slow start without penalty (section 3.4.4).
// Criteria (issue section 5, item 6), asserted for fs-pdrop (the paper's
// proposal); fs (no priority drop at the router) is printed:
//  (a) light load: the second burst completes at least 40 % sooner than with
//      slow start (no cache) (paper: 50-65 %);
//  (b) load added during the idle time: not more than 10 % slower.
#include <iostream>

#include <gtest/gtest.h>

#include "tests/scenarios/fast_start_experiment.h"

namespace egw::scenarios {
namespace {

TEST(ScenarioFastStart, LightLoadResumeIsAtLeast40PercentSooner) {
  FastStartParams params;
  params.heavy_runs = 0;
  const FastStartResult r = run_fast_start(params);
  std::cout << report_fast_start(r);

  const auto& slow = r.at(FastStartLoad::light, FastStartVariant::newreno);
  const auto& resumed = r.at(FastStartLoad::light, FastStartVariant::fs_pdrop);
  // The setup: one 16 KB-window flow takes roughly the paper's 40 % share.
  EXPECT_GT(r.cross_flow_share, 0.30);
  EXPECT_LT(r.cross_flow_share, 0.50);
  // The cache was used, and the baseline did not use one.
  EXPECT_TRUE(resumed.all_resumed);
  EXPECT_GT(resumed.low_priority_sent, 0u);
  EXPECT_EQ(slow.low_priority_sent, 0u);
  // (a) at least 40 % sooner: resumed <= 0.6 x slow start.
  EXPECT_LE(to_seconds(resumed.mean_second_burst), 0.6 * to_seconds(slow.mean_second_burst))
      << "reduction " << r.reduction(FastStartLoad::light, FastStartVariant::fs_pdrop);
}

TEST(ScenarioFastStart, ChangedLoadResumeIsAtMost10PercentSlower) {
  FastStartParams params;
  params.light_runs = 0;
  const FastStartResult r = run_fast_start(params);
  std::cout << report_fast_start(r);

  const auto& slow = r.at(FastStartLoad::heavy, FastStartVariant::newreno);
  const auto& resumed = r.at(FastStartLoad::heavy, FastStartVariant::fs_pdrop);
  EXPECT_TRUE(resumed.all_resumed);
  // The cached state was stale: the router dropped resumed packets.
  EXPECT_GT(resumed.low_priority_dropped, 0u);
  // (b) not more than 10 % slower: resumed <= 1.1 x slow start.
  EXPECT_LE(to_seconds(resumed.mean_second_burst), 1.1 * to_seconds(slow.mean_second_burst))
      << "reduction " << r.reduction(FastStartLoad::heavy, FastStartVariant::fs_pdrop);
}

}  // namespace
}  // namespace egw::scenarios
