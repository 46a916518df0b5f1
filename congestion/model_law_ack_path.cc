// The model law's window over the ACK path's delay (model_law.h, "The ACK
// path"): the RTT above min_rtt that our own DOWN does not drain is not our
// queue; the window covers it, or the law is window-limited below its rate.
#include <algorithm>

#include "congestion/delivery_rate.h"
#include "congestion/model_law.h"

namespace egw::congestion {

// DOWN paces at 0.9 bw: after its first round our own queue is gone (the
// flight is what bw x RTT needs). What the RTT still shows above min_rtt is
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

// At DOWN's end. A DOWN that ended in its first round saw the flight fall
// to the BDP: the ACK path adds < 11 % of min_rtt (0.9 x (1 + 0.11) = 1),
// which the queue target covers. Bounded by one min_rtt: the standing
// threshold above which the law takes the excess for a competitor's queue
// (BBR's 2 BDP window covers the same; its extra_acked is capped too).
void ModelLaw::end_ack_path_sample() {
  Duration delay = ack_path_delay_;
  const bool late = down_rtt_samples_ > 0;
  const Duration sum = late ? down_rtt_sum_ : first_rtt_sum_;
  const std::uint64_t n = late ? down_rtt_samples_ : first_rtt_samples_;
  if (n > 0 && min_rtt_) {
    const Duration mean = sum / static_cast<std::int64_t>(n);
    delay = std::clamp(mean - *min_rtt_ - own_target_delay(), Duration{0}, *min_rtt_);
    if (!late) delay = std::min(delay, std::max(ack_path_delay_, delay / 2));
    if (delay <= std::max<Duration>(ms(1), *min_rtt_ / 4)) delay = Duration{0};
  }
  first_rtt_sum_ = Duration{0};
  first_rtt_samples_ = 0;
  ack_path_delay_ = delay;
  down_rtt_sum_ = Duration{0};
  down_rtt_samples_ = 0;
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
