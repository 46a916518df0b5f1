// Resuming from a cached PathState, or restarting after idle inside a live
// ensemble: careful resume (draft-ietf-tsvwg-careful-resume) with TCP fast
// start's pacing and low drop priority (Padmanabhan & Katz).
//
// A cached window is a claim to be checked, not a fact:
//
//   start(saved) -- saved.cwnd / 2 <= initial window, or no RTT --> [inactive]
//        |         (rtt_check_first false: straight to UNVALIDATED, paced
//        v          over the saved srtt, from the initial window)
//   RECONNAISSANCE: the ensemble sends as a fresh flow (initial window,
//        |          normal slow start) until the first RTT sample of this
//        |          busy period arrives; then the RTT check (draft 4.3):
//        |   sample < saved_rtt / 2 or > 10 x saved_rtt: the path changed,
//        |   no jump ([inactive]); jump <= cwnd already: nothing to gain
//        v
//   UNVALIDATED: cwnd = jump = max(cwnd, saved.cwnd / 2), ssthresh infinite;
//    - the clocked window starts at the cwnd reconnaissance reached and
//      grows by every acked byte, as slow start would: packets within it
//      leave on the ACK clock, unmarked, so the resume is never slower than
//      slow start would have been;
//    - packets beyond it (the extra `jump - cwnd before` bytes at most) are
//      the unvalidated part: marked low priority (DSCP LE) and paced at one
//      jump window per RTT (the sample);
//    - acks do not grow cwnd beyond the jump; no loss round is charged for
//      losses in this phase.
//        |                         |
//        | every unvalidated       | any loss, or an RTO: the cached state
//        | packet acked, no loss   | was wrong, not the path congested (TCP
//        v                         v fast start 3.4.4, "without penalty")
//   VALIDATED:                   FALLBACK:
//   cwnd = jump,                 cwnd = the cwnd reconnaissance proved,
//   ssthresh = saved ssthresh    ssthresh infinite. The other lost packets
//   (ran out of data first:      of the phase belong to the same
//   cwnd = the clocked window).  (uncharged) round.
//
// A loss in reconnaissance ends the resume (normal recovery follows).
// This class is the phase bookkeeping only; the Ensemble applies its
// decisions to the window law and the RTT estimator.
#pragma once

#include <cstdint>
#include <optional>

#include "common/units.h"
#include "congestion/path_state.h"

namespace egw::congestion {

class CarefulResume {
 public:
  enum class Phase { inactive, reconnaissance, unvalidated, validated, fallback };

  // `initial_window_bytes` is what a fresh ensemble would start with. With
  // `rtt_check_first` false there is no reconnaissance: the jump is taken at
  // once from the initial window, paced over the saved srtt (TCP fast start).
  CarefulResume(const PathState& saved, ByteCount initial_window_bytes,
                bool rtt_check_first = true);

  Phase phase() const { return phase_; }
  bool reconnaissance() const { return phase_ == Phase::reconnaissance; }
  bool unvalidated() const { return phase_ == Phase::unvalidated; }
  // Is a packet of `bytes` sent with `flight_bytes` already in flight part of
  // the unvalidated (paced, marked) extra, rather than of the clocked window?
  bool is_extra(ByteCount flight_bytes, ByteCount bytes) const {
    return unvalidated() && budget_bytes_ > 0 && flight_bytes + bytes > clocked_window_bytes_;
  }
  ByteCount clocked_window_bytes() const { return clocked_window_bytes_; }
  ByteCount jump_bytes() const { return jump_bytes_; }
  // Over how long the unvalidated part is paced: the RTT sample that passed
  // the check.
  Duration pacing_period() const { return pacing_period_; }

  // New window to apply.
  struct Outcome {
    ByteCount cwnd_bytes = 0;
    ByteCount ssthresh_bytes = 0;
  };
  // Reconnaissance: the first RTT sample. Returns the jump when the check
  // passes and the jump is above `cwnd_bytes`; otherwise the resume ends.
  std::optional<Outcome> on_rtt_sample(Duration sample, ByteCount cwnd_bytes);

  // Every packet sent while unvalidated; `extra` as is_extra() said.
  void on_sent(PacketNumber number, ByteCount bytes, bool extra);
  // Count acknowledged bytes. Then, with the smallest packet number still
  // outstanding (if any), decide whether the window is validated.
  std::optional<Outcome> on_acked(ByteCount acked_bytes,
                                  std::optional<PacketNumber> smallest_outstanding);
  // A loss or an RTO. Unvalidated: fall back (returns the fallback window).
  // Reconnaissance: the resume ends, nothing to undo (nullopt).
  std::optional<Outcome> on_lost();
  // The datagram size changed (RFC 9002 7.2): a fallback restarts from the
  // new initial window.
  void set_initial_window_bytes(ByteCount bytes) { initial_window_bytes_ = bytes; }

 private:
  Phase phase_ = Phase::inactive;
  ByteCount initial_window_bytes_;
  ByteCount saved_cwnd_bytes_;
  ByteCount saved_ssthresh_bytes_;
  Duration saved_rtt_{0};
  ByteCount jump_bytes_ = 0;
  ByteCount cwnd_before_jump_ = 0;
  Duration pacing_period_{0};
  ByteCount budget_bytes_ = 0;  // extra (unvalidated) bytes not sent yet
  ByteCount clocked_window_bytes_ = 0;
  std::optional<PacketNumber> last_unvalidated_;
};

}  // namespace egw::congestion
