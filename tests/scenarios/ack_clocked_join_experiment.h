// ACK-clocked join (seed 003, "ACK-clocked joining for coupled TCP congestion
// control", section 3 and Algorithm 1; issue 2 section 5 item 3).
//
//   server (sender) ==== reverse bottleneck: 10 Mbit/s, 50 ms, queue 83 pkts ===> client
//                   <=== forward: same (carries requests and ACKs)            ====
//
// One tunnel connection. A 25 MB long stream starts at 0.5 s and is still
// running at 20 s (25 MB needs 20 s at 10 Mbit/s); a 200 KB short stream
// joins at 6 s. Variants (every one a separate, deterministic simulation):
//   ack_clocked  coupled (n_flows), JoinMode::ack_clocked: the joiner takes
//                its share of the aggregate, released slot by slot on the
//                ACKs of the long stream (no burst);
//   immediate    coupled (n_flows), JoinMode::immediate: the share goes out
//                at once on top of the window (the unpaced burst of Fig. 1a);
//   uncoupled    CouplingMode::none: each stream its own NewReno/CUBIC,
//                the short one from the initial window (the baseline);
//   no_join      the long stream alone (the reference for its cost);
//   single       JoinMode::ack_clocked with CouplingMode::single (printed).
//
// The measurement window of criterion (b) is the first RTT after the join:
// from the instant the sender's ensemble gained the short stream as a member
// to that instant plus the ensemble's smoothed RTT at that instant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/units.h"
#include "congestion/ensemble.h"
#include "tests/scenarios/seed_stats.h"

namespace egw::sim {}
namespace egw::scenarios {

// Experiments are written in the simulator's vocabulary.
using namespace egw::sim;

struct AckClockedJoinParams {
  std::uint64_t bottleneck_bits_per_second = 10'000'000;
  Duration one_way_delay = ms(50);  // RTT 100 ms
  // 1500-byte packets on the wire: 1472-byte tunnel datagrams + 28 B IPv4/UDP.
  ByteCount packet_bytes = 1472;
  // 1 BDP: 10 Mbit/s * 100 ms / (1500 B * 8) = 83.3 packets.
  std::size_t queue_limit_packets = 83;
  ByteCount long_bytes = 25'000'000;
  ByteCount short_bytes = 200'000;
  Duration long_start = ms(500);
  Duration short_start = ms(6'000);
  Duration horizon = ms(20'000);  // the long stream's bytes are counted up to here
  // The paper ran Linux 3.17 TCP code in ns-2 (TCP-Linux): IW10 (RFC 6928)
  // and CUBIC, Linux's default since 2.6.19.
  std::uint32_t initial_window_packets = 10;
  congestion::WindowLawKind law = congestion::WindowLawKind::cubic;
  // seed 003 couples flows "as aggressive as n flows" (ctrlTCP, like EFCM).
  congestion::CouplingMode coupling = congestion::CouplingMode::n_flows;
  std::uint64_t seed = 1;
  // Multi-seed runs (the paper: 10 runs with random start times, the long
  // flow within the first second, the short one within the sixth): seed k
  // draws long_start from [long_window_from, + start_window) and
  // short_start from [short_window_from, + start_window).
  std::size_t seeds = 20;
  Duration long_window_from = ms(0);
  Duration short_window_from = ms(5'000);
  Duration start_window = ms(1'000);
};

// `base` with seed `seed` and its random start times.
AckClockedJoinParams with_random_starts(const AckClockedJoinParams& base, std::uint64_t seed);

enum class AckClockedJoinVariant { ack_clocked, immediate, uncoupled, no_join, single_ack_clocked };
inline constexpr AckClockedJoinVariant kAckClockedJoinVariants[] = {
    AckClockedJoinVariant::ack_clocked, AckClockedJoinVariant::immediate,
    AckClockedJoinVariant::uncoupled, AckClockedJoinVariant::no_join,
    AckClockedJoinVariant::single_ack_clocked};
const char* to_string(AckClockedJoinVariant v);

// One simulation.
struct AckClockedJoinRun {
  std::string label;
  std::string describe;               // Scenario::describe(): parameters and seed
  std::optional<Duration> short_fct;  // from the short stream's start; nullopt: no join / unfinished
  Instant stopped_at{};
  // Set only for runs simulated up to the horizon.
  std::optional<ByteCount> long_bytes_by_horizon;
  bool long_complete = false;  // by stopped_at
  // Criterion (b) window: [join_at, join_at + rtt_at_join).
  Instant join_at{};
  Duration rtt_at_join{0};
  std::uint64_t drops_in_window = 0;
  std::size_t max_queue_in_window = 0;
  std::uint64_t drops_total = 0;  // at the bottleneck (sender -> receiver) until stopped_at
  std::uint64_t mismatches = 0;   // content errors in either stream (must be 0)
};

// Simulates one variant up to the horizon, or, when !to_horizon and the
// variant has a short stream, only until it completed and the window closed
// (what criteria (a) and (b) need; a 20 s run costs seconds under ASan).
AckClockedJoinRun run_ack_clocked_join_variant(const AckClockedJoinParams& params,
                                               AckClockedJoinVariant variant, bool to_horizon);

struct AckClockedJoinResult {
  AckClockedJoinParams params;
  AckClockedJoinRun ack_clocked;
  AckClockedJoinRun immediate;
  AckClockedJoinRun uncoupled;
  AckClockedJoinRun no_join;
  AckClockedJoinRun single_ack_clocked;

  const AckClockedJoinRun& run(AckClockedJoinVariant v) const;
  AckClockedJoinRun& run(AckClockedJoinVariant v);
  // 1 - FCT(ack_clocked) / FCT(uncoupled): >= 0.40 is criterion (a).
  std::optional<double> fct_reduction() const;
  // 1 - long bytes by horizon (ack_clocked) / (no_join): <= 0.02 is criterion (c).
  std::optional<double> long_cost() const;
};

// Every variant up to the horizon (for the demo program; the tests run the
// variants one by one and stop early where they may).
AckClockedJoinResult run_ack_clocked_join(const AckClockedJoinParams& params = {});
std::string report_ack_clocked_join(const AckClockedJoinResult& result);

// params.seeds seeds from params.seed, random start times each. Per seed:
// ack_clocked and no_join to the horizon (criterion (c)), immediate and
// uncoupled (and single, when asked) until the short stream completed.
struct AckClockedJoinSeeds {
  AckClockedJoinParams params;
  std::vector<AckClockedJoinResult> runs;  // one per seed; params hold its start times
  SeedStats ack_fct_ms, uncoupled_fct_ms, immediate_fct_ms, single_fct_ms;
  SeedStats fct_reduction;  // 1 - ack / uncoupled, per seed
  SeedStats ack_drops_in_window, ack_max_queue_in_window;
  SeedStats immediate_drops_in_window, immediate_max_queue_in_window;
  SeedStats long_cost;  // 1 - long bytes by horizon with / without join, per seed
  std::uint64_t mismatches = 0;
  std::size_t unfinished_short = 0;  // short streams that did not complete (must be 0)
};
AckClockedJoinSeeds run_ack_clocked_join_seeds(const AckClockedJoinParams& params, bool with_single);
std::string report_ack_clocked_join_seeds(const AckClockedJoinSeeds& result);

}  // namespace egw::scenarios
