#include "congestion/hystart.h"

#include <algorithm>

namespace egw::congestion {

HyStart::HyStart(bool paced) : limit_segments_(paced ? 0 : kUnpacedLimitSegments) {}

Duration HyStart::rtt_thresh() const {
  if (!last_round_min_rtt_) return Duration{0};
  return std::clamp(*last_round_min_rtt_ / kMinRttDivisor, kMinRttThresh, kMaxRttThresh);
}

void HyStart::on_packet_sent(PacketNumber number) {
  if (!window_end_) window_end_ = number;  // 4.2: windowEnd = SND.NXT at the round's start
}

void HyStart::start_round() {
  last_round_min_rtt_ = current_round_min_rtt_;
  current_round_min_rtt_.reset();
  rtt_sample_count_ = 0;
  window_end_.reset();
}

ByteCount HyStart::on_ack(ByteCount growable_bytes, PacketNumber largest_acked,
                          std::optional<Duration> rtt_sample, ByteCount mss_bytes) {
  if (phase_ == Phase::done) return growable_bytes;
  // Growth first, in the phase this ACK arrived in.
  ByteCount grow = growable_bytes;
  if (limit_segments_ > 0) grow = std::min(grow, limit_segments_ * mss_bytes);
  if (phase_ == Phase::css) grow /= kCssGrowthDivisor;

  // The ACK of windowEnd, the first packet sent in this round, ends it; its
  // RTT sample is the first of the next round (as in Linux's HyStart).
  if (window_end_ && largest_acked >= *window_end_) {
    ++rounds_ended_;
    if (phase_ == Phase::css && ++css_rounds_ >= kCssRounds) {
      phase_ = Phase::done;  // the caller sets ssthresh = cwnd
      return grow;
    }
    start_round();
  }
  if (rtt_sample) {
    current_round_min_rtt_ =
        current_round_min_rtt_ ? std::min(*current_round_min_rtt_, *rtt_sample) : *rtt_sample;
    ++rtt_sample_count_;
  }
  if (rtt_sample_count_ >= kRttSamples && current_round_min_rtt_) {
    if (phase_ == Phase::slow_start && last_round_min_rtt_ &&
        *current_round_min_rtt_ >= *last_round_min_rtt_ + rtt_thresh()) {
      phase_ = Phase::css;  // the queue grew by RttThresh within one round
      css_baseline_min_rtt_ = current_round_min_rtt_;
      css_rounds_ = 0;
    } else if (phase_ == Phase::css && *current_round_min_rtt_ < *css_baseline_min_rtt_) {
      phase_ = Phase::slow_start;  // spurious exit: the RTT came back down
      css_baseline_min_rtt_.reset();
    }
  }
  return grow;
}

}  // namespace egw::congestion
