// A delay-based bound on a domain's flight, whatever its law (issue 22): the
// standing queue a window law builds where nothing drops, which only RTT sees.
//
// The case it is for: the bottleneck is the peer gateway itself (its CPU),
// so datagrams wait in the peer's UDP receive buffer (8 MB: nothing is lost
// there) and every stream's packets, a request's beside a bulk transfer's,
// wait behind the whole flight. Measured on bench/gateway/run's veths: 5.6 MB
// queued in the hub's socket, smoothed RTT 37 ms against a 0.25 ms minimum,
// and a request beside the bulk transfer waited 1.8 ms (shadowsocks: 0.14).
//
// Rule (Vegas/BBR's queue target in delay terms): once per round trip (a
// round ends when a packet sent after it began is acked), the round's
// smallest RTT sample r is compared with
//   target = min_rtt + max(kQueueMinRtts x min_rtt, floor)
// (BBR's 2 BDP of flight: at most one min_rtt of queue, never less than the
// floor, at first kQueueFloor).
//   r > target   the bound becomes the round's largest flight x target / r
//                (the flight that gives the target at the rate just seen),
//                at least kMinPackets. It engages only when Vegas' backlog,
//                flight x (r - min_rtt) / r, is a few packets (a request's
//                delayed ACKs do not engage it). The next round still
//                carries packets sent before the cut: the one after it
//                judges the cut.
//   r <= target  a bound grows by the room the RTT shows (1/8 per round at
//                the target, doubling with no queue); it is lifted once it
//                reaches the law's window, or when the flight stays under
//                half of it (the transfer ended: a later one must not
//                inherit it).
// The bound only ever lowers the law's window (gate: min(cwnd, bound)); a
// flight held under cwnd is not cwnd-limited, so the law stops growing.
//
// A delay no cut removes: when a judged cut left r above target and the
// rate acked in a round fell by more than a quarter, the cut shrank
// our throughput, not a queue of ours (cutting our own queue keeps the
// rate: the RTT falls with the flight; a cut too small keeps it too, and is
// followed by another).
// That delay is the floor of this path under load (a loaded gateway's own
// loop and batches on the bench's veths, where the idle tunnel RTT is
// 0.05 ms) or someone else's standing queue (a buffer-filling flow at a
// WAN bottleneck, the Vegas problem): the floor becomes r - min_rtt, the
// cut is undone, and the target follows it instead of starving the flight.
// The floor is learnt again after kFloorLifetime.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include "common/units.h"

namespace egw::congestion {

class QueueBound {
 public:
  static constexpr double kQueueMinRtts = 1.0;
  static constexpr Duration kQueueFloor = us(100);
  static constexpr std::uint32_t kMinPackets = 4;
  static constexpr double kGrowth = 1.0 / 8;
  static constexpr double kKeptRate = 0.75;
  static constexpr Duration kFloorLifetime = ms(10'000);

  // Every ack of new data: `rtt_sample` when it gave one (the raw sample of
  // the largest acked packet, sent at `largest_sent`), `acked` its bytes,
  // `prior_flight` the flight before it, `cwnd` the law's window.
  void on_ack(std::optional<Duration> rtt_sample, Instant largest_sent, ByteCount acked,
              Duration min_rtt, ByteCount prior_flight, ByteCount cwnd, ByteCount mss, Instant now);

  // The flight allowed beside the law's window; nullopt: no bound.
  std::optional<ByteCount> limit() const { return bound_; }
  // The window a gate uses.
  ByteCount apply(ByteCount cwnd) const { return bound_ ? std::min(cwnd, *bound_) : cwnd; }
  // The sending restarts from scratch (idle restart, RTO): the old flight
  // says nothing about the new one.
  void reset() { bound_.reset(); }

  // Diagnostics (tests, metrics).
  std::uint64_t cuts() const { return cuts_; }
  std::uint64_t floors_raised() const { return floors_raised_; }
  Duration floor() const { return floor_; }
  Duration target(Duration min_rtt) const;

 private:
  void end_round(Duration min_rtt, ByteCount cwnd, ByteCount mss, Instant now);
  double round_rate(Instant now) const;
  void cut(Duration target_rtt, ByteCount mss, Instant now);
  bool judge_cut(Duration min_rtt, Instant now);

  std::optional<ByteCount> bound_;
  Instant round_start_{};
  bool round_started_ = false;
  Duration round_min_{};
  ByteCount round_max_flight_ = 0;
  std::uint32_t rounds_since_cut_ = 2;  // a cut is judged by the round after next
  bool judging_ = false;  // a cut awaits its judgement
  ByteCount bound_before_cut_ = 0;
  double rate_at_cut_ = 0;  // bytes/s acked in the round that cut
  ByteCount round_acked_ = 0;
  Duration floor_ = kQueueFloor;
  Instant floor_until_{};
  std::uint64_t cuts_ = 0;
  std::uint64_t floors_raised_ = 0;
};

}  // namespace egw::congestion
