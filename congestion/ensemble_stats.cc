// What an ensemble reports: its path observation for the temporal cache,
// its stats for metrics and status, a member's share of the window.
#include <algorithm>

#include "congestion/ensemble_impl.h"

namespace egw::congestion {

PathObservation Ensemble::observe(Instant now) const {
  return impl_->reference_domain().observe(now);
}

EnsembleStats Ensemble::stats() const {
  const Impl& m = *impl_;
  EnsembleStats s;
  s.ack_domain_visits = m.ack_domain_visits;
  if (m.coupled()) {
    s.cwnd_bytes = m.shared->cwnd_bytes();
    s.ssthresh_bytes = m.shared->law().ssthresh_bytes();
  } else {
    for (const auto& [id, d] : m.member_domains) {
      if (m.retired.contains(id)) continue;
      s.cwnd_bytes = saturating_add(s.cwnd_bytes, d->cwnd_bytes());
      s.ssthresh_bytes = saturating_add(s.ssthresh_bytes, d->law().ssthresh_bytes());
    }
  }
  DomainCounters c = m.dropped_counters;
  c += m.shared->counters();
  s.bytes_in_flight = m.shared->bytes_in_flight();
  for (const auto& [id, d] : m.member_domains) {
    s.bytes_in_flight += d->bytes_in_flight();
    c += d->counters();
  }
  const CongestionDomain& ref = m.reference_domain();
  s.srtt = ref.rtt().srtt();
  s.rttvar = ref.rtt().rttvar();
  s.min_rtt = ref.rtt().min_rtt();
  s.law = ref.law().law_state();
  s.pacing_rate_bytes_per_s = ref.pacing_rate_bytes_per_s();
  s.packets_sent = m.packets_sent;
  s.packets_lost = c.packets_lost;
  s.loss_rounds = c.loss_rounds;
  s.rto_count = c.rto_count;
  s.tail_probes = c.tail_probes;
  s.spurious_rounds = c.spurious_rounds;
  s.random_loss_rounds = c.random_loss_rounds;
  s.members = m.members.size();
  s.active_members = m.active_members;
  s.resumed = m.resumed_from.has_value();
  return s;
}

ByteCount Ensemble::member_cwnd_bytes(MemberId id) const {
  const Impl& m = *impl_;
  if (!m.members.contains(id)) return 0;
  if (!m.coupled()) return m.domain_for(id).cwnd_bytes();
  return scale(m.shared->cwnd_bytes(), m.scheduler.tickets(id), m.scheduler.total_tickets());
}

}  // namespace egw::congestion
