#include "congestion/careful_resume.h"

#include <algorithm>

#include "congestion/window_law.h"

namespace egw::congestion {

namespace {
// draft-ietf-tsvwg-careful-resume 4.3: the path is deemed to have changed
// when the RTT is below half or above ten times the saved one.
constexpr std::int64_t kRttCheckLowDivisor = 2;
constexpr std::int64_t kRttCheckHighFactor = 10;
}  // namespace

CarefulResume::CarefulResume(const PathState& saved, ByteCount initial_window_bytes,
                             bool rtt_check_first)
    : initial_window_bytes_(initial_window_bytes),
      saved_cwnd_bytes_(saved.cwnd_bytes),
      saved_ssthresh_bytes_(saved.ssthresh_bytes == 0 ? kInfiniteSsthresh : saved.ssthresh_bytes),
      saved_rtt_(saved.min_rtt > Duration{0} ? saved.min_rtt : saved.srtt) {
  // Without an RTT there is nothing to check nor to pace over: no jump.
  if (saved.cwnd_bytes / 2 <= initial_window_bytes || saved_rtt_ <= Duration{0}) return;
  phase_ = Phase::reconnaissance;
  if (!rtt_check_first) on_rtt_sample(saved.srtt, initial_window_bytes);  // no check: jump now
}

std::optional<CarefulResume::Outcome> CarefulResume::on_rtt_sample(Duration sample,
                                                                   ByteCount cwnd_bytes) {
  if (!reconnaissance()) return std::nullopt;
  const bool path_changed = sample < saved_rtt_ / kRttCheckLowDivisor ||
                            sample > saved_rtt_ * kRttCheckHighFactor;
  const ByteCount jump = std::max(cwnd_bytes, saved_cwnd_bytes_ / 2);
  if (path_changed || jump <= cwnd_bytes || sample <= Duration{0}) {
    phase_ = Phase::inactive;
    return std::nullopt;
  }
  phase_ = Phase::unvalidated;
  jump_bytes_ = jump;
  cwnd_before_jump_ = cwnd_bytes;
  budget_bytes_ = jump - cwnd_bytes;
  clocked_window_bytes_ = cwnd_bytes;
  pacing_period_ = sample;
  return Outcome{jump_bytes_, kInfiniteSsthresh};
}

void CarefulResume::on_sent(PacketNumber number, ByteCount bytes, bool extra) {
  if (!unvalidated() || !extra) return;
  budget_bytes_ -= std::min(budget_bytes_, bytes);
  last_unvalidated_ = number;
}

std::optional<CarefulResume::Outcome> CarefulResume::on_acked(
    ByteCount acked_bytes, std::optional<PacketNumber> smallest_outstanding) {
  if (!unvalidated()) return std::nullopt;
  // Slow start would have grown by every acked byte.
  clocked_window_bytes_ = std::min(jump_bytes_, clocked_window_bytes_ + acked_bytes);
  const bool unvalidated_outstanding = last_unvalidated_ && smallest_outstanding &&
                                       *smallest_outstanding <= *last_unvalidated_;
  if (unvalidated_outstanding) return std::nullopt;
  if (budget_bytes_ == 0 || clocked_window_bytes_ >= jump_bytes_) {
    // The extra went through (or slow start caught up): the jump holds.
    phase_ = Phase::validated;
    return Outcome{jump_bytes_, saved_ssthresh_bytes_};
  }
  if (!smallest_outstanding) {
    // Ran out of data before the jump was used: only the clocked window is proven.
    phase_ = Phase::validated;
    return Outcome{clocked_window_bytes_, saved_ssthresh_bytes_};
  }
  return std::nullopt;
}

std::optional<CarefulResume::Outcome> CarefulResume::on_lost() {
  if (reconnaissance()) {
    phase_ = Phase::inactive;
    return std::nullopt;
  }
  if (!unvalidated()) return std::nullopt;
  phase_ = Phase::fallback;
  return Outcome{std::max(initial_window_bytes_, cwnd_before_jump_), kInfiniteSsthresh};
}

}  // namespace egw::congestion
