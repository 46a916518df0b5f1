#include "congestion/queue_bound.h"

namespace egw::congestion {

Duration QueueBound::target(Duration min_rtt) {
  const auto by_rtt = std::chrono::duration_cast<Duration>(min_rtt * kQueueMinRtts);
  return min_rtt + std::max(by_rtt, kQueueFloor);
}

void QueueBound::on_rtt_sample(Duration latest, Instant largest_sent, Duration min_rtt,
                               ByteCount prior_flight, ByteCount cwnd, ByteCount mss,
                               Instant now) {
  if (!round_started_) {  // the first sample opens the first round
    round_started_ = true;
    round_start_ = now;
    round_min_ = latest;
    round_max_flight_ = prior_flight;
    return;
  }
  round_min_ = std::min(round_min_, latest);
  round_max_flight_ = std::max(round_max_flight_, prior_flight);
  if (largest_sent < round_start_) return;  // sent before this round began
  end_round(min_rtt, cwnd, mss, now);
  round_start_ = now;
  round_min_ = Duration::max();
  round_max_flight_ = 0;
}

void QueueBound::end_round(Duration min_rtt, ByteCount cwnd, ByteCount mss, Instant now) {
  if (rounds_since_cut_ < 2) ++rounds_since_cut_;
  if (min_rtt <= Duration::zero() || round_min_ == Duration::max()) return;
  if (rest_until_) {
    if (now < *rest_until_) return;
    rest_until_.reset();
  }
  // A bound the flight no longer comes near is stale (the transfer ended):
  // one starting later must not inherit it.
  if (bound_ && rounds_since_cut_ >= 2 && 2 * round_max_flight_ < *bound_) {
    bound_.reset();
    judged_cuts_ = 0;
    return;
  }
  const Duration target_rtt = target(min_rtt);
  if (round_min_ > target_rtt) {
    if (!bound_) {
      // Vegas' backlog: the bytes the flight keeps queued if the queue is
      // ours. Under a few packets it is not (delayed ACKs of a request).
      const double queued = static_cast<double>(round_max_flight_) *
                            to_seconds(round_min_ - min_rtt) / to_seconds(round_min_);
      if (queued >= static_cast<double>(kMinPackets * mss)) cut(target_rtt, mss);
      return;
    }
    if (rounds_since_cut_ < 2) return;  // its packets left before the last cut
    if (++judged_cuts_ >= kForeignRounds) {  // cutting does not drain it: not our queue
      bound_.reset();
      judged_cuts_ = 0;
      rest_until_ = now + kRestDuration;
      ++foreign_;
      return;
    }
    cut(target_rtt, mss);
    return;
  }
  judged_cuts_ = 0;
  if (!bound_) return;
  // Room below the target: by 1/8 at it, doubling (slow start's pace) when
  // the round saw no queue at all.
  const double room = std::clamp(to_seconds(target_rtt - round_min_) / to_seconds(target_rtt - min_rtt),
                                 kGrowth, 1.0);
  *bound_ += std::max(mss, static_cast<ByteCount>(static_cast<double>(*bound_) * room));
  if (*bound_ >= cwnd) bound_.reset();  // the law's window binds again
}

void QueueBound::cut(Duration target_rtt, ByteCount mss) {
  const ByteCount base = bound_ ? std::min(*bound_, round_max_flight_) : round_max_flight_;
  const double scale = to_seconds(target_rtt) / to_seconds(round_min_);
  const auto scaled = static_cast<ByteCount>(static_cast<double>(base) * scale);
  bound_ = std::max<ByteCount>(scaled, kMinPackets * mss);
  rounds_since_cut_ = 0;
  ++cuts_;
}

}  // namespace egw::congestion
