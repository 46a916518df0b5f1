// The Ensemble: glue between the window law, RTT estimator, outstanding-packet
// list, pacer, stride scheduler, joins and careful resume. The model is in
// ensemble.h; the pieces are in their own headers. What lives here:
//
//  - Domains. A domain is one congestion state (law + RTT + outstanding list
//    + RTO timer + pacer). Coupled modes have one domain for every member;
//    `none` has one per member plus a small one (min_window_packets) for
//    kControlMember and for packets of unknown members.
//  - Loss rounds (RFC 6582 3.2 "recover", RFC 9002 7.3.2): on a congestion
//    event the domain remembers the largest packet number sent so far; losses
//    of packets at or below it belong to the same round and do not decrease
//    again, and their acks do not grow the window. With send_one_on_recovery
//    the next packet may leave whatever the reduced window says (7.3.2).
//  - PRR (Recovery::prr, RFC 6937): from the decrease until recovery ends (an
//    ack of a packet sent after it, or nothing sent before it outstanding)
//    the domain's Prr, not cwnd - flight, says whether a packet may leave.
//    RecoverFS is the flight before the ack or timeout that started it.
//  - HyStart++ (SlowStart::hystart_pp): while ssthresh is unset, each ack's
//    growable bytes pass through the domain's HyStart (congestion/hystart.h),
//    which sees every packet number sent and every RTT sample; when its CSS
//    ends, ssthresh = cwnd.
//  - RTO (RFC 6298 5.1-5.7) per domain: armed when a packet leaves an idle
//    domain, restarted by every ack of new data (from any member of the
//    domain), off when nothing is outstanding.
//  - Pacing (only where a paper asks for it, not always): the first window
//    after an idle period longer than one RTO (E-TCP), the unvalidated resumed
//    window (careful resume) and a `paced` joiner's allowance (EFCM).
//  - Joins (shared domain only, when data is in flight): share = cwnd *
//    tickets / sum(tickets). ack_clocked: `clocked_packets` = share / MSS of
//    priority in pick_sender within the unchanged window. immediate / paced:
//    an allowance of `share` bytes the joiner may send beyond the window (at
//    once / paced). A congestion event or RTO cancels what is left.
#include "congestion/ensemble.h"

#include <algorithm>
#include <map>
#include <unordered_set>
#include <utility>

#include "congestion/careful_resume.h"
#include "congestion/hystart.h"
#include "congestion/pacer.h"
#include "congestion/prr.h"
#include "congestion/rtt_estimator.h"
#include "congestion/sent_packets.h"
#include "congestion/window_law.h"

namespace egw::congestion {

namespace {

// In coupled modes the one domain is filed under this key.
constexpr MemberId kSharedDomain = kControlMember;

ByteCount saturating_add(ByteCount a, ByteCount b) {
  return a > kInfiniteSsthresh - b ? kInfiniteSsthresh : a + b;
}

// a * num / den without overflowing for realistic windows.
ByteCount scale(ByteCount a, std::uint64_t num, std::uint64_t den) {
  if (den == 0) return 0;
  return a / den * num + a % den * num / den;
}

void append(std::vector<SentPacket>& into, std::vector<SentPacket>&& from) {
  into.insert(into.end(), from.begin(), from.end());
}

struct Domain {
  Domain(const EnsembleConfig& config, std::uint32_t initial_window_packets, Instant now)
      : law(make_window_law(config.law,
                            WindowLawParams{config.max_datagram_bytes,
                                            initial_window_packets * config.max_datagram_bytes,
                                            config.min_window_packets * config.max_datagram_bytes})),
        rtt(RttConfig{config.initial_rtt, config.min_rto, config.max_rto, ms(1)}),
        sent(LossDetectionConfig{config.packet_threshold, config.time_threshold, ms(1)}),
        pacer(config.pacing.max_burst_packets),
        initial_window_bytes(initial_window_packets * config.max_datagram_bytes),
        idle_since(now) {
    // Slow start is never paced here (pacing is for resumes, idle restarts
    // and paced joins), so L = 8 (RFC 9406 4.2).
    if (config.slow_start == SlowStart::hystart_pp) hystart.emplace(/*paced=*/false);
  }

