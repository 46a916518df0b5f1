#include "congestion/careful_resume.h"

#include <algorithm>

#include "congestion/window_law.h"

namespace egw::congestion {

CarefulResume::CarefulResume(const PathState& saved, ByteCount initial_window_bytes)
    : initial_window_bytes_(initial_window_bytes),
      saved_ssthresh_bytes_(saved.ssthresh_bytes == 0 ? kInfiniteSsthresh : saved.ssthresh_bytes),
      pacing_period_(saved.srtt) {
  const ByteCount half = saved.cwnd_bytes / 2;
  // Without an RTT there is nothing to pace over: no jump.
  if (half <= initial_window_bytes || saved.srtt <= Duration{0}) return;
  phase_ = Phase::unvalidated;
  jump_bytes_ = std::max(initial_window_bytes, half);
  budget_bytes_ = jump_bytes_;
}

void CarefulResume::on_sent(PacketNumber number, ByteCount bytes) {
  if (!sending_unvalidated()) return;
  budget_bytes_ -= std::min(budget_bytes_, bytes);
  last_unvalidated_ = number;
}

std::optional<CarefulResume::Outcome> CarefulResume::on_acked(
    ByteCount acked_bytes, std::optional<PacketNumber> smallest_outstanding) {
  if (!active()) return std::nullopt;
  acked_bytes_ += acked_bytes;
  if (!last_unvalidated_) return std::nullopt;  // nothing sent yet
  const bool unvalidated_outstanding =
      smallest_outstanding && *smallest_outstanding <= *last_unvalidated_;
  if (unvalidated_outstanding) return std::nullopt;
  if (budget_bytes_ == 0) {
    phase_ = Phase::validated;
    return Outcome{std::max(jump_bytes_, acked_bytes_), saved_ssthresh_bytes_};
  }
  if (!smallest_outstanding) {
    // Ran out of data before the jump was used: only what was acked is proven.
    phase_ = Phase::validated;
    return Outcome{std::max(initial_window_bytes_, acked_bytes_), saved_ssthresh_bytes_};
  }
  return std::nullopt;
}

std::optional<CarefulResume::Outcome> CarefulResume::on_lost() {
  if (!active()) return std::nullopt;
  phase_ = Phase::fallback;
  return Outcome{initial_window_bytes_, kInfiniteSsthresh};
}

}  // namespace egw::congestion
