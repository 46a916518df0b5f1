// The model law's DOWN as a check of bw (model_law.h, "probe_bw"): DOWN
// paces at 0.9 bw, so with bw right our queue drains in its first round or
// two. A DOWN that ends on its round bound with the flight still above the
// BDP, while the link delivered clearly less than bw, and no one else's
// queue shows in the RTT (within 1.5 min_rtt; beyond it the competition
// rule decides), says bw is above the link: the model takes what DOWN
// delivered.
#include <algorithm>

#include "congestion/delivery_rate.h"
#include "congestion/model_law.h"

namespace egw::congestion {

void ModelLaw::sample_down(const RateSample& rs) {
  if (state_ != State::probe_bw || phase_ != Phase::down || competitive_) return;
  down_acked_ += rs.acked_bytes;
  if (rs.is_app_limited) down_app_limited_ = true;
}

// Traced in the simulator's loss sweep (ModelStartup, 1 %, 600 packets,
// seed 3): the hub's startup read 24.3 Mbit/s on the 20 Mbit/s link from
// ACK-compressed samples (the upload's startup queue in its ACK path). Its
// window, 1.2 BDP + target, then kept ~19 ms of standing queue on the
// downlink for the max filter's two cycles (4-6 s); DOWN at 0.9 x 24.3 =
// 21.6 Mbit/s could not drain it. That queue is in the upload's ACK path:
// the branch, window-limited at min_rtt / srtt = 60 / 80 ms, sent 14 of 20
// Mbit/s and its UP probes found no room (upload 57 %). BBR's max filter
// has the same blind spot; the mean over DOWN (not a sample: compressed
// acks inflate single samples) is what the link gave us.
void ModelLaw::check_down_drained(ByteCount inflight, Instant now) {
  // With ack_path_window a DOWN that does not drain is how the ACK path's
  // delay is measured (model_law_ack_path.cc), not a sign of a wrong bw.
  if (ack_path_inferred() || competitive_ || down_app_limited_ || inflight <= bdp_bytes() ||
      !min_rtt_) {
    return;
  }
  if (!cycle_min_rtt_ || *cycle_min_rtt_ > *min_rtt_ + *min_rtt_ / 2) return;  // someone's queue
  const Duration elapsed = now - down_start_;
  if (elapsed < *min_rtt_) return;
  const double delivered = static_cast<double>(down_acked_) / to_seconds(elapsed);
  if (delivered >= kDownShortfall * bw_bytes_per_s()) return;
  bw_hi_ = {delivered, delivered};
  ++bw_corrections_;
}

void ModelLaw::sample_standing(const RateSample& rs) {
  if (standing_since_ != last_near_min_) {
    standing_since_ = last_near_min_;
    standing_acked_ = 0;
    standing_app_limited_ = false;
  }
  standing_acked_ += rs.acked_bytes;
  if (rs.is_app_limited) standing_app_limited_ = true;
}

// The standing-queue rule's evidence (model_law.cc, enter_competitive) is
// also what a link that got slower shows: after a step from 20 to 5 or 2
// Mbit/s the max filter keeps the old rate for up to two cycles, the window
// (bw_old x min_rtt) keeps 200-700 ms of our own queue, DOWN's check stays
// off (the RTT is above 1.5 min_rtt), and the law went CUBIC on its own
// queue and filled the buffer (ScenarioChangingRate: 1 of 12 steps down
// drained). So after kRebaseWindow of standing queue, once per two standing
// windows: if the link delivered clearly less than bw, take that rate, and
// give the queue two round trips to drain at the smaller window. Ours does
// (12 of 12, 2.0-2.8 s after the step); a competitor's stays, and the
// standing rule competes then, at about the time it would have.
bool ModelLaw::rebase_on_own_queue(Instant now) {
  if (standing_app_limited_ || now <= standing_since_) return false;
  if (last_standing_rebase_ && now - *last_standing_rebase_ < 2 * kStandingWindow) return false;
  const double delivered = static_cast<double>(standing_acked_) / to_seconds(now - standing_since_);
  if (delivered >= kStandingShortfall * bw_bytes_per_s()) return false;
  rebase_undo_ = RebaseUndo{bw_hi_, cwnd_, lost_total_, standing_threshold()};
  bw_hi_ = {delivered, delivered};
  ++bw_corrections_;
  last_standing_rebase_ = now;
  // Ours drains at the smaller window within a round or two of the RTT it
  // built; if no sample near min_rtt comes by then, the rule competes.
  const Duration drain = std::clamp<Duration>(2 * srtt_.value_or(*min_rtt_), ms(250), kStandingWindow);
  last_near_min_ = now - (kStandingWindow - drain);
  return true;
}

// Judged on a fresh RTT sample, in ProbeBW and not competing. A queue that
// drained after a rebase was ours, unless packets were lost meanwhile: a
// competitor's back-off after an overflow drains a shared queue too, and a
// rate taken while CUBIC held most of the buffer would stay (a precaution:
// the simulator's 24 runs beside CUBIC did not need it; the one that kept
// 0.03x of a flow's share was cured by the kept threshold, standing_threshold).
void ModelLaw::judge_standing_queue(Instant now) {
  if (rebase_undo_ && last_standing_rebase_ && last_near_min_ > *last_standing_rebase_) {
    if (lost_total_ > rebase_undo_->lost_total) undo_rebase();
    rebase_undo_.reset();
  }
  const Duration standing = now - last_near_min_;
  if (standing >= kRebaseWindow && rebase_on_own_queue(now)) return;
  if (standing < kStandingWindow) return;
  if (rebase_undo_) undo_rebase();  // not ours: the queue stayed
  rebase_undo_.reset();
  enter_competitive();
}

void ModelLaw::undo_rebase() {
  bw_hi_ = rebase_undo_->bw_hi;
  cwnd_ = std::max(cwnd_, rebase_undo_->cwnd);
}

}  // namespace egw::congestion