  std::unique_ptr<WindowLaw> law;
  RttEstimator rtt;
  SentPackets sent;
  Pacer pacer;
  ByteCount initial_window_bytes;
  std::optional<PacketNumber> recovery_point;  // RFC 6582 "recover"
  std::optional<HyStart> hystart;              // SlowStart::hystart_pp
  bool recovery_send_pending = false;          // send_one_on_recovery: one packet may go
  std::optional<Prr> prr;                      // Recovery::prr, while in recovery
  std::optional<Instant> rto_armed_at;
  Instant idle_since;                // when the last outstanding packet left
  ByteCount paced_budget_bytes = 0;  // rest of a paced restart-after-idle window
  bool retired = false;              // `none`: its member was removed
};

struct JoinState {
  JoinMode mode = JoinMode::ack_clocked;
  std::uint32_t clocked_packets = 0;  // ack_clocked: priority slots left
  ByteCount allowance_bytes = 0;      // immediate / paced: beyond-window bytes left
  Pacer pacer;
};

}  // namespace

struct Ensemble::Impl {
  Impl(const EnsembleConfig& c, Instant now, std::optional<PathState> resume_from);

  bool coupled() const { return config.coupling != CouplingMode::none; }
  std::uint32_t law_flows() const {
    if (config.coupling != CouplingMode::n_flows) return 1;
    return static_cast<std::uint32_t>(std::max<std::size_t>(members.size(), 1));
  }
  Domain& domain_for(MemberId id);
  const Domain& domain_for(MemberId id) const;
  Domain& new_member_domain(MemberId id, Instant now);
  bool resume_active(const Domain& d) const {
    return resume && resume->active() && &d == domains.at(kSharedDomain).get();
  }
  bool idle_restart_due(const Domain& d, Instant now) const;
  // RFC 9406 4.3: HyStart++ only in the initial slow start (ssthresh unset).
  bool hystart_applies(const Domain& d) const {
    return d.hystart && d.hystart->phase() != HyStart::Phase::done && !resume_active(d) &&
           d.law->ssthresh_bytes() == kInfiniteSsthresh;
  }
  Duration efcm_interval(const Domain& d) const {
    return efcm_burst_interval(config.pacing, d.rtt.srtt(), d.law->cwnd_bytes(),
                               config.max_datagram_bytes);
  }
  Duration resume_interval() const {
    return burst_interval_for(resume->jump_bytes(), resume->pacing_period(),
                              config.pacing.max_burst_packets, config.max_datagram_bytes);
  }
  // Why `id` may not send now: nothing (nullopt), the window, or pacing until
  // the returned instant.
  struct Gate {
    bool window_open = false;
    std::optional<Instant> paced_until;
  };
  Gate gate(MemberId id, Instant now) const;

  void process_ack(Domain& d, std::span<const AckedRange> ranges, Duration ack_delay,
                   Instant now, AckOutcome& out);
  void on_lost(Domain& d, const std::vector<SentPacket>& lost, Instant now,
               ByteCount prior_flight_bytes);
  void end_prr_if_recovered(Domain& d, PacketNumber largest_acked_in_event);
  void fire_rto(Domain& d, Instant now, TimeoutOutcome& out);
  void update_timer(Domain& d, Instant now, bool new_data_acked);
  void cancel_join_allowances();
  void drop_retired_domains();
  const Domain& reference_domain() const;

