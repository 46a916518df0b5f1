#include "congestion/queue_bound.h"

namespace egw::congestion {

Duration QueueBound::target(Duration min_rtt) const {
  const auto by_rtt = std::chrono::duration_cast<Duration>(min_rtt * kQueueMinRtts);
  return min_rtt + std::max(by_rtt, floor_);
}

void QueueBound::on_ack(std::optional<Duration> rtt_sample, Instant largest_sent, ByteCount acked,
                        Duration min_rtt, ByteCount prior_flight, ByteCount cwnd, ByteCount mss,
                        Instant now) {
  if (!round_started_) {  // the first ack opens the first round
    round_started_ = true;
    round_start_ = now;
    round_min_ = Duration::max();
  }
  round_acked_ += acked;
  round_max_flight_ = std::max(round_max_flight_, prior_flight);
  if (!rtt_sample) return;
  round_min_ = std::min(round_min_, *rtt_sample);
  if (largest_sent < round_start_) return;  // sent before this round began
  end_round(min_rtt, cwnd, mss, now);
  round_start_ = now;
  round_min_ = Duration::max();
  round_max_flight_ = 0;
  round_acked_ = 0;
}

double QueueBound::round_rate(Instant now) const {
  const double seconds = to_seconds(now - round_start_);
  return seconds > 0 ? static_cast<double>(round_acked_) / seconds : 0;
}

void QueueBound::end_round(Duration min_rtt, ByteCount cwnd, ByteCount mss, Instant now) {
  if (rounds_since_cut_ < 2) ++rounds_since_cut_;
  if (min_rtt <= Duration::zero() || round_min_ == Duration::max()) return;
  if (floor_ != kQueueFloor && now >= floor_until_) floor_ = kQueueFloor;  // learn it again
  // A bound the flight no longer comes near is stale (the transfer ended):
  // one starting later must not inherit it.
  if (bound_ && rounds_since_cut_ >= 2 && 2 * round_max_flight_ < *bound_) {
    bound_.reset();
    return;
  }
  const Duration target_rtt = target(min_rtt);
  if (round_min_ > target_rtt) {
    if (!bound_) {
      // Vegas' backlog: the bytes the flight keeps queued if the queue is
      // ours. Under a few packets it is not (delayed ACKs of a request).
      const double queued = static_cast<double>(round_max_flight_) *
                            to_seconds(round_min_ - min_rtt) / to_seconds(round_min_);
      if (queued >= static_cast<double>(kMinPackets * mss)) cut(target_rtt, mss, now);
      return;
    }
    if (!judging_) {
      cut(target_rtt, mss, now);
      return;
    }
    if (rounds_since_cut_ < 2) return;  // its packets left before the last cut
    if (judge_cut(min_rtt, now)) cut(target_rtt, mss, now);
    return;
  }
  judging_ = false;  // at the target: whatever cut came last worked
  if (!bound_) return;
  // Room below the target: by 1/8 at it, doubling (slow start's pace) when
  // the round saw no queue at all.
  const double room = std::clamp(to_seconds(target_rtt - round_min_) / to_seconds(target_rtt - min_rtt),
                                 kGrowth, 1.0);
  *bound_ += std::max(mss, static_cast<ByteCount>(static_cast<double>(*bound_) * room));
  if (*bound_ >= cwnd) bound_.reset();  // the law's window binds again
}

// Did the last cut keep the rate (our queue shrank with the flight)? If not,
// the delay is not a queue of ours: it becomes the floor (the target then
// includes it), and the cut is undone. Returns whether to cut again.
bool QueueBound::judge_cut(Duration min_rtt, Instant now) {
  if (round_rate(now) >= kKeptRate * rate_at_cut_) return true;
  floor_ = round_min_ - min_rtt;
  floor_until_ = now + kFloorLifetime;
  ++floors_raised_;
  bound_ = std::max(*bound_, bound_before_cut_);
  judging_ = false;
  return false;
}

void QueueBound::cut(Duration target_rtt, ByteCount mss, Instant now) {
  bound_before_cut_ = bound_ ? *bound_ : round_max_flight_;
  rate_at_cut_ = round_rate(now);
  judging_ = true;
  const ByteCount base = bound_ ? std::min(*bound_, round_max_flight_) : round_max_flight_;
  const double scale = to_seconds(target_rtt) / to_seconds(round_min_);
  const auto scaled = static_cast<ByteCount>(static_cast<double>(base) * scale);
  bound_ = std::max<ByteCount>(scaled, kMinPackets * mss);
  rounds_since_cut_ = 0;
  ++cuts_;
}

}  // namespace egw::congestion
