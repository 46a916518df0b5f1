// Scenario: application-limited and receiver-limited senders keep cwnd near
// what they use (issue "Ensemble core under real traffic", defect 1).
//
//   client (sender)  left(0) ==== forward: 10 Mbit/s, 50 ms, 102 pkts (1 BDP) ====> right(0) server
//                            <=== reverse: the same (ACKs, MAX_STREAM_DATA)   ====
//
// Parameters (app_limited_experiment.h): product defaults (IW 10, coupling
// single, 1200-byte datagrams + 28 B), once with NewReno and once with the
// model law (the gateway's default); deterministic (no loss, no jitter, one
// stream starting at 0), so one run each.
//  - app_limited: 1000 B every 100 ms (1 packet per RTT) for 200 RTTs;
//  - rwnd_limited: 64 KB stream receive window at the reader, which reads
//    16 KB every 20 ms (6.6 Mbit/s), the writer has 40 MB; 10 s.
// Goal (asserted): cwnd (largest over the run and at its end) <= max(IW,
// 2 x the largest flight observed) + 3 packets. Before the core's fix the
// issue measured 210 packets (app_limited) and a 241 MB cwnd with 16 MB in
// flight (a larger receive window).
#include <iostream>
#include <map>

#include <gtest/gtest.h>

#include "tests/scenarios/app_limited_experiment.h"
#include "tests/scenarios/law_param.h"

namespace egw::scenarios {
namespace {

using congestion::WindowLawKind;

// One run per law, shared by the suite's tests.
const AppLimitedResult& result_for(WindowLawKind law) {
  static std::map<WindowLawKind, AppLimitedResult> results;
  auto it = results.find(law);
  if (it == results.end()) {
    AppLimitedParams p;
    p.law = law;
    it = results.emplace(law, run_app_limited(p)).first;
    std::cout << report_app_limited(it->second);
  }
  return it->second;
}

class ScenarioAppLimited : public ::testing::TestWithParam<WindowLawKind> {
 protected:
  const AppLimitedResult& result() const { return result_for(GetParam()); }
};

// The model law's bottleneck rate may never exceed the link's: an estimate
// inflated by app-limited or credit-released samples would pace above it.
void expect_validated(const AppLimitedCase& c, const AppLimitedParams& p) {
  const ByteCount packet = p.path.packet_bytes;
  SCOPED_TRACE(c.name + ": " + c.describe);
  EXPECT_LE(c.max_bw_bytes_per_s * 8.0, static_cast<double>(p.path.bottleneck_bits_per_second));
  EXPECT_EQ(c.mismatches, 0u);
  EXPECT_GT(c.bytes_read, 0u);
  EXPECT_LE(c.final_cwnd, c.bound) << "final cwnd " << c.final_cwnd / packet << " pkts, max flight "
                                   << c.max_in_flight / packet << " pkts";
  EXPECT_LE(c.max_cwnd, c.bound) << "max cwnd " << c.max_cwnd / packet << " pkts, max flight "
                                 << c.max_in_flight / packet << " pkts";
}

TEST_P(ScenarioAppLimited, OnePacketPerRttLeavesCwndNearTheInitialWindow) {
  const AppLimitedCase& c = result().app_limited;
  EXPECT_EQ(c.bytes_read, result().params.app_write_bytes * result().params.app_writes);
  expect_validated(c, result().params);
}

TEST_P(ScenarioAppLimited, ReceiverLimitedSenderDoesNotGrowCwndFarBeyondItsFlight) {
  const AppLimitedCase& c = result().rwnd_limited;
  // The reader, not the link, was the limit: at most its read rate.
  const double read_rate = static_cast<double>(result().params.rwnd_read_bytes) /
                           to_seconds(result().params.rwnd_read_period);
  EXPECT_LE(static_cast<double>(c.bytes_read),
            read_rate * to_seconds(result().params.rwnd_duration) + 2.0 * 65536);
  expect_validated(c, result().params);
}

INSTANTIATE_TEST_SUITE_P(Laws, ScenarioAppLimited, kBothLaws, law_param_name);

}  // namespace
}  // namespace egw::scenarios
