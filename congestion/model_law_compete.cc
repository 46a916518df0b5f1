// The model law's competitive mode (model_law.h, "Competition"): the
// standing-queue rule's threshold, the switch to an embedded CUBIC, how that
// window is paced, and its cuts.
#include <algorithm>

#include "congestion/model_law.h"

namespace egw::congestion {

// The RTT above min_rtt that no queue of our own explains. Ours stays below
// it: CRUISE keeps the queue target (its floor at most 15 ms), UP adds a
// quarter of min_rtt, DOWN drains. Half of min_rtt: CUBIC keeps 0.4-1
// min_rtt of queue in a one-BDP buffer (with one min_rtt the law never
// competed there: 0.16-0.20x one flow in the lab), several in a deep one.
// The asymmetric line's uplink queue in the download's ACK path drains each
// cycle since the floor is bounded (none of 5 simulator runs competed), but
// not under `ack_path_window`, whose window holds it on purpose: one min_rtt
// there. Cost: a route change adding more than half of min_rtt is taken for
// a competitor until min_rtt's competitive window ends (60 s).
Duration ModelLaw::standing_threshold() const {
  const Duration min_rtt = min_rtt_.value_or(Duration{0});
  const Duration t = std::max({2 * kQueueTarget, ack_path_inferred() ? min_rtt : min_rtt / 2,
                               2 * own_target_delay()});
  // A rebase on trial must not widen it: at a starved rate the queue target
  // is many milliseconds, and every sample beside CUBIC's queue looked near.
  return rebase_undo_ ? std::min(t, rebase_undo_->standing_threshold) : t;
}

// Copa's rule, our constants: if the RTT did not come near min_rtt once in
// kStandingWindow (Copa: 5 RTTs; ours spans a whole ProbeBW cycle, so also
// the peer gateway's drain of a shared reverse queue), somebody else keeps
// a standing queue. Compete as CUBIC, by slow start from the current flight
// up to the first loss round (as a CUBIC flow that joins): from the flight
// in congestion avoidance, cubic growth (flat near its start) needed tens
// of seconds to reach a share; from the rate before the queue times the RTT
// the ensemble took 2.1x one CUBIC flow beside four in the simulator.
void ModelLaw::enter_competitive() {
  competitive_ = true;
  // Only a cycle that began competing may end it: this one's min RTT may be
  // a CUBIC cut that drained a one-BDP buffer for a moment, and ending here
  // gave the next 3 s to the model (0.31x one CUBIC flow in the lab).
  cycle_drains_ = false;
  cubic_.set_state(cwnd_, kInfiniteSsthresh);
  take_cubic_window();
}

// Competing, the window is CUBIC's. Its slow start goes by the ACK clock,
// as the CUBIC flows beside it do: a flow that joins a buffer CUBIC keeps
// full takes its share in that burst (paced at 2 x cwnd/srtt, as Linux with
// fq, the first drops ended it at a fifth of the window and the ensemble
// got 0.16x one CUBIC flow in ScenarioModelLawCompete, against 0.59x). After
// it, the window is paced at 1.25 x cwnd/srtt (RFC 9002 7.7): when a queue in
// the ACK path drains (another host's upload on a slow uplink), the ACKs
// that waited behind it come at once and released the window at many times
// the downlink's rate into its buffer (the WAN lab's asym-direct-upload:
// hundreds of packets lost at a time). Not at the model's bw: so paced the
// ensemble got 0.13x one CUBIC flow (pacing changes which flow a drop-tail
// overflow hits).
std::optional<double> ModelLaw::competitive_pacing_rate() const {
  if (cubic_.in_slow_start() || !srtt_ || *srtt_ <= Duration{0}) return std::nullopt;
  return kCompetitivePacingGain * static_cast<double>(cwnd_) / to_seconds(*srtt_);
}

// One cut per loss round as the domain counts them: cut once per round trip
// of our own (the former rule), a loss burst whose detection spanned two
// rounds cut twice, and the ensemble took 0.41x one CUBIC flow beside four
// over 20-40 s in the simulator (19 cuts against their 8.5 each).
void ModelLaw::on_congestion_event(Instant now, std::uint32_t /*n_flows*/) {
  on_congestion_events(now, 1, 1);
}

void ModelLaw::on_congestion_events(Instant now, std::uint32_t /*n_flows*/, std::uint32_t count) {
  if (!competitive_) return;
  cubic_.on_congestion_events(now, competing_flows(), count);
  take_cubic_window();
}

void ModelLaw::on_random_loss_events(Instant now, std::uint32_t /*n_flows*/, std::uint32_t count) {
  if (!competitive_) return;
  cubic_.on_random_loss_events(now, competing_flows(), count);
  take_cubic_window();
}

}  // namespace egw::congestion
