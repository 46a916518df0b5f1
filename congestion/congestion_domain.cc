#include "congestion/congestion_domain.h"

#include <algorithm>

namespace egw::congestion {

namespace {

// A sender with fewer than this many packets of room left in the window is
// window-limited (quiche kMaxBurstBytes: an ack clock releases a few packets
// at a time, so "flight == cwnd" is rarely exact).
constexpr ByteCount kCwndLimitedSlackPackets = 3;
// TCP Veno's beta: below this backlog (packets queued by our window) a loss
// is taken as random, not as a queue overflow.
constexpr double kVenoBacklogPackets = 3.0;
// Pacing gain over cwnd/srtt (Linux tcp_pacing_ss_ratio 200 %, ca_ratio
// 120 %; quiche 2 and 1.25): in slow start the window doubles per round trip
// and the pacer must not be what holds it; after, room for the ACK clock's
// jitter without a standing burst.
constexpr double kSlowStartPacingGain = 2.0;
constexpr double kAvoidancePacingGain = 1.25;

DomainListener& default_listener() {
  static DomainListener listener;
  return listener;
}

}  // namespace

RttConfig CongestionDomain::rtt_config(const EnsembleConfig& config) {
  return RttConfig{config.initial_rtt, config.min_rto, config.max_rto, ms(1)};
}

DomainCounters& DomainCounters::operator+=(const DomainCounters& o) {
  packets_lost += o.packets_lost;
  loss_rounds += o.loss_rounds;
  rto_count += o.rto_count;
  tail_probes += o.tail_probes;
  spurious_rounds += o.spurious_rounds;
  random_loss_rounds += o.random_loss_rounds;
  return *this;
}

CongestionDomain::CongestionDomain(const EnsembleConfig& config, const DomainOptions& options,
                                   Instant now, DomainListener* listener)
    : config_(config),
      listener_(listener ? listener : &default_listener()),
      resume_after_idle_(options.resume_after_idle),
      rtt_(rtt_config(config)),
      sent_(LossDetectionConfig{config.packet_threshold, config.time_threshold, ms(1)}),
      pacer_(config.pacing.max_burst_packets),
      initial_window_packets_(options.initial_window_packets),
      initial_window_bytes_(options.initial_window_packets * config.max_datagram_bytes),
      idle_since_(now) {
  law_ = make_window_law(config.law, law_params());
  // Slow start is never paced here, so L = 8 (RFC 9406 4.2).
  if (config.slow_start == SlowStart::hystart_pp) hystart_.emplace(/*paced=*/false);
}

WindowLawParams CongestionDomain::law_params() const {
  return WindowLawParams{mss(), initial_window_packets_ * mss(), config_.min_window_packets * mss(),
                         config_.ack_path_window};
}

void CongestionDomain::resume_from(const PathState& saved) {
  resume_.emplace(saved, initial_window_bytes_, config_.resume.rtt_check_first);
  if (!config_.resume.rtt_check_first) {
    // TCP fast start: the saved RTT is trusted at once (its RTO included).
    rtt_.seed(saved.srtt, saved.rttvar, saved.min_rtt);
    if (resume_->unvalidated()) law_->set_state(resume_->jump_bytes(), kInfiniteSsthresh);
  }
  // With the RTT check the estimator starts fresh (RFC 6298 2.1): the saved
  // RTT is only compared with the first sample, so a path that got slower
  // meanwhile cannot cause spurious timeouts on the old, short RTO. The tail
  // probe still times from the saved RTT (RFC 9002 6.2.2 allows a resumed
  // connection's initial RTT): a lost first packet of a busy period (a
  // request, a stream's open) otherwise waited 3 x 333 ms, and a spurious
  // probe costs one packet, never the window.
  saved_pto_ = probe_timeout(saved.srtt, saved.rttvar, config_.max_ack_delay);
  if (!resume_->reconnaissance() && !resume_->unvalidated()) resume_.reset();
}

void CongestionDomain::on_max_datagram_changed() {
  // RFC 9002 7.2: "If the maximum datagram size changes during the
  // connection, the initial congestion window SHOULD be recalculated with
  // the new size."
  const ByteCount old_initial = initial_window_bytes_;
  initial_window_bytes_ = initial_window_packets_ * mss();
  law_->set_params(law_params());
  if (resume_) resume_->set_initial_window_bytes(initial_window_bytes_);
  // A window nothing has been sent on yet is no measurement: it is simply
  // the initial window, so it becomes the new one.
  if (!sent_.largest_sent() && law_->cwnd_bytes() == old_initial) {
    law_->set_state(initial_window_bytes_, law_->ssthresh_bytes());
  }
}

bool CongestionDomain::cwnd_limited(ByteCount prior_flight) const {
  const ByteCount cwnd = law_->cwnd_bytes();
  if (prior_flight + kCwndLimitedSlackPackets * mss() >= cwnd) return true;
  // Slow start doubles per RTT: a sender using more than half is using it.
  return law_->in_slow_start() && prior_flight > cwnd / 2;
}

bool CongestionDomain::looks_random(ByteCount prior_flight) const {
  if (config_.random_loss != RandomLoss::veno || !rtt_.has_sample()) return false;
  // The largest RTT of the last round or two, not the last ack's: a sender
  // held by flow control or the application sends in bursts, and the loss
  // at a burst's tail is often detected by acks of the next burst, which
  // found the queue drained (recent_max_rtt.h).
  // (It holds the latest sample too; srtt covers a state seeded from the cache.)
  const Duration rtt = std::max(rtt_.srtt(), recent_max_rtt_.get());
  const Duration base = rtt_.min_rtt();
  if (rtt <= Duration{0} || base <= Duration{0}) return false;
  // Veno's N = (Expected - Actual) * BaseRTT = window * (RTT - BaseRTT) / RTT,
  // in packets; beta = 3. The window is what was in flight: below cwnd when
  // the sender is not window-limited, and only that can be queued. A stale
  // min RTT (a longer route) overestimates N: the safe side, a full cut.
  const ByteCount window = std::min(law_->cwnd_bytes(), prior_flight);
  const double backlog_packets = static_cast<double>(window) * to_seconds(rtt - base) /
                                 to_seconds(rtt) / static_cast<double>(mss());
  return backlog_packets < kVenoBacklogPackets;
}

bool CongestionDomain::restart_due(Instant now) const {
  return (sent_.empty() || control_only_flight_) && !resume_ && rtt_.srtt() > Duration{0} &&
         now - idle_since_ > rtt_.rto() && law_->cwnd_bytes() > initial_window_bytes_;
}

void CongestionDomain::restart_after_idle(Instant now) {
  queue_bound_.reset();
  const ByteCount ssthresh = law_->ssthresh_bytes();
  const bool resumable = resume_after_idle_ && config_.resume.enabled &&
                         now - idle_since_ <= config_.resume.max_idle;
  law_->on_idle_restart();
  if (!resumable) {
    // RFC 5681 4.1: restart window = min(IW, cwnd); ssthresh remembers.
    law_->set_state(initial_window_bytes_, ssthresh);
    return;
  }
  const PathState saved{law_->cwnd_bytes(), ssthresh,    rtt_.srtt(), rtt_.rttvar(),
                        rtt_.min_rtt(),     mss(), idle_since_};
  resume_.emplace(saved, initial_window_bytes_, config_.resume.rtt_check_first);
  law_->set_state(resume_->unvalidated() ? resume_->jump_bytes() : initial_window_bytes_,
                  resume_->unvalidated() ? kInfiniteSsthresh : ssthresh);
  if (!resume_->reconnaissance() && !resume_->unvalidated()) resume_.reset();
  pacer_.reset();
}

Duration CongestionDomain::resume_interval() const {
  return burst_interval_for(resume_->jump_bytes(), resume_->pacing_period(),
                            config_.pacing.max_burst_packets, mss());
}

SendGate CongestionDomain::gate(Instant now, bool beyond_window) const {
  return gate_for(now, beyond_window, mss());
}

SendGate CongestionDomain::realtime_gate(Instant now) const { return gate_for(now, false, 0); }

SendGate CongestionDomain::gate_for(Instant now, bool beyond_window, ByteCount paced_bytes) const {
  SendGate g;
  const ByteCount flight = sent_.bytes_in_flight();
  // A domain about to restart after idle is judged by the window it restarts with.
  const ByteCount limit = restart_due(now) ? initial_window_bytes_ : window_bytes();
  const bool window = prr_ ? prr_->may_send() : flight + mss() <= limit;
  g.window_open = beyond_window || window || recovery_send_pending_ || probe_pending_;
  g.unheld = probe_pending_;
  if (!g.window_open || g.unheld) return g;
  if (resume_ && resume_->is_extra(flight, mss())) {
    g.hold(pacer_.next_release(now, resume_interval()), now);  // beyond the ACK clock
  }
  // A domain with nothing in flight may send at once: on_sent allows it a
  // burst of the initial window. A join's allowance beyond the window keeps
  // its own pacing (immediate: none, the bursty baseline; paced: EFCM's).
  if (const double rate = pacing_rate_bytes_per_s();
      rate > 0 && !sent_.empty() && !beyond_window) {
    g.hold(rate_pacer_.next_release(now, rate, paced_bytes, mss()), now);
  }
  if (const double cap = cap_bytes_per_s(); cap > 0 && !sent_.empty() && !beyond_window) {
    const ByteCount wire = mss() + kIpUdpHeaderBytes;
    const ByteCount paced_wire = paced_bytes > 0 ? paced_bytes + kIpUdpHeaderBytes : 0;
    g.hold(cap_pacer_.next_release(now, cap, paced_wire, wire), now);
  }
  return g;
}

double CongestionDomain::pacing_rate_bytes_per_s() const {
  const double cap = cap_bytes_per_s();
  double rate = 0;
  if (const auto law_rate = law_->pacing_rate_bytes_per_s()) {
    rate = *law_rate;  // a rate-based law has no ACK clock to fall back on
  } else if (!config_.pacing.enabled) {
    return cap;
  } else {
    // Before a sample srtt is the initial RTT (RFC 9002 6.2.2).
    const double srtt_s = to_seconds(std::max(rtt_.srtt(), us(1)));
    const double gain = law_->in_slow_start() ? kSlowStartPacingGain : kAvoidancePacingGain;
    rate = gain * static_cast<double>(law_->cwnd_bytes()) / srtt_s;
  }
  return cap > 0 ? std::min(rate, cap) : rate;
}

double CongestionDomain::path_rate_bytes_per_s() const {
  double measured = law_->law_state().bottleneck_bytes_per_s;
  // A law with a rate of its own but no bw yet has only startup's guess.
  if (measured <= 0 && !law_->pacing_rate_bytes_per_s() && config_.pacing.enabled) {
    measured = pacing_rate_bytes_per_s();
  }
  const double cap = cap_bytes_per_s();
  if (measured <= 0) return cap;
  return cap > 0 ? std::min(measured, cap) : measured;
}

bool CongestionDomain::next_is_extra() const {
  return resume_ && resume_->is_extra(sent_.bytes_in_flight(), mss());
}

void CongestionDomain::charge_cap(Instant now, ByteCount bytes) {
  if (const double cap = cap_bytes_per_s(); cap > 0) {
    cap_pacer_.on_sent(now, cap, bytes + kIpUdpHeaderBytes, mss() + kIpUdpHeaderBytes);
  }
}

void CongestionDomain::on_unscheduled_sent(Instant now, ByteCount bytes) { charge_cap(now, bytes); }

// The first packet of a flight, or the first data after control packets
// alone: only data ends the idle period (RFC 5681 4.1). A keep-alive PING
// (every 15 s, after > RTO idle) would take the next data's careful resume.
void CongestionDomain::on_flight_started(const SentPacket& packet) {
  const Instant now = packet.sent_time;
  if (packet.member == kControlMember) {
    control_only_flight_ = true;
  } else if (restart_due(now)) {
    sent_data_ = true;
    control_only_flight_ = false;
    restart_after_idle(now);
  } else {
    sent_data_ = true;
    control_only_flight_ = false;
    law_->on_idle_ended(now - idle_since_);
  }
  // Nothing in flight: no ACK clock to spread, the window is all there is
  // to go by (quiche's initial burst); the rate paces what follows.
  rate_pacer_.allow_burst(now, initial_window_bytes_);
  cap_pacer_.allow_burst(now, initial_window_bytes_ + initial_window_bytes_ / mss() * kIpUdpHeaderBytes);
}

bool CongestionDomain::on_sent(const SentPacket& packet) {
  const Instant now = packet.sent_time;
  if (sent_.empty()) rto_armed_at_ = now;  // RFC 6298 5.1
  if (sent_.empty() || control_only_flight_) on_flight_started(packet);
  if (const double rate = pacing_rate_bytes_per_s(); rate > 0) {
    rate_pacer_.on_sent(now, rate, packet.bytes, mss());
  }
  charge_cap(now, packet.bytes);
  const bool extra = resume_ && resume_->is_extra(sent_.bytes_in_flight(), packet.bytes);
  SentPacket tracked = packet;
  tracked.delivery = rate_sampler_.on_packet_sent(sent_.bytes_in_flight(), now);
  tracked.sent_in_flight_bytes = static_cast<std::uint32_t>(
      std::min<ByteCount>(sent_.bytes_in_flight() + packet.bytes, 0x3fff'ffff));
  sent_.on_sent(tracked);
  recovery_send_pending_ = false;
  probe_pending_ = false;
  if (prr_) prr_->on_sent(packet.bytes);
  if (hystart_) hystart_->on_packet_sent(packet.number);
  if (extra) pacer_.on_sent(now, resume_interval());
  if (resume_) resume_->on_sent(packet.number, packet.bytes, extra);
  return extra;
}

void CongestionDomain::update_timer(Instant now, bool new_data_acked) {
  if (sent_.empty()) {
    if (rto_armed_at_ && !control_only_flight_) idle_since_ = now;
    control_only_flight_ = false;
    rto_armed_at_.reset();
    probes_unanswered_ = 0;
    probe_pending_ = false;
    return;
  }
  // RFC 6298 5.3: restart on an ack of new data, from any member.
  if (new_data_acked || !rto_armed_at_) rto_armed_at_ = now;
}

void CongestionDomain::end_prr_if_recovered(PacketNumber largest_acked_in_event) {
  if (!prr_ || !recovery_point_) return;
  // RFC 9002 7.3.2: a packet sent after recovery began was acked; RFC 6582:
  // nothing sent before it is outstanding.
  const auto oldest = sent_.smallest_outstanding();
  if (largest_acked_in_event > *recovery_point_ || !oldest || *oldest > *recovery_point_) {
    prr_.reset();  // cwnd = ssthresh already: the plain gate takes over
  }
}

void CongestionDomain::forget_undo() {
  if (!undo_) return;
  for (std::size_t i = 0; i < undo_->lost.size(); ++i) listener_->on_undo_forgets(undo_->lost[i]);
}

void CongestionDomain::remember_lost(const std::vector<SentPacket>& lost, std::size_t first) {
  if (!undo_ || undo_->overflowed) return;
  for (std::size_t i = first; i < lost.size(); ++i) {
    if (undo_->lost.size() == SpuriousLossUndo::kMaxTracked) {
      forget_undo();
      undo_->overflowed = true;
      return;
    }
    undo_->lost.push_back(lost[i].number);
    listener_->on_undo_awaits(lost[i]);
  }
}

void CongestionDomain::undo_if_spurious(std::span<const AckedRange> ranges) {
  if (!undo_ || undo_->overflowed || undo_->lost.empty()) return;
  RingDeque<PacketNumber>& lost = undo_->lost;
  // Drop every lost number an ack range covers (a handful of each).
  for (std::size_t i = 0; i < lost.size();) {
    const PacketNumber n = lost[i];
    const bool acked = std::any_of(ranges.begin(), ranges.end(), [n](const AckedRange& r) {
      return r.smallest <= n && n <= r.largest;
    });
    if (!acked) {
      ++i;
      continue;
    }
    listener_->on_undo_forgets(n);
    lost[i] = lost.back();
    lost.pop_back();
  }
  if (!lost.empty()) return;
  // Every packet the round declared lost arrived: reordering, not congestion.
  law_->set_state(undo_->cwnd_before, undo_->ssthresh_before);
  undo_.reset();
  prr_.reset();
  recovery_send_pending_ = false;
  ++counters_.spurious_rounds;
}

bool CongestionDomain::resume_on_lost() {
  if (!resume_) return false;
  if (auto fallback = resume_->on_lost()) {
    // Unvalidated: fall back without penalty: a fresh flow's window, no
    // loss round; the rest of the jump lost with it is in this round.
    law_->set_state(fallback->cwnd_bytes, fallback->ssthresh_bytes);
    recovery_point_ = sent_.largest_sent();
    resume_.reset();
    return true;
  }
  resume_.reset();  // reconnaissance: the resume ends, normal recovery follows
  return false;
}

std::uint32_t CongestionDomain::new_decreases(const std::vector<SentPacket>& lost,
                                              std::size_t first) {
  if (config_.coupling != CouplingMode::n_flows) {
    const PacketNumber largest_lost = lost.back().number;
    return !recovery_point_ || largest_lost > *recovery_point_ ? 1 : 0;  // a new loss round
  }
  // EFCM 2.4.2: each of n flows halves its own window once per its own loss
  // round, so the aggregate shrinks by 1/(2n) once per member that lost a
  // packet sent after that member's last decrease.
  std::uint32_t decreases = 0;
  for (std::size_t i = first; i < lost.size(); ++i) {
    const SentPacket& p = lost[i];
    auto it = member_recovery_.find(p.member);
    if (it != member_recovery_.end() && p.number <= it->second) continue;
    member_recovery_[p.member] = std::max(sent_.largest_sent().value_or(0), p.number);
    ++decreases;
  }
  return decreases;
}

void CongestionDomain::report_losses(const std::vector<SentPacket>& lost, std::size_t first,
                                     Instant now, ByteCount prior_flight_bytes) {
  ByteCount bytes = 0;
  ByteCount sent_in = 0;
  for (std::size_t i = first; i < lost.size(); ++i) {
    bytes += lost[i].bytes;
    sent_in = std::max<ByteCount>(sent_in, lost[i].sent_in_flight_bytes);
  }
  if (bytes > 0) law_->on_packets_lost(bytes, prior_flight_bytes, sent_in, now);
}

void CongestionDomain::on_lost(const std::vector<SentPacket>& lost, std::size_t first,
                               Instant now, ByteCount prior_flight_bytes) {
  if (first == lost.size()) return;
  report_losses(lost, first, now, prior_flight_bytes);
  counters_.packets_lost += lost.size() - first;
  if (resume_on_lost()) return;
  const ByteCount cwnd_before = law_->cwnd_bytes();
  const ByteCount ssthresh_before = law_->ssthresh_bytes();
  const std::uint32_t decreases = new_decreases(lost, first);
  if (decreases == 0) {
    remember_lost(lost, first);  // more losses of the round being undone
    return;
  }
  forget_undo();
  undo_.emplace();
  undo_->cwnd_before = cwnd_before;
  undo_->ssthresh_before = ssthresh_before;
  remember_lost(lost, first);
  const std::uint32_t flows = listener_->law_flows();
  if (looks_random(prior_flight_bytes)) {
    law_->on_random_loss_events(now, flows, decreases);
    counters_.random_loss_rounds += decreases;
  } else {
    law_->on_congestion_events(now, flows, decreases);
  }
  counters_.loss_rounds += decreases;
  recovery_point_ = sent_.largest_sent();
  if (hystart_) hystart_->on_congestion();
  recovery_send_pending_ = config_.send_one_on_recovery;
  // A rate-based law does not reduce the window on a loss round: PRR has
  // nothing to spread (and no finite ssthresh in its startup).
  if (config_.recovery == Recovery::prr && config_.law != WindowLawKind::model) {
    prr_.emplace(law_->ssthresh_bytes(), prior_flight_bytes);
  }
  listener_->on_congestion_event();  // shares were computed from the old window
}

void CongestionDomain::on_ack(std::span<const AckedRange> ranges, Duration ack_delay,
                              Instant now, AckOutcome& out, SentPackets::AckResult& result,
                              std::optional<Duration> peer_sent_at) {
  const ByteCount prior_flight = sent_.bytes_in_flight();  // RecoverFS if recovery starts
  result.acked.clear();
  result.rtt_sample.reset();
  undo_if_spurious(ranges);
  sent_.on_ack(ranges, now, result);
  if (result.acked.empty()) return;
  if (result.rtt_sample) {
    rtt_.on_sample(*result.rtt_sample, ack_delay);
    recent_max_rtt_.on_sample(now, *result.rtt_sample, rtt_.srtt());
  }
  rtt_.reset_backoff();
  probes_unanswered_ = 0;
  probe_pending_ = false;  // acks flow again: the window decides
  const std::size_t first_lost = out.lost.size();
  sent_.detect_lost(now, std::max(rtt_.srtt(), rtt_.latest_rtt()), out.lost);
  // RFC 9002 A.7: losses first, so an ack that reveals a loss starts the loss
  // round before any of its acks could grow the window.
  on_lost(out.lost, first_lost, now, prior_flight);
  const std::span<const SentPacket> lost_now(out.lost.data() + first_lost,
                                             out.lost.size() - first_lost);
  std::optional<Duration> peer_received_at;
  if (peer_sent_at) peer_received_at = *peer_sent_at - ack_delay;
  RateSample rate =
      rate_sampler_.on_ack(result.acked, lost_now, prior_flight, now, rtt_.min_rtt(), peer_received_at);
  if (peer_sent_at) {
    std::optional<Duration> excess;
    if (rate.rtt) excess = *rate.rtt - rtt_.min_rtt();
    rate.ack_path_delay = ack_path_.on_ack(now, *peer_sent_at, excess);
  }
  // The law keeps what the data left through keep-alive PINGs (their samples
  // aged the model's window to 4 packets); before any data, control packets
  // are all the path has shown.
  if (!control_only_flight_ || !sent_data_) law_->on_rate_sample(rate, now);
  // A law that grows from rate samples (the model's startup) stays at the
  // jump while a careful resume is unvalidated, as grow() holds the others.
  if (resume_unvalidated() && law_->cwnd_bytes() > resume_->jump_bytes()) {
    law_->set_state(resume_->jump_bytes(), kInfiniteSsthresh);
  }

  ByteCount acked_bytes = 0;
  ByteCount growable_bytes = 0;  // acks of packets sent after recovery began
  for (const SentPacket& p : result.acked) {
    acked_bytes += p.bytes;
    if (!recovery_point_ || p.number > *recovery_point_) growable_bytes += p.bytes;
    listener_->on_left_flight(p);
  }
  for (std::size_t i = first_lost; i < out.lost.size(); ++i) listener_->on_left_flight(out.lost[i]);
  if (config_.queue_bound) {
    queue_bound_.on_ack(result.rtt_sample, result.acked.back().sent_time, acked_bytes, rtt_.min_rtt(),
                        prior_flight, law_->cwnd_bytes(), mss(), now);
  }
  grow(result, growable_bytes, prior_flight, now);
  after_ack(result, acked_bytes);
  update_timer(now, /*new_data_acked=*/true);
  out.acked.insert(out.acked.end(), result.acked.begin(), result.acked.end());
}

void CongestionDomain::grow(const SentPackets::AckResult& result, ByteCount growable_bytes,
                            ByteCount prior_flight, Instant now) {
  // The window grows only when it was used (RFC 7661), not while a careful
  // resume is unvalidated, and, in congestion avoidance, not while the owner
  // holds it (a joiner's share clocked out of the others' acks, seed 003).
  // In slow start the growth slot of each ack stays: the aggregate then sends
  // two packets per ack, the joiner's and the growth, which is slow start's
  // own pace, not a burst; holding it cost every web page's ramp whenever an
  // object joined (E-TCP frames page: HTML 8.7 % slower than the uncoupled
  // bundle with the hold, 4.8 % faster without it).
  const bool hold = resume_unvalidated() || !cwnd_limited(prior_flight) ||
                    (!law_->in_slow_start() && listener_->growth_held());
  listener_->on_acked(result.acked, now);
  bool css_over = false;  // HyStart++ CSS ran CSS_ROUNDS: congestion avoidance
  if (!hold && hystart_ && hystart_->phase() != HyStart::Phase::done &&
      law_->ssthresh_bytes() == kInfiniteSsthresh) {
    growable_bytes =
        hystart_->on_ack(growable_bytes, result.acked.back().number, result.rtt_sample, mss());
    css_over = hystart_->phase() == HyStart::Phase::done;
  }
  if (!hold && growable_bytes > 0) {
    law_->on_ack(growable_bytes, RttInfo{rtt_.latest_rtt(), rtt_.srtt(), rtt_.min_rtt()}, now,
                 listener_->law_flows());
  }
  if (css_over) law_->set_state(law_->cwnd_bytes(), law_->cwnd_bytes());  // ssthresh = cwnd
}

void CongestionDomain::after_ack(const SentPackets::AckResult& result, ByteCount acked_bytes) {
  // Careful resume: the first RTT sample of the busy period decides the jump,
  // from the window slow start reached with this ack (never below it).
  bool jumped = false;  // this ack's bytes validate nothing of the jump
  if (result.rtt_sample && resume_ && resume_->reconnaissance()) {
    if (auto jump = resume_->on_rtt_sample(*result.rtt_sample, law_->cwnd_bytes())) {
      law_->set_state(jump->cwnd_bytes, jump->ssthresh_bytes);
      pacer_.reset();
      jumped = true;
    } else {
      resume_.reset();
    }
  }
  const PacketNumber largest_acked = result.acked.back().number;
  end_prr_if_recovered(largest_acked);
  if (prr_) {
    // DeliveredData: what this ack newly acknowledged (our acks are SACKs).
    prr_->on_ack(acked_bytes, sent_.bytes_in_flight(), mss());
    end_prr_if_recovered(largest_acked);
  }
  if (resume_unvalidated() && !jumped) {
    if (auto validated = resume_->on_acked(acked_bytes, sent_.smallest_outstanding())) {
      law_->set_state(validated->cwnd_bytes, validated->ssthresh_bytes);
      resume_.reset();
    }
  }
}

PathObservation CongestionDomain::observe(Instant now) const {
  PathObservation o;
  PathState& s = o.state;
  s.cwnd_bytes = law_->cwnd_bytes();
  s.ssthresh_bytes = law_->ssthresh_bytes();
  s.srtt = rtt_.srtt();
  s.rttvar = rtt_.rttvar();
  s.min_rtt = rtt_.min_rtt();
  s.max_datagram_bytes = mss();
  s.saved_at = now;
  o.in_initial_slow_start = s.ssthresh_bytes == kInfiniteSsthresh;
  // An unvalidated jump is a claim, not knowledge; recovery is a transient.
  o.window_unreliable = resume_unvalidated() || prr_.has_value();
  o.backed_off = rtt_.backoff() > 0;
  return o;
}

}  // namespace egw::congestion
