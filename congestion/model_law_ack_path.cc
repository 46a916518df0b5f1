// The model law's window over the ACK path's delay (model_law.h, "The ACK
// path"): the RTT above min_rtt that our own DOWN does not drain is not our
// queue; the window covers it, or the law is window-limited below its rate.
#include <algorithm>

#include "congestion/delivery_rate.h"
#include "congestion/model_law.h"

namespace egw::congestion {

// DOWN paces at 0.9 bw, its window BDP + target (no allowance): after its
// first round our own queue is gone. What the RTT still shows above min_rtt is
// somebody else's queue, most often the reverse path's: on the asymmetric
// line (4 / 1 Mbit/s) the upload's queue of 40-50 ms on the uplink, which
// every ACK of the download crosses. Averaged, not the minimum: the window
// must cover the ACKs that wait, not the one that found the queue empty.
void ModelLaw::sample_ack_path(const RateSample& rs) {
  if (!params_.ack_path_window || state_ != State::probe_bw || phase_ != Phase::down || competitive_) return;
  if (!rs.rtt) return;
  if (round_ == phase_start_round_) {
    first_rtt_sum_ += *rs.rtt;
    ++first_rtt_samples_;
    return;
  }
  down_rtt_sum_ += *rs.rtt;
  ++down_rtt_samples_;
}

// DOWN's first round acks packets sent before it, with whatever queue of
// ours CRUISE or UP left; only the rounds after it are clean. If the first
// round shows an excess, DOWN waits for one more round to judge it.
Duration ModelLaw::first_round_excess() const {
  if (first_rtt_samples_ == 0 || !min_rtt_) return Duration{0};
  const Duration mean = first_rtt_sum_ / static_cast<std::int64_t>(first_rtt_samples_);
  return std::max(mean - *min_rtt_ - own_target_delay(), Duration{0});
}

bool ModelLaw::down_measures_ack_path() const {
  return !competitive_ && round_ == phase_start_round_ && first_round_excess() > ack_path_threshold();
}

// Below a quarter of min_rtt the ACK path is left to the queue target and
// UP's gain, as before: a symmetric line's other direction (its own few
// milliseconds of target), a busy host's jitter.
Duration ModelLaw::ack_path_threshold() const {
  return std::max<Duration>(ms(1), min_rtt_.value_or(Duration{0}) / 4);
}

// At DOWN's end. A DOWN that ended in its first round saw no excess worth a
// round (down_measures_ack_path). Bounded by one min_rtt: the standing
// threshold above which the law takes the excess for a competitor's queue
// (BBR's 2 BDP window covers the same; its extra_acked is capped too).
void ModelLaw::end_ack_path_sample() {
  Duration delay{0};
  if (down_rtt_samples_ > 0 && min_rtt_) {
    const Duration mean = down_rtt_sum_ / static_cast<std::int64_t>(down_rtt_samples_);
    delay = std::clamp(mean - *min_rtt_ - own_target_delay(), Duration{0}, *min_rtt_);
    if (delay <= ack_path_threshold()) delay = Duration{0};
  }
  ack_path_delay_ = delay;
  down_rtt_sum_ = Duration{0};
  down_rtt_samples_ = 0;
  first_rtt_sum_ = Duration{0};
  first_rtt_samples_ = 0;
}

// A rate sample spans one packet's round trip. Over an ACK path that
// queues, acks that waited come in a burst, and a sample whose interval is
// shorter than the round trip the ACK path gives (min_rtt + its delay)
// reads the burst, up to the sending rate: in UP 1.25 bw, which the probe
// then takes for room (the simulator's 4 / 1 line: bw 5 Mbit/s on a 4
// Mbit/s downlink, and a queue of 90 ms that the wider window let in).
bool ModelLaw::ack_compressed(const RateSample& rs) const {
  if (ack_path_delay_ <= Duration{0} || !min_rtt_) return false;
  return rs.interval < *min_rtt_ + ack_path_delay_;
}

ByteCount ModelLaw::window_bdp_bytes() const {
  const double bw = bw_bytes_per_s();
  if (bw <= 0 || !min_rtt_) return bdp_bytes();
  return bdp_bytes() + static_cast<ByteCount>(bw * to_seconds(ack_path_delay_));
}

}  // namespace egw::congestion
