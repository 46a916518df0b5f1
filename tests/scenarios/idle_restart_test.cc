// Scenario: restart after 1 h idle inside a live ensemble (issue "Ensemble
// core under real traffic", defect 4).
//
//   client (sender)  left(0) ==== forward: 10 Mbit/s, 50 ms, queue 102 pkts ====> right(0) server
//                            <=== reverse: the same (ACKs)                   ====
//
// Parameters (idle_restart_experiment.h): product defaults (single, NewReno,
// IW 10, 1200-byte datagrams, idle_timeout 30 s: the open keep-alive stream
// makes the connection PING every 15 s, so it and its ensemble stay alive);
// one long-lived upload stream: 10 MB, 1 h of silence, 10 MB more on the same
// stream. Deterministic: one run.
// Goals (asserted) for the first 100 ms (one RTT) after the restart:
//  - at most max(IW, half the window before the restart) + 2 packets;
//  - not within one instant: at most IW packets at the same instant;
//  - every packet beyond the IW marked low priority (DSCP LE).
// Before the fix the issue measured the full stale window (640 packets)
// unmarked within 100 ms.
#include <iostream>

#include <gtest/gtest.h>

#include "tests/scenarios/idle_restart_experiment.h"
#include "tests/scenarios/law_param.h"

namespace egw::scenarios {
namespace {

using congestion::WindowLawKind;

class ScenarioIdleRestart : public ::testing::TestWithParam<WindowLawKind> {};

TEST_P(ScenarioIdleRestart, StaleWindowIsNotSentAtOnceAfterAnHourIdle) {
  IdleRestartParams p;
  p.law = GetParam();
  const IdleRestartResult r = run_idle_restart(p);
  std::cout << report_idle_restart(r);
  ASSERT_TRUE(r.first_complete);
  EXPECT_TRUE(r.second_complete);
  EXPECT_FALSE(r.connection_closed);
  EXPECT_EQ(r.ensembles_started, 1u);  // the restart happened inside the live ensemble
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_LE(r.packets_first_rtt, r.bound_packets());
  EXPECT_LE(r.max_at_one_instant, r.params.initial_window_packets);
  const std::uint64_t beyond_iw = r.packets_first_rtt > r.params.initial_window_packets
                                      ? r.packets_first_rtt - r.params.initial_window_packets
                                      : 0;
  EXPECT_GE(r.low_priority_first_rtt, beyond_iw);
}

INSTANTIATE_TEST_SUITE_P(Laws, ScenarioIdleRestart, kBothLaws, law_param_name);

}  // namespace
}  // namespace egw::scenarios
