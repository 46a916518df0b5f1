// CongestionDomain: its timers. One timer per domain, RFC 9002 6.2 and
// RFC 6298: a loss-time deadline (time threshold) first, else the probe
// timeout (tail probes, never later than the RTO would fire), else the RTO.
#include "congestion/congestion_domain.h"

#include <algorithm>

namespace egw::congestion {

void CongestionDomain::fire_rto(Instant now, TimeoutOutcome& out) {
  // RFC 6298 5.4-5.6 and RFC 5681 3.1: everything outstanding is presumed
  // lost, ssthresh from FlightSize, cwnd = 1 MSS, the timer backs off.
  const ByteCount flight = sent_.bytes_in_flight();
  const PacketNumber recover = sent_.largest_sent().value_or(0);
  const std::size_t first = out.lost.size();
  sent_.take_all(out.lost);
  counters_.packets_lost += out.lost.size() - first;
  for (std::size_t i = first; i < out.lost.size(); ++i) listener_->on_left_flight(out.lost[i]);
  std::optional<CarefulResume::Outcome> fallback;
  if (resume_) fallback = resume_->on_lost();
  resume_.reset();
  if (fallback) {
    // TCP fast start 3.4.4, "slow start without penalty": a timeout of the
    // unvalidated window says the saved state was stale, not that the path
    // is congested: a fresh flow's window, no backoff, and an RTT estimator
    // started afresh (the timer ran on the old, possibly stale srtt).
    law_->set_state(fallback->cwnd_bytes, fallback->ssthresh_bytes);
    rtt_ = RttEstimator(rtt_config(config_));
  } else {
    law_->on_rto(flight, listener_->law_flows());
    rtt_.on_rto_expired();
    if (hystart_) hystart_->on_congestion();
  }
  ++counters_.rto_count;
  forget_undo();
  undo_.reset();  // a timeout is no reordering
  recovery_point_ = recover;
  recovery_send_pending_ = false;
  prr_.reset();  // RFC 6937 applies to fast recovery only; slow start after an RTO
  listener_->on_congestion_event();
  update_timer(now, false);
  out.rto_fired = true;
}

void CongestionDomain::fire_probe(Instant now, TimeoutOutcome& out) {
  // RFC 9002 6.2.4: a probe, nothing declared lost, the window untouched;
  // the next PTO is twice as long (6.2.1) and starts now.
  ++probes_unanswered_;
  ++counters_.tail_probes;
  probe_pending_ = true;
  rto_armed_at_ = now;
  out.probes.push_back(sent_.newest());
}

bool CongestionDomain::probe_next() const {
  return probes_unanswered_ < config_.tail_probes && !resume_unvalidated();
}

Duration CongestionDomain::timer_interval() const {
  const Duration rto = rtt_.rto();
  if (!probe_next()) return rto;
  // Never later than the RTO would have fired (Linux TLP): the probe changes
  // the response to a silent tail, not when it comes. PTO and RTO differ by
  // max_ack_delay and the RTO's floor, so on most paths they coincide.
  const Duration pto = rtt_.has_sample() || !saved_pto_ ? rtt_.pto(config_.max_ack_delay) : *saved_pto_;
  return std::min(pto, rto) * (std::int64_t{1} << probes_unanswered_);
}

std::optional<Instant> CongestionDomain::next_timeout() const {
  if (sent_.empty()) return std::nullopt;
  std::optional<Instant> earliest = sent_.loss_time();
  if (rto_armed_at_) {
    const Instant t = *rto_armed_at_ + timer_interval();
    earliest = earliest ? std::min(*earliest, t) : t;
  }
  return earliest;
}

void CongestionDomain::on_timeout(Instant now, TimeoutOutcome& out) {
  if (sent_.empty()) return;
  if (auto t = sent_.loss_time(); t && *t <= now) {
    const ByteCount prior_flight = sent_.bytes_in_flight();
    const std::size_t first = out.lost.size();
    sent_.detect_lost(now, std::max(rtt_.srtt(), rtt_.latest_rtt()), out.lost);
    for (std::size_t i = first; i < out.lost.size(); ++i) listener_->on_left_flight(out.lost[i]);
    for (std::size_t i = first; i < out.lost.size(); ++i) rate_sampler_.on_lost(out.lost[i].bytes);
    on_lost(out.lost, first, now, prior_flight);
    end_prr_if_recovered(/*largest_acked_in_event=*/0);  // no ack in a timeout
    update_timer(now, false);
  } else if (rto_armed_at_ && *rto_armed_at_ + timer_interval() <= now) {
    if (probe_next()) {
      fire_probe(now, out);
    } else {
      fire_rto(now, out);
    }
  }
}

}  // namespace egw::congestion
