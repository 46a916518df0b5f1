// A delay-based bound on a loss-based domain's flight (issue 22): the
// standing queue a window law that waits for loss builds where nothing drops.
//
// The case it is for: the bottleneck is the peer gateway itself (its CPU),
// so datagrams wait in the peer's UDP receive buffer (8 MB: nothing is lost
// there) and every stream's packets, a request's beside a bulk transfer's,
// wait behind the whole flight. Measured on bench/gateway/run's veths: 5.6 MB
// queued in the hub's socket, smoothed RTT 37 ms against a 0.25 ms minimum.
// Only the RTT sees that queue.
//
// Rule (Vegas/BBR's queue target in delay terms): once per round trip (a
// round ends when a packet sent after it began is acked), the round's
// smallest RTT sample r is compared with
//   target = min_rtt + max(kQueueMinRtts x min_rtt, kQueueFloor)
// (BBR's 2 BDP of flight: at most one min_rtt of queue, never less than the
// floor, which covers the gateway's own batching on sub-ms paths).
//   r > target   the bound becomes the round's largest flight x target / r
//                (the flight that gives the target at the rate just seen),
//                at least kMinPackets; the next round still carries packets
//                sent before the cut, so the one after it judges the cut.
//   r <= target  a bound grows by 1/8 per round; once it reaches the law's
//                window it is lifted.
// The bound only ever lowers the law's window (gate: min(cwnd, bound)); a
// flight held under cwnd is not cwnd-limited, so the law stops growing.
//
// Someone else's queue (a buffer-filling TCP flow at a WAN bottleneck, the
// Vegas problem): cutting our flight does not bring r down. After
// kForeignRounds judged cuts in a row that left r above target the queue is
// not ours: the bound is lifted and rests for kRestDuration, so the law
// competes as it did without it.
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
  static constexpr std::uint32_t kForeignRounds = 3;
  static constexpr Duration kRestDuration = ms(10'000);

  // Every ack with an RTT sample: `latest` the raw sample, `largest_sent`
  // the send time of the packet it measured, `prior_flight` the flight
  // before the ack, `cwnd` the law's window.
  void on_rtt_sample(Duration latest, Instant largest_sent, Duration min_rtt,
                     ByteCount prior_flight, ByteCount cwnd, ByteCount mss, Instant now);

  // The flight allowed beside the law's window; nullopt: no bound.
  std::optional<ByteCount> limit() const { return bound_; }
  // The window a gate uses.
  ByteCount apply(ByteCount cwnd) const { return bound_ ? std::min(cwnd, *bound_) : cwnd; }
  // The sending restarts from scratch (idle restart, RTO): the old flight
  // says nothing about the new one.
  void reset() {
    bound_.reset();
    judged_cuts_ = 0;
  }

  // Diagnostics (tests, metrics).
  std::uint64_t cuts() const { return cuts_; }
  std::uint64_t foreign_queues() const { return foreign_; }
  static Duration target(Duration min_rtt);

 private:
  void end_round(Duration min_rtt, ByteCount cwnd, ByteCount mss, Instant now);
  void cut(Duration target_rtt, ByteCount mss);

  std::optional<ByteCount> bound_;
  Instant round_start_{};
  bool round_started_ = false;
  Duration round_min_{};
  ByteCount round_max_flight_ = 0;
  std::uint32_t rounds_since_cut_ = 2;  // a cut is judged by the round after next
  std::uint32_t judged_cuts_ = 0;       // judged cuts in a row that left r above target
  std::optional<Instant> rest_until_;
  std::uint64_t cuts_ = 0;
  std::uint64_t foreign_ = 0;
};

}  // namespace egw::congestion
