// Application-limited and receiver-limited senders must not grow their window
// beyond what they use (issue "Ensemble core under real traffic"; RFC 7661
// congestion window validation, RFC 9002 7.8 "underutilizing the window").
//
//   client (sender)  left(0) ==== forward: 10 Mbit/s, 50 ms, queue 102 pkts ====> right(0)  server (reader)
//                            <=== reverse: the same (ACKs, MAX_STREAM_DATA) ====
//
// One tunnel connection, one client-to-server stream (sim/shaped_stream.h),
// product defaults: IW 10, NewReno, coupling `single`, 1200-byte datagrams
// (+ 28 B IPv4/UDP), queue 1 BDP = 10^7 * 0.1 / (1228 * 8) = 102 packets.
// Cases:
//   app_limited   the writer writes 1000 bytes every 100 ms (one packet per
//                 RTT) for 200 RTTs (20 s); the reader reads at once;
//   rwnd_limited  the writer has 40 MB to send at once; the reader's stream
//                 receive window is 64 KB and it reads 16 KB every 20 ms
//                 (6.6 Mbit/s < the 10 Mbit/s link), for 10 s.
// Measured at each packet the sender puts on the bottleneck: its ensemble's
// cwnd and bytes in flight (Connection::stats().ensemble); the largest of
// each, and the cwnd at the end of the run.
#pragma once

#include <string>

#include "common/units.h"
#include "congestion/ensemble_config.h"
#include "tests/scenarios/dumbbell.h"
#include "tests/scenarios/seed_stats.h"

namespace egw::scenarios {

struct AppLimitedParams {
  DumbbellParams path{.queue_limit_packets = 102};
  std::uint32_t initial_window_packets = 10;
  congestion::WindowLawKind law = congestion::WindowLawKind::newreno;
  // app_limited
  ByteCount app_write_bytes = 1000;
  Duration app_write_period = ms(100);
  std::size_t app_writes = 200;
  // rwnd_limited
  ByteCount rwnd_bytes = 64 * 1024;
  ByteCount rwnd_read_bytes = 16 * 1024;
  Duration rwnd_read_period = ms(20);
  ByteCount rwnd_total_bytes = 40'000'000;
  Duration rwnd_duration = ms(10'000);
};

struct AppLimitedCase {
  std::string name;
  std::string describe;
  ByteCount max_cwnd = 0;        // over the sender's packets
  ByteCount max_in_flight = 0;
  ByteCount final_cwnd = 0;      // at the end of the run
  double max_bw_bytes_per_s = 0;  // the model law's bw estimate, largest (0: loss-based)
  ByteCount bytes_read = 0;      // by the reader
  std::uint64_t mismatches = 0;
  // max(IW, 2 x max_in_flight) + 3 packets: the goal for final_cwnd and max_cwnd.
  ByteCount bound = 0;
};

struct AppLimitedResult {
  AppLimitedParams params;
  AppLimitedCase app_limited;
  AppLimitedCase rwnd_limited;
};

AppLimitedResult run_app_limited(const AppLimitedParams& params = {});
std::string report_app_limited(const AppLimitedResult& result);

}  // namespace egw::scenarios
