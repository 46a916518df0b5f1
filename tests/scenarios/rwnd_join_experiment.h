// A stream joins beside a receive-window-limited long stream (issue
// "Ensemble core under real traffic", defect 3): the long stream's window
// has room (it is held by the reader's flow control, not by cwnd), and the
// ACK-clocked join must still not let the joiner burst into a shallow queue.
//
//   client (sender)  left(0) ==== forward: 10 Mbit/s, 50 ms, drop-tail 20 pkts ====> right(0) server (readers)
//                            <=== reverse: the same (ACKs, MAX_STREAM_DATA)      ====
//
// One tunnel connection, product defaults: coupling `single`, join
// ack_clocked, NewReno, IW 10, 1200-byte datagrams (+ 28 B), except the
// receive window: 64 KB per stream, half the 125 KB path BDP. Two
// client-to-server streams:
//   long   100 MB offered at once, starting at a random instant in [0, 1 s),
//          read as it arrives: held by its 64 KB receive window, it sends
//          about 64 KB per RTT and leaves room in the shared window (whose
//          validation lets it reach twice the flight in slow start);
//   short  200 KB (BulkTransfer, read at once), joining at a random instant
//          in [5 s, 6 s).
// Variants: `single` (ack_clocked join, the product) and `none` (uncoupled,
// the joiner starts from its own IW 10). Measured at the bottleneck's
// entrance (sender_trace.h): packets arriving at the same instant (both
// streams': the long stream's ACK clock alone releases up to 4 per ack of 2
// packets in slow start), drops and the queue in
// the first RTT after the join ([join, join + 100 ms)), drops until the short
// stream completed, and its completion time. 20 seeds.
#pragma once

#include <string>

#include "common/units.h"
#include "congestion/ensemble_config.h"
#include "tests/scenarios/dumbbell.h"
#include "tests/scenarios/seed_stats.h"

namespace egw::scenarios {

struct RwndJoinParams {
  DumbbellParams path{.queue_limit_packets = 20};
  std::uint32_t initial_window_packets = 10;
  ByteCount long_bytes = 100'000'000;
  ByteCount stream_window_bytes = 64 * 1024;
  ByteCount long_read_bytes = 1 << 20;  // everything there is, every millisecond
  Duration long_read_period = ms(1);
  ByteCount short_bytes = 200'000;
  Duration long_window_from = ms(0);
  Duration short_window_from = ms(5'000);
  Duration start_window = ms(1'000);
  std::size_t seeds = 20;
  std::uint64_t seed = 1;
  bool pacing = congestion::PacingConfig{}.enabled;  // both variants, both sides
};

struct RwndJoinVariant {
  std::string name;
  SeedStats fct_ms;
  SeedStats max_at_one_instant;  // from the join until the short stream completed
  SeedStats drops_first_rtt;
  SeedStats max_queue_first_rtt;
  SeedStats drops_until_done;
  SeedStats packets_before_join;  // sender packets in the second before the join (long stream)
  std::uint64_t mismatches = 0;
  std::size_t unfinished = 0;
};

struct RwndJoinResult {
  RwndJoinParams params;
  std::string describe;
  RwndJoinVariant coupled;    // single + ack_clocked
  RwndJoinVariant uncoupled;  // none
  SeedStats fct_ratio;        // coupled / uncoupled, per seed
};

RwndJoinResult run_rwnd_join(const RwndJoinParams& params = {});
std::string report_rwnd_join(const RwndJoinResult& result);

}  // namespace egw::scenarios
