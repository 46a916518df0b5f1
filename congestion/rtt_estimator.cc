#include "congestion/rtt_estimator.h"

#include <algorithm>

namespace egw::congestion {

namespace {
// 2^16 * min_rto is far beyond any max_rto; stop doubling there so the shift
// cannot overflow.
constexpr std::uint32_t kMaxBackoffShift = 16;

Duration abs_diff(Duration a, Duration b) { return a > b ? a - b : b - a; }
}  // namespace

RttEstimator::RttEstimator(const RttConfig& config)
    : config_(config), srtt_(config.initial_rtt), rttvar_(config.initial_rtt / 2) {}

void RttEstimator::on_sample(Duration latest, Duration ack_delay) {
  if (latest <= Duration{0}) latest = us(1);  // same-instant ack in simulation
  if (ack_delay < Duration{0}) ack_delay = Duration{0};
  latest_ = latest;
  if (!has_sample_) {
    has_sample_ = true;
    min_rtt_ = latest;
    srtt_ = latest;
    rttvar_ = latest / 2;
    return;
  }
  min_rtt_ = (min_rtt_ == Duration{0}) ? latest : std::min(min_rtt_, latest);
  // RFC 9002 5.3: subtract the peer's ack delay unless that would claim an
  // RTT below the path's minimum.
  Duration adjusted = latest;
  if (latest >= min_rtt_ + ack_delay) adjusted = latest - ack_delay;
  rttvar_ = (3 * rttvar_ + abs_diff(srtt_, adjusted)) / 4;
  srtt_ = (7 * srtt_ + adjusted) / 8;
}

void RttEstimator::seed(Duration srtt, Duration rttvar, Duration min_rtt) {
  if (srtt <= Duration{0}) return;
  has_sample_ = true;
  srtt_ = srtt;
  rttvar_ = rttvar > Duration{0} ? rttvar : srtt / 2;
  min_rtt_ = (min_rtt > Duration{0} && min_rtt <= srtt) ? min_rtt : srtt;
  latest_ = srtt;
}

Duration RttEstimator::rto() const {
  Duration base = srtt_ + std::max(config_.granularity, 4 * rttvar_);
  base = std::min(std::max(base, config_.min_rto), config_.max_rto);
  const std::uint32_t shift = std::min(backoff_, kMaxBackoffShift);
  // base <= max_rto (<= ~days) so base << 16 fits easily in 64 bits of us.
  return std::min(base * (std::int64_t{1} << shift), config_.max_rto);
}

void RttEstimator::on_rto_expired() {
  if (backoff_ < kMaxBackoffShift) ++backoff_;
}

}  // namespace egw::congestion
