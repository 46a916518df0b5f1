// Everything an admin or a test may set on an ensemble: coupling, window law,
// recovery options, joins, pacing, careful resume and the scheduler policy.
// Defaults are the product's.
#pragma once

#include <cstdint>

#include "common/units.h"
#include "congestion/stride_scheduler.h"

namespace egw::congestion {

enum class CouplingMode {
  single,   // the ensemble is as aggressive as one flow (E-TCP, TCP session)
  n_flows,  // as aggressive as n flows, n = active members (EFCM, ctrlTCP)
  none,     // each member has its own independent state (uncoupled baseline)
};

// `model`: the BBR-family law with a queue target (congestion/model_law.h).
enum class WindowLawKind { newreno, cubic, model };

// How a domain's initial slow start ends: at the first loss (RFC 5681), or
// earlier, when the RTT grows, with HyStart++ (RFC 9406, congestion/hystart.h).
enum class SlowStart { standard, hystart_pp };

// How a domain sends during loss recovery: `gate` holds every packet until
// the flight is below the reduced window (RFC 6582 with the plain cwnd gate);
// `prr` releases ssthresh/RecoverFS bytes per byte delivered (RFC 6937,
// PRR-SSRB, congestion/prr.h), so the first retransmission goes at once.
enum class Recovery { gate, prr };

// How a domain answers a loss round: every loss is congestion (RFC 5681), or
// TCP Veno's discrimination (Fu & Liew, IEEE JSAC 2003): when the queue the
// window keeps in the network, cwnd * (RTT - min RTT) / RTT, is below 3
// packets at the loss, the loss was random (a radio link, a lossy access
// line), not an overflow, and the window takes a lighter cut (1/5 where
// Reno halves). An overflowing drop-tail queue always shows a backlog, so
// congestive losses get the full cut.
enum class RandomLoss { congestion, veno };

enum class JoinMode {
  ack_clocked,  // seed 003 Algorithm 1: the joiner's share is released by ACKs of the others
  immediate,    // the joiner may send its share at once (the bursty baseline)
  paced,        // EFCM: the share is released by timer pacing
};

struct PacingConfig {
  // Pace every ack-eliciting packet of a domain at cwnd/srtt x 2 in slow
  // start and x 1.25 after (congestion/rate_pacer.h). Off (the default, see
  // docs/architecture.md for the papers' figures it moves): only careful
  // resume and paced joins are paced (below). Either way a law that gives
  // its own rate is paced at it, and max_rate_bps caps the rate.
  bool enabled = false;
  std::uint32_t max_burst_packets = 2;  // EFCM: at most 2 segments back to back
  double alpha_min = 1.0;               // spacing alpha*SRTT/CWND, alpha grows
  double alpha_max = 2.0;               //   from 1 to 2 as SRTT grows
};

struct ResumeConfig {
  bool enabled = true;
  bool mark_low_priority = true;  // DSCP LE (RFC 8622) on unvalidated packets
  // draft-ietf-tsvwg-careful-resume: jump only after the first RTT sample of
  // the busy period confirms the saved RTT (reconnaissance). false is TCP
  // fast start and E-TCP as published: jump at once, on the saved RTT (the
  // papers' experiments run this way). It costs one round trip at the
  // initial window, so at IW 10 it gains little on paths whose BDP slow
  // start reaches in a round trip or two.
  bool rtt_check_first = true;
  // A window idle longer than this is not resumed at all (restart from the
  // initial window), inside a live ensemble as across ensembles (where the
  // temporal cache's lifetime says the same).
  Duration max_idle = ms(10 * 60 * 1000);
};

// Smaller bulk packets while a call runs on a slow path (issue 21;
// congestion/realtime_packets.h): a call's datagram that arrives just after
// a bulk packet started waits for it at the bottleneck, 12 ms for 1,500 bytes
// at 1 Mbit/s, however well the gateway orders its own queue.
struct RealtimePacketsConfig {
  // What one bulk datagram may take on the wire at the path's rate while a
  // realtime member sent within `hold`; 0: off.
  Duration serialisation_budget = us(4000);
  // Never smaller than this (UDP payload): IPv4's minimum reassembly size;
  // each packet's ~70 bytes of headers cost 12 % of it.
  ByteCount floor_bytes = 576;
  // Full size again this long after the last realtime packet: a codec's
  // silence (Opus DTX: a packet per 400 ms) is not the end of the call.
  Duration hold = ms(2000);
  // How much earlier than its cadence a realtime packet may come (the
  // call's jitter on the LAN and in the gateway's turn): a packet may take
  // the budget plus the time until the next is due, less this.
  Duration cadence_margin = ms(2);
};

struct EnsembleConfig {
  CouplingMode coupling = CouplingMode::single;
  WindowLawKind law = WindowLawKind::newreno;
  SlowStart slow_start = SlowStart::standard;  // every domain (`none`: each member)
  // RFC 9002 7.3.2 / RFC 6675 5: on entering recovery one packet may be sent
  // at once whatever the reduced window says, so the first retransmission is
  // not held until the flight drains below the new cwnd.
  bool send_one_on_recovery = false;
  Recovery recovery = Recovery::gate;  // every domain (`none`: each member)
  RandomLoss random_loss = RandomLoss::veno;  // every domain (`none`: each member)
  // A delay-based bound on every domain's flight (congestion/queue_bound.h):
  // at most about one min RTT of standing queue where nothing is lost. Off
  // until the bench shows it gains (issue 22); `ensemble.queue_bound: true`
  // in the gateway's config, the tests set it themselves.
  bool queue_bound = false;
  // The model law's window also covers the ACK path's delay, measured in
  // its DOWN phases (congestion/model_law_ack_path.cc; issue 20's
  // asymmetric line). `ensemble.ack_path_window` in the gateway's config.
  bool ack_path_window = false;
  JoinMode join = JoinMode::ack_clocked;
  ByteCount max_datagram_bytes = 1200;        // window arithmetic unit ("MSS")
  std::uint32_t initial_window_packets = 10;  // RFC 6928
  std::uint32_t min_window_packets = 2;
  // Configured WAN rate for what this side sends (bits/s of whole datagrams); 0 = none.
  std::uint64_t max_rate_bps = 0;
  Duration initial_rtt = ms(333);  // RFC 9002 6.2.2, before any sample
  Duration min_rto = ms(200);      // Linux's floor; RFC 6298 says 1 s
  Duration max_rto = ms(60'000);
  // Tail loss probes (RFC 9002 6.2, Linux TLP): when no ack came for a PTO,
  // srtt + max(4 rttvar, 1 ms) + max_ack_delay (doubling per probe), one
  // packet goes beyond the window (new data, else the newest unacknowledged
  // data again) and nothing is declared lost. Its ACK lets the ordinary
  // thresholds find a tail loss: one window reduction instead of an RTO's
  // collapse to one packet and resending everything in flight. The RTO
  // (RFC 6298) fires only after this many probes went unanswered; 0 is
  // RFC 6298 alone, the papers' TCP.
  std::uint32_t tail_probes = 2;
  Duration max_ack_delay = ms(25);  // the peer's (the tunnel sets it)
  std::uint32_t packet_threshold = 3;  // RFC 9002 kPacketThreshold
  double time_threshold = 9.0 / 8.0;   // RFC 9002 kTimeThreshold
  SchedulerConfig scheduler;
  PacingConfig pacing;
  ResumeConfig resume;
  RealtimePacketsConfig realtime_packets;
};

}  // namespace egw::congestion
