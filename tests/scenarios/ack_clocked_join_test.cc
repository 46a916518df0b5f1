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
//     delayed ACKs every 2 packets / 25 ms (Linux-like); seed 1.
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
// The paper averaged 10 runs with random start times; one fixed pair of start
// times is asserted here. Ten other pairs (long 0.1-1.0 s, short 6.0-6.9 s),
// with CUBIC and NewReno, all met (a)-(c) when this was written.
// CPU: the two 20 s runs dominate (a few seconds each under ASan); the other
// variants stop once the short stream completed.
#include <array>
#include <iostream>
#include <iterator>

#include <gtest/gtest.h>

#include "tests/scenarios/ack_clocked_join_experiment.h"

namespace egw::scenarios {
namespace {

using V = AckClockedJoinVariant;

// Each simulation runs once per suite, when a test first needs it: the two
// 20 s runs (ack_clocked, no_join) cost a few seconds each under ASan, so
// the variants that only feed criteria (a) and (b) stop once the short
// stream completed.
class ScenarioAckClockedJoin : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { result_ = new AckClockedJoinResult{}; }
  static void TearDownTestSuite() {
    delete result_;
    result_ = nullptr;
    done_ = {};
  }
  static const AckClockedJoinParams& params() { return result_->params; }
  static const AckClockedJoinRun& run(V v) {
    const auto i = static_cast<std::size_t>(v);
    if (!done_[i]) {
      // Criterion (c) compares ack_clocked and no_join at the horizon.
      const bool to_horizon = v == V::ack_clocked || v == V::no_join;
      result_->run(v) = run_ack_clocked_join_variant(result_->params, v, to_horizon);
      done_[i] = true;
      EXPECT_EQ(result_->run(v).mismatches, 0u) << to_string(v);
    }
    return result_->run(v);
  }
  static const AckClockedJoinResult& all_runs() {
    for (V v : kAckClockedJoinVariants) run(v);
    return *result_;
  }

 private:
  static AckClockedJoinResult* result_;
  static std::array<bool, std::size(kAckClockedJoinVariants)> done_;
};
AckClockedJoinResult* ScenarioAckClockedJoin::result_ = nullptr;
std::array<bool, std::size(kAckClockedJoinVariants)> ScenarioAckClockedJoin::done_{};

TEST_F(ScenarioAckClockedJoin, ShortStreamCompletesAtLeastFortyPercentSoonerThanUncoupled) {
  const AckClockedJoinRun& ack = run(V::ack_clocked);
  const AckClockedJoinRun& uncoupled = run(V::uncoupled);
  ASSERT_TRUE(ack.short_fct.has_value());
  ASSERT_TRUE(uncoupled.short_fct.has_value());
  const double ack_ms = static_cast<double>(ack.short_fct->count()) / 1e3;
  const double uncoupled_ms = static_cast<double>(uncoupled.short_fct->count()) / 1e3;
  std::cout << "short FCT: ack_clocked " << ack_ms << " ms, uncoupled " << uncoupled_ms
            << " ms (paper: > 40 % shorter)\n";
  // At least 40 % sooner: FCT(ack_clocked) <= (1 - 0.40) * FCT(uncoupled).
  EXPECT_LE(ack_ms, 0.60 * uncoupled_ms);
}

TEST_F(ScenarioAckClockedJoin, AckClockNeitherDropsNorFillsTheQueueInTheFirstRttAfterTheJoin) {
  const AckClockedJoinRun& ack = run(V::ack_clocked);
  // The join is seen at the sender one forward trip after the request left.
  EXPECT_GE(ack.join_at, instant_at(params().short_start + params().one_way_delay));
  ASSERT_GT(ack.rtt_at_join.count(), 0);
  std::cout << "ack_clocked, [join, join + " << ack.rtt_at_join.count() << " us): drops "
            << ack.drops_in_window << ", max queue " << ack.max_queue_in_window << " of "
            << params().queue_limit_packets << "\n";
  EXPECT_EQ(ack.drops_in_window, 0u);
  EXPECT_LT(ack.max_queue_in_window, params().queue_limit_packets);  // below 83
}

TEST_F(ScenarioAckClockedJoin, ImmediateUnpacedShareOverflowsTheQueueInTheFirstRttAfterTheJoin) {
  const AckClockedJoinRun& imm = run(V::immediate);
  EXPECT_GE(imm.join_at, instant_at(params().short_start + params().one_way_delay));
  ASSERT_GT(imm.rtt_at_join.count(), 0);
  std::cout << "immediate, [join, join + " << imm.rtt_at_join.count() << " us): drops "
            << imm.drops_in_window << ", max queue " << imm.max_queue_in_window << " of "
            << params().queue_limit_packets << "\n";
  EXPECT_GT(imm.drops_in_window, 0u);
  EXPECT_EQ(imm.max_queue_in_window, params().queue_limit_packets);  // full: 83
}

TEST_F(ScenarioAckClockedJoin, LongStreamIsNotSlowedByMoreThanTwoPercent) {
  const AckClockedJoinRun& ack = run(V::ack_clocked);
  const AckClockedJoinRun& alone = run(V::no_join);
  ASSERT_TRUE(ack.long_bytes_by_horizon && alone.long_bytes_by_horizon);
  // "Still running at 20 s": 25 MB need 20 s of line rate from 0.5 s.
  EXPECT_FALSE(ack.long_complete);
  EXPECT_FALSE(alone.long_complete);
  const double with_join = static_cast<double>(*ack.long_bytes_by_horizon);
  const double without = static_cast<double>(*alone.long_bytes_by_horizon);
  std::cout << "long stream bytes by 20 s: with the ack_clocked join " << with_join
            << ", without a join " << without << ", cost "
            << 100.0 * (1.0 - with_join / without) << " % (paper: <= 0.66 %)\n";
  // At most 2 % slower: with_join >= (1 - 0.02) * without.
  EXPECT_GE(with_join, 0.98 * without);
}

// Prints every variant next to the paper (`single` too: it is not asserted).
TEST_F(ScenarioAckClockedJoin, ReportAgainstThePaper) {
  const AckClockedJoinResult& r = all_runs();
  std::cout << report_ack_clocked_join(r);
  for (V v : kAckClockedJoinVariants) {
    if (v == V::no_join) continue;
    EXPECT_TRUE(r.run(v).short_fct.has_value()) << to_string(v);
  }
}

}  // namespace
}  // namespace egw::scenarios