  EnsembleConfig config;
  StrideScheduler scheduler;
  std::map<MemberId, ContentClass> members;
  std::map<MemberId, std::unique_ptr<Domain>> domains;
  std::map<MemberId, JoinState> joins;
  std::optional<PathState> resumed_from;
  std::optional<CarefulResume> resume;
  std::optional<PacketNumber> largest_sent;
  std::uint64_t packets_sent = 0;
  std::uint64_t packets_lost = 0;
  std::uint64_t loss_rounds = 0;
  std::uint64_t rto_count = 0;
  // `n_flows`: each member's own RFC 6582 "recover" point (one entry per member).
  std::map<MemberId, PacketNumber> member_recovery;
  std::unordered_set<MemberId> backlog;  // members with something to send
  AckOutcome ack_out;          // reused by on_ack
  TimeoutOutcome timeout_out;  // reused by on_timeout
};

Ensemble::Impl::Impl(const EnsembleConfig& c, Instant now, std::optional<PathState> resume_from)
    : config(c), scheduler(c.scheduler) {
  config.max_datagram_bytes = std::max<ByteCount>(config.max_datagram_bytes, 1);
  config.initial_window_packets = std::max<std::uint32_t>(config.initial_window_packets, 1);
  config.min_window_packets = std::max<std::uint32_t>(config.min_window_packets, 1);
  const std::uint32_t first_window =
      coupled() ? config.initial_window_packets : config.min_window_packets;
  domains.emplace(kSharedDomain, std::make_unique<Domain>(config, first_window, now));

  if (!resume_from || !config.resume.enabled || resume_from->srtt <= Duration{0}) return;
  resumed_from = *resume_from;
  Domain& shared = *domains.at(kSharedDomain);
  if (!coupled()) return;  // `none`: member domains take only the RTT (new_member_domain)
  shared.rtt.seed(resume_from->srtt, resume_from->rttvar, resume_from->min_rtt);
  CarefulResume cr(*resume_from, shared.initial_window_bytes);
  if (cr.active()) {
    shared.law->set_state(cr.jump_bytes(), kInfiniteSsthresh);
    shared.pacer.reset();
    resume = cr;
  }
}

Domain& Ensemble::Impl::domain_for(MemberId id) {
  return const_cast<Domain&>(std::as_const(*this).domain_for(id));
}

const Domain& Ensemble::Impl::domain_for(MemberId id) const {
  if (coupled()) return *domains.at(kSharedDomain);
  auto it = domains.find(id);
  return it != domains.end() ? *it->second : *domains.at(kSharedDomain);
}

Domain& Ensemble::Impl::new_member_domain(MemberId id, Instant now) {
  auto it = domains.find(id);
  if (it != domains.end()) {
    it->second->retired = false;
    return *it->second;
  }
  auto d = std::make_unique<Domain>(config, config.initial_window_packets, now);
  if (resumed_from) d->rtt.seed(resumed_from->srtt, resumed_from->rttvar, resumed_from->min_rtt);
  return *domains.emplace(id, std::move(d)).first->second;
}

bool Ensemble::Impl::idle_restart_due(const Domain& d, Instant now) const {
  return d.sent.empty() && !resume_active(d) && now - d.idle_since > d.rtt.rto() &&
         d.law->cwnd_bytes() > d.initial_window_bytes;
}

Ensemble::Impl::Gate Ensemble::Impl::gate(MemberId id, Instant now) const {
  Gate g;
  const Domain& d = domain_for(id);
  const ByteCount mss = config.max_datagram_bytes;
  const ByteCount flight = d.sent.bytes_in_flight();
  const ByteCount limit = d.law->cwnd_bytes();
  const JoinState* join = nullptr;
  if (coupled()) {
    auto it = joins.find(id);
    if (it != joins.end()) join = &it->second;
  }
  // immediate / paced joiners may send what is left of their share whatever
  // the window says; ack_clocked joiners wait for the window like everyone.
  const bool allowance = join && join->mode != JoinMode::ack_clocked && join->allowance_bytes > 0;
  const bool window = d.prr ? d.prr->may_send() : flight + mss <= limit;
  g.window_open = allowance || window || d.recovery_send_pending;
  if (!g.window_open) return g;

  auto hold = [&](const Pacer& p, Duration interval) {
    const Instant release = p.next_release(now, interval);
    if (release > now) g.paced_until = g.paced_until ? std::max(*g.paced_until, release) : release;
  };
  if (resume_active(d) && resume->sending_unvalidated()) {
    hold(d.pacer, resume_interval());
  } else if (d.paced_budget_bytes > 0 || idle_restart_due(d, now)) {
    hold(d.pacer, efcm_interval(d));
  }
  if (join && join->mode == JoinMode::paced && join->allowance_bytes > 0) {
    hold(join->pacer, efcm_interval(d));
  }
  return g;
}

void Ensemble::Impl::update_timer(Domain& d, Instant now, bool new_data_acked) {
  if (d.sent.empty()) {
    if (d.rto_armed_at) d.idle_since = now;
    d.rto_armed_at.reset();
    return;
  }
  // RFC 6298 5.3: restart on an ack of new data, from any member.
  if (new_data_acked || !d.rto_armed_at) d.rto_armed_at = now;
}

void Ensemble::Impl::cancel_join_allowances() {
  for (auto it = joins.begin(); it != joins.end();) {
    if (it->second.mode != JoinMode::ack_clocked) {
      it = joins.erase(it);
    } else {
      ++it;
    }
  }
}

void Ensemble::Impl::end_prr_if_recovered(Domain& d, PacketNumber largest_acked_in_event) {
  if (!d.prr || !d.recovery_point) return;
  // RFC 9002 7.3.2: a packet sent after recovery began was acked; RFC 6582:
  // nothing sent before it is outstanding (else an idle domain whose sndcnt
  // is used up would wait for an ack that never comes).
  const auto oldest = d.sent.smallest_outstanding();
  if (largest_acked_in_event > *d.recovery_point || !oldest || *oldest > *d.recovery_point) {
    d.prr.reset();  // cwnd = ssthresh already: the plain gate takes over
  }
}

void Ensemble::Impl::on_lost(Domain& d, const std::vector<SentPacket>& lost, Instant now,
                             ByteCount prior_flight_bytes) {
  if (lost.empty()) return;
  packets_lost += lost.size();
  if (resume_active(d)) {
    // Fallback without penalty: a fresh flow's window, no loss round; the rest
    // of the jump that is lost too belongs to this (uncharged) round.
    const auto outcome = resume->on_lost();
    d.law->set_state(outcome->cwnd_bytes, outcome->ssthresh_bytes);
    d.recovery_point = d.sent.largest_sent();
    d.paced_budget_bytes = 0;
    return;
  }
  std::uint32_t decreases = 0;
  if (config.coupling == CouplingMode::n_flows) {
    // EFCM 2.4.2: each of n flows halves its own window once per its own loss
    // round, so the aggregate shrinks by 1/(2n) once per member that lost a
    // packet sent after that member's last decrease. (One decrease per
    // ensemble round would let n_flows take ~1.8x the share of n real flows
    // when a drop-tail overflow hits several members at once.)
    for (const SentPacket& p : lost) {
      auto it = member_recovery.find(p.member);
      if (it != member_recovery.end() && p.number <= it->second) continue;
      member_recovery[p.member] = std::max(d.sent.largest_sent().value_or(0), p.number);
      ++decreases;
    }
  } else {
    const PacketNumber largest_lost = lost.back().number;
    if (!d.recovery_point || largest_lost > *d.recovery_point) decreases = 1;  // new loss round
  }
  if (decreases == 0) return;
  d.law->on_congestion_events(now, law_flows(), decreases);
  loss_rounds += decreases;
  d.recovery_point = d.sent.largest_sent();
  if (d.hystart) d.hystart->on_congestion();
  d.recovery_send_pending = config.send_one_on_recovery;
  if (config.recovery == Recovery::prr) d.prr.emplace(d.law->ssthresh_bytes(), prior_flight_bytes);
  if (coupled()) cancel_join_allowances();
}

void Ensemble::Impl::process_ack(Domain& d, std::span<const AckedRange> ranges,
                                 Duration ack_delay, Instant now, AckOutcome& out) {
  const ByteCount prior_flight = d.sent.bytes_in_flight();  // RecoverFS if recovery starts
  auto result = d.sent.on_ack(ranges, now);
  if (result.acked.empty()) return;
  if (result.rtt_sample) d.rtt.on_sample(*result.rtt_sample, ack_delay);
  d.rtt.reset_backoff();
  auto lost = d.sent.detect_lost(now, std::max(d.rtt.srtt(), d.rtt.latest_rtt()));

  ByteCount acked_bytes = 0;
  ByteCount growable_bytes = 0;  // acks of packets sent after recovery began
  for (const SentPacket& p : result.acked) {
    acked_bytes += p.bytes;
    if (!d.recovery_point || p.number > *d.recovery_point) growable_bytes += p.bytes;
  }
  bool css_over = false;  // HyStart++ CSS ran CSS_ROUNDS: congestion avoidance
  if (hystart_applies(d)) {
    growable_bytes = d.hystart->on_ack(growable_bytes, result.acked.back().number,
                                       result.rtt_sample, config.max_datagram_bytes);
    css_over = d.hystart->phase() == HyStart::Phase::done;
  }
  if (!resume_active(d) && growable_bytes > 0) {
    d.law->on_ack(growable_bytes, RttInfo{d.rtt.latest_rtt(), d.rtt.srtt(), d.rtt.min_rtt()},
                  now, law_flows());
  }
  if (css_over) d.law->set_state(d.law->cwnd_bytes(), d.law->cwnd_bytes());  // ssthresh = cwnd
  const PacketNumber largest_acked = result.acked.back().number;
  end_prr_if_recovered(d, largest_acked);
  on_lost(d, lost, now, prior_flight);
  if (d.prr) {
    // DeliveredData: what this ack newly acknowledged (our acks are SACKs).
    d.prr->on_ack(acked_bytes, d.sent.bytes_in_flight(), config.max_datagram_bytes);
    end_prr_if_recovered(d, largest_acked);
  }
  if (resume_active(d)) {
    if (auto validated = resume->on_acked(acked_bytes, d.sent.smallest_outstanding())) {
      d.law->set_state(validated->cwnd_bytes, validated->ssthresh_bytes);
    }
  }
  update_timer(d, now, /*new_data_acked=*/true);
  append(out.acked, std::move(result.acked));
  append(out.lost, std::move(lost));
}

void Ensemble::Impl::fire_rto(Domain& d, Instant now, TimeoutOutcome& out) {
  // RFC 6298 5.4-5.6 and RFC 5681 3.1: everything outstanding is presumed
  // lost, ssthresh from FlightSize, cwnd = 1 MSS, the timer backs off.
  const ByteCount flight = d.sent.bytes_in_flight();
  const PacketNumber recover = d.sent.largest_sent().value_or(0);
  auto lost = d.sent.take_all();
  packets_lost += lost.size();
  if (resume_active(d)) {
    // TCP fast start 3.4.4, "slow start without penalty": a timeout of the
    // unvalidated resumed window says the cached state was stale, not that
    // the path is congested: a fresh flow's window, ssthresh not cut, no
    // backoff. The timer ran on the cached RTT, which is no measurement of
    // the path now either: the estimator starts afresh (RTO = 3 x
    // initial_rtt until a sample, RFC 6298 2.1), so the retransmission does
    // not time out spuriously again on the stale srtt.
    const auto fallback = resume->on_lost();
    d.law->set_state(fallback->cwnd_bytes, fallback->ssthresh_bytes);
    d.rtt = RttEstimator(RttConfig{config.initial_rtt, config.min_rto, config.max_rto, ms(1)});
  } else {
    d.law->on_rto(flight, law_flows());
    d.rtt.on_rto_expired();
    if (d.hystart) d.hystart->on_congestion();
  }
  ++rto_count;
  d.recovery_point = recover;
  d.paced_budget_bytes = 0;
  d.recovery_send_pending = false;
  d.prr.reset();  // RFC 6937 applies to fast recovery only; slow start after an RTO
  if (coupled()) joins.clear();
  update_timer(d, now, false);
  out.rto_fired = true;
  append(out.lost, std::move(lost));
}

void Ensemble::Impl::drop_retired_domains() {
  for (auto it = domains.begin(); it != domains.end();) {
    if (it->second->retired && it->second->sent.empty()) {
      it = domains.erase(it);
    } else {
      ++it;
    }
  }
}

const Domain& Ensemble::Impl::reference_domain() const {
  if (coupled()) return *domains.at(kSharedDomain);
  // `none`: the largest member's state stands for the path.
  const Domain* best = nullptr;
  for (const auto& [id, d] : domains) {
    if (id == kSharedDomain) continue;
    if (!best || d->law->cwnd_bytes() > best->law->cwnd_bytes()) best = d.get();
  }
  return best ? *best : *domains.at(kSharedDomain);
}

// --- public API ------------------------------------------------------------

Ensemble::Ensemble(const EnsembleConfig& config, Instant now, std::optional<PathState> resume_from)
    : impl_(std::make_unique<Impl>(config, now, resume_from)) {}

Ensemble::~Ensemble() = default;

void Ensemble::add_member(MemberId id, ContentClass cls, Instant now) {
  Impl& m = *impl_;
  if (id == kControlMember || m.members.contains(id)) return;
  if (!m.coupled()) {
    m.new_member_domain(id, now);
    m.members.emplace(id, cls);
    m.scheduler.add(id, cls);
    return;
  }
  const bool others_sending = !m.members.empty() && !m.domain_for(id).sent.empty();
  m.members.emplace(id, cls);
  m.scheduler.add(id, cls);
  if (!others_sending) return;
  std::uint64_t total_tickets = 0;
  for (const auto& [member, c] : m.members) total_tickets += m.scheduler.tickets(member);
  const ByteCount share =
      scale(m.domain_for(id).law->cwnd_bytes(), m.scheduler.tickets(id), total_tickets);
  JoinState join;
  join.mode = m.config.join;
  join.pacer = Pacer(m.config.pacing.max_burst_packets);
  if (join.mode == JoinMode::ack_clocked) {
    join.clocked_packets = static_cast<std::uint32_t>(share / m.config.max_datagram_bytes);
    if (join.clocked_packets == 0) return;
  } else {
    join.allowance_bytes = share;
    if (share == 0) return;
  }
  m.joins[id] = join;
}

void Ensemble::remove_member(MemberId id, Instant /*now*/) {
  Impl& m = *impl_;
  if (m.members.erase(id) == 0) return;
  m.scheduler.remove(id);
  m.backlog.erase(id);
  m.joins.erase(id);
  m.member_recovery.erase(id);
  if (!m.coupled()) {
    auto it = m.domains.find(id);
    if (it != m.domains.end()) it->second->retired = true;
    m.drop_retired_domains();
  }
}

void Ensemble::set_class(MemberId id, ContentClass cls) {
  auto it = impl_->members.find(id);
  if (it == impl_->members.end()) return;
  it->second = cls;
  impl_->scheduler.set_class(id, cls);
}

void Ensemble::set_scheduler_config(const SchedulerConfig& config) {
  impl_->config.scheduler = config;
  impl_->scheduler.set_config(config);
}

std::size_t Ensemble::member_count() const { return impl_->members.size(); }

bool Ensemble::can_send(MemberId id, Instant now) const {
  const auto g = impl_->gate(id, now);
  return g.window_open && !g.paced_until;
}

void Ensemble::set_backlogged(MemberId id, bool backlogged, Instant /*now*/) {
  Impl& m = *impl_;
  if (backlogged && m.members.contains(id)) {
    m.backlog.insert(id);
  } else {
    m.backlog.erase(id);
  }
}

bool Ensemble::backlogged(MemberId id) const { return impl_->backlog.contains(id); }

std::optional<MemberId> Ensemble::pick_sender(Instant now) {
  const Impl& m = *impl_;
  auto eligible = [&](MemberId id) {
    return m.backlog.contains(id) && can_send(id, now);
  };
  // Seed 003 Algorithm 1: a slot freed by the others' acks goes to the joiner.
  bool any_clocked = false;
  for (const auto& [id, j] : m.joins) any_clocked |= j.clocked_packets > 0;
  if (any_clocked) {
    // Under preempt (E-TCP HTML-pre) the joiner's slot never overtakes an
    // eligible member of the preempting class: a join shares the window, it
    // does not buy precedence.
    const SchedulerConfig& sc = m.config.scheduler;
    const bool preempting_ready =
        sc.policy == SchedulingPolicy::preempt &&
        std::any_of(m.members.begin(), m.members.end(), [&](const auto& e) {
          return e.second == sc.preempt_class && eligible(e.first);
        });
    auto joiner = m.scheduler.pick([&](MemberId id) {
      auto it = m.joins.find(id);
      return it != m.joins.end() && it->second.clocked_packets > 0 && eligible(id) &&
             (!preempting_ready || m.members.at(id) == sc.preempt_class);
    });
    if (joiner) return joiner;
  }
  return m.scheduler.pick(eligible);
}

void Ensemble::on_packet_sent(const SentPacket& packet) {
  Impl& m = *impl_;
  ++m.packets_sent;
  if (!packet.ack_eliciting) return;
  if (m.largest_sent && packet.number <= *m.largest_sent) return;  // numbers must increase
  m.largest_sent = packet.number;
  const Instant now = packet.sent_time;
  Domain& d = m.domain_for(packet.member);

  if (d.sent.empty()) {
    if (m.idle_restart_due(d, now)) {
      // E-TCP: restart after idle with the old window, but paced.
      d.paced_budget_bytes = d.law->cwnd_bytes();
      d.pacer.reset();
    }
    d.rto_armed_at = now;  // RFC 6298 5.1
  }
  d.sent.on_sent(packet);
  d.recovery_send_pending = false;
  if (d.prr) d.prr->on_sent(packet.bytes);
  if (d.hystart) d.hystart->on_packet_sent(packet.number);

  if (m.resume_active(d) && m.resume->sending_unvalidated()) {
    d.pacer.on_sent(now, m.resume_interval());
    m.resume->on_sent(packet.number, packet.bytes);
  } else if (d.paced_budget_bytes > 0) {
    d.pacer.on_sent(now, m.efcm_interval(d));
    d.paced_budget_bytes -= std::min(d.paced_budget_bytes, packet.bytes);
  }

  if (auto it = m.joins.find(packet.member); it != m.joins.end()) {
    JoinState& j = it->second;
    if (j.mode == JoinMode::ack_clocked) {
      --j.clocked_packets;
    } else {
      if (j.mode == JoinMode::paced) j.pacer.on_sent(now, m.efcm_interval(d));
      j.allowance_bytes -= std::min(j.allowance_bytes, packet.bytes);
    }
    if (j.clocked_packets == 0 && j.allowance_bytes == 0) m.joins.erase(it);
  }
  if (m.scheduler.contains(packet.member)) m.scheduler.on_sent(packet.member);
}

bool Ensemble::low_priority() const {
  const Impl& m = *impl_;
  return m.config.resume.mark_low_priority && m.resume && m.resume->sending_unvalidated();
}

const AckOutcome& Ensemble::on_ack(std::span<const AckedRange> ranges, Duration ack_delay,
                                   Instant now) {
  Impl& m = *impl_;
  AckOutcome& out = m.ack_out;
  out.acked.clear();
  out.lost.clear();
  for (auto& [id, d] : m.domains) m.process_ack(*d, ranges, ack_delay, now, out);
  auto by_number = [](const SentPacket& a, const SentPacket& b) { return a.number < b.number; };
  std::sort(out.acked.begin(), out.acked.end(), by_number);
  std::sort(out.lost.begin(), out.lost.end(), by_number);
  m.drop_retired_domains();
  return out;
}

std::optional<Instant> Ensemble::next_timeout() const {
  std::optional<Instant> earliest;
  auto consider = [&](Instant t) { earliest = earliest ? std::min(*earliest, t) : t; };
  for (const auto& [id, d] : impl_->domains) {
    if (d->sent.empty()) continue;
    if (auto t = d->sent.loss_time()) consider(*t);
    if (d->rto_armed_at) consider(*d->rto_armed_at + d->rtt.rto());
  }
  return earliest;
}

const TimeoutOutcome& Ensemble::on_timeout(Instant now) {
  Impl& m = *impl_;
  TimeoutOutcome& out = m.timeout_out;
  out.lost.clear();
  out.rto_fired = false;
  for (auto& [id, dp] : m.domains) {
    Domain& d = *dp;
    if (d.sent.empty()) continue;
    if (auto t = d.sent.loss_time(); t && *t <= now) {
      const ByteCount prior_flight = d.sent.bytes_in_flight();
      auto lost = d.sent.detect_lost(now, std::max(d.rtt.srtt(), d.rtt.latest_rtt()));
      m.on_lost(d, lost, now, prior_flight);
      m.end_prr_if_recovered(d, /*largest_acked_in_event=*/0);  // no ack in a timeout
      m.update_timer(d, now, false);
      append(out.lost, std::move(lost));
    } else if (d.rto_armed_at && *d.rto_armed_at + d.rtt.rto() <= now) {
      m.fire_rto(d, now, out);
    }
  }
  std::sort(out.lost.begin(), out.lost.end(),
            [](const SentPacket& a, const SentPacket& b) { return a.number < b.number; });
  m.drop_retired_domains();
  return out;
}

std::optional<Instant> Ensemble::next_pacing_release(Instant now) const {
  const Impl& m = *impl_;
  std::optional<Instant> earliest;
  auto consider = [&](MemberId id) {
    const auto g = m.gate(id, now);
    if (g.window_open && g.paced_until) {
      earliest = earliest ? std::min(*earliest, *g.paced_until) : *g.paced_until;
    }
  };
  for (const auto& [id, cls] : m.members) consider(id);
  consider(kControlMember);
  return earliest;
}

PathState Ensemble::snapshot(Instant now) const {
  const Impl& m = *impl_;
  const Domain& d = m.reference_domain();
  PathState s;
  s.cwnd_bytes = d.law->cwnd_bytes();
  s.ssthresh_bytes = d.law->ssthresh_bytes();
  if (m.resume_active(d) && m.resumed_from) {
    // An unvalidated jump is a claim, not knowledge: keep what we resumed from.
    s.cwnd_bytes = m.resumed_from->cwnd_bytes;
    s.ssthresh_bytes = m.resumed_from->ssthresh_bytes;
  }
  s.srtt = d.rtt.srtt();
  s.rttvar = d.rtt.rttvar();
  s.min_rtt = d.rtt.min_rtt();
  s.max_datagram_bytes = m.config.max_datagram_bytes;
  s.saved_at = now;
  return s;
}

EnsembleStats Ensemble::stats() const {
  const Impl& m = *impl_;
  EnsembleStats s;
  if (m.coupled()) {
    const Domain& d = *m.domains.at(kSharedDomain);
    s.cwnd_bytes = d.law->cwnd_bytes();
    s.ssthresh_bytes = d.law->ssthresh_bytes();
  } else {
    for (const auto& [id, d] : m.domains) {
      if (id == kSharedDomain || d->retired) continue;
      s.cwnd_bytes = saturating_add(s.cwnd_bytes, d->law->cwnd_bytes());
      s.ssthresh_bytes = saturating_add(s.ssthresh_bytes, d->law->ssthresh_bytes());
    }
  }
  for (const auto& [id, d] : m.domains) s.bytes_in_flight += d->sent.bytes_in_flight();
  const Domain& ref = m.reference_domain();
  s.srtt = ref.rtt.srtt();
  s.rttvar = ref.rtt.rttvar();
  s.min_rtt = ref.rtt.min_rtt();
  s.packets_sent = m.packets_sent;
  s.packets_lost = m.packets_lost;
  s.loss_rounds = m.loss_rounds;
  s.rto_count = m.rto_count;
  s.members = m.members.size();
  s.resumed = m.resumed_from.has_value();
  return s;
}

ByteCount Ensemble::member_cwnd_bytes(MemberId id) const {
  const Impl& m = *impl_;
  if (!m.members.contains(id)) return 0;
  if (!m.coupled()) return m.domain_for(id).law->cwnd_bytes();
  std::uint64_t total_tickets = 0;
  for (const auto& [member, cls] : m.members) total_tickets += m.scheduler.tickets(member);
  return scale(m.domain_for(id).law->cwnd_bytes(), m.scheduler.tickets(id), total_tickets);
}

const EnsembleConfig& Ensemble::config() const { return impl_->config; }

}  // namespace egw::congestion
