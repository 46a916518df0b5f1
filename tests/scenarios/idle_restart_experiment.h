// Restart after idle inside a live ensemble (issue "Ensemble core under real
// traffic", defect 4; RFC 7661, RFC 9002 7.8, careful resume): a window
// learned an hour ago is no licence to send it at once.
//
//   client (sender)  left(0) ==== forward: 10 Mbit/s, 50 ms, queue 102 pkts ====> right(0) server
//                            <=== reverse: the same (ACKs)                   ====
//
// One tunnel connection, product defaults (coupling single, NewReno, IW 10,
// 1200-byte datagrams + 28 B, queue 1 BDP = 102 packets, idle_timeout 30 s).
//  One long-lived client -> server stream (sim/shaped_stream.h; an
//  HTTP/2-like connection, open throughout, so the connection PINGs every
//  idle_timeout / 2 and the ensemble stays alive, no temporal cache):
//  t = 0.1 s   10 MB (grows the window; done at ~9 s);
//  t = 3609.1 s, after 1 h of silence (only PINGs), 10 MB more on the same
//              stream, which still has its receive-window credit.
// (A new stream would be held by its 16 KB initial stream credit in its
// first RTT, which hides the stale window.)
// Measured at the bottleneck's entrance (sender_trace.h) during the first RTT
// (100 ms) of bulk 2: packets, low-priority (DSCP LE) packets, the largest
// number sent at one instant; and the cwnd just before the restart.
// Deterministic (no loss, jitter or random start): one run.
#pragma once

#include <optional>
#include <string>

#include "common/units.h"
#include "congestion/ensemble_config.h"
#include "tests/scenarios/dumbbell.h"

namespace egw::scenarios {

struct IdleRestartParams {
  DumbbellParams path{.queue_limit_packets = 102};
  std::uint32_t initial_window_packets = 10;
  congestion::WindowLawKind law = congestion::WindowLawKind::newreno;
  ByteCount chunk_bytes = 10'000'000;
  // Chunk 2 is written this long after chunk 1: 1 h of silence after chunk 1
  // completed (~9 s).
  Duration period = ms(3'609'000);
  Duration first_rtt = ms(100);
};

struct IdleRestartResult {
  IdleRestartParams params;
  std::string describe;
  bool first_complete = false;
  Instant first_done_at{};
  bool second_complete = false;
  bool connection_closed = false;  // must stay false (keep-alive PINGs)
  std::uint64_t ensembles_started = 0;  // sender: 1 = the ensemble stayed alive
  ByteCount cwnd_before_restart = 0;
  std::uint64_t packets_first_rtt = 0;
  std::uint64_t low_priority_first_rtt = 0;
  std::uint64_t max_at_one_instant = 0;  // first RTT
  std::uint64_t drops_first_rtt = 0;
  std::uint64_t pings_during_idle = 0;   // sender datagrams during the idle hour
  std::optional<Duration> second_fct;
  std::uint64_t mismatches = 0;
  // Goal: packets_first_rtt <= max(IW, cwnd_before_restart / 2) + 2 packets.
  std::uint64_t bound_packets() const;
};

IdleRestartResult run_idle_restart(const IdleRestartParams& params = {});
std::string report_idle_restart(const IdleRestartResult& result);

}  // namespace egw::scenarios
