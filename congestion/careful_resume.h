// Resuming from a cached PathState: TCP fast start (Padmanabhan & Katz) as
// refined by careful resume (draft-ietf-tsvwg-careful-resume).
//
// A new ensemble on a path with a cached state skips part of slow start, but
// treats the cached window as a claim to be checked, not as a fact:
//
//            start(saved)                 saved.cwnd / 2 <= initial window
//   ------------------------> [inactive] <-------------------------------+
//                |                                                       |
//                | jump = max(initial window, saved.cwnd / 2)            |
//                v                                                       |
//   +--------------------------------------------------------------+     |
//   | UNVALIDATED: cwnd = jump, ssthresh = infinite (a fresh flow's) |  ---+
//   |  - the first `jump` bytes sent are the unvalidated window:     |
//   |    low_priority() (DSCP LE) and paced over one SRTT;           |
//   |  - acks do not grow cwnd (the capacity is not known yet), they |
//   |    are only counted (acked_bytes);                             |
//   |  - no loss round is charged for losses in this phase.          |
//   +--------------------------------------------------------------+
//        |                         |
//        | every unvalidated       | any loss, or an RTO (the Ensemble calls
//        | packet acked, no loss   | on_lost: TCP fast start 3.4.4 "slow
//        |                         | start without penalty"; the timer ran
//        v                         v on the cached, possibly stale srtt)
//   VALIDATED:                  FALLBACK (no penalty):
//   cwnd = max(jump, acked),    cwnd = initial window,
//   ssthresh = saved ssthresh   ssthresh unchanged (still
//   (if the sender ran out of   infinite), RTT estimates
//   data first: everything      kept; the other packets of
//   sent acked and nothing in   the jump lost with it do
//   flight validates cwnd =     not decrease again.
//   max(initial window, acked)).
//   Both end the phase: normal slow start / congestion avoidance.
//
// The RTT estimator is seeded from the cache by the Ensemble (srtt, rttvar,
// min_rtt) whether or not a jump happens. This class is the phase bookkeeping
// only; the Ensemble applies its decisions to the window law.
#pragma once

#include <cstdint>
#include <optional>

#include "common/units.h"
#include "congestion/path_state.h"

namespace egw::congestion {

class CarefulResume {
 public:
  enum class Phase { inactive, unvalidated, validated, fallback };

  // `initial_window_bytes` is what a fresh ensemble would start with.
  CarefulResume(const PathState& saved, ByteCount initial_window_bytes);

  Phase phase() const { return phase_; }
  bool active() const { return phase_ == Phase::unvalidated; }
  // The next packet sent still belongs to the unvalidated window.
  bool sending_unvalidated() const { return active() && budget_bytes_ > 0; }
  ByteCount jump_bytes() const { return jump_bytes_; }
  // ssthresh to adopt once validated (the saved one; infinite if none).
  ByteCount saved_ssthresh_bytes() const { return saved_ssthresh_bytes_; }
  Duration pacing_period() const { return pacing_period_; }

  void on_sent(PacketNumber number, ByteCount bytes);

  // New window to apply when the phase ends.
  struct Outcome {
    ByteCount cwnd_bytes = 0;
    ByteCount ssthresh_bytes = 0;
  };
  // Count acknowledged bytes. Then, with the smallest packet number still
  // outstanding (if any), decide whether the window is validated.
  std::optional<Outcome> on_acked(ByteCount acked_bytes,
                                  std::optional<PacketNumber> smallest_outstanding);
  // A loss or an RTO while active: fall back (returns the fallback window).
  std::optional<Outcome> on_lost();

 private:
  Phase phase_ = Phase::inactive;
  ByteCount initial_window_bytes_;
  ByteCount jump_bytes_ = 0;
  ByteCount saved_ssthresh_bytes_;
  Duration pacing_period_{0};
  ByteCount budget_bytes_ = 0;  // unvalidated bytes not sent yet
  std::optional<PacketNumber> last_unvalidated_;
  ByteCount acked_bytes_ = 0;
};

}  // namespace egw::congestion
