// The Ensemble: glue between the window law, RTT estimator, outstanding-packet
// list, pacer, stride scheduler, joins and careful resume. The model is in
// ensemble.h; the pieces are in their own headers. What lives here:
//
//  - Domains. A domain is one congestion state (law + RTT + outstanding list
//    + RTO timer + pacer + careful resume). Coupled modes have one shared
//    domain for every member; `none` has one per member plus the shared one
//    (min_window_packets) for kControlMember and packets of unknown members.
//  - Members. Each knows whether the tunnel says it is backlogged and how
//    many bytes it has in flight; `n_flows` counts the active ones (either)
//    as its n, so idle streams add no aggressiveness. Only backlogged members
//    are in the scheduler's ready heap: per-packet work does not depend on
//    how many streams are open.
//  - Window validation (RFC 7661, RFC 9002 7.8, quiche IsCwndLimited): an ack
//    grows the window only if the flight before it was within
//    kCwndLimitedSlackPackets of cwnd (or, in slow start, above half of it).
//  - Loss rounds (RFC 6582 3.2 "recover", RFC 9002 7.3.2): on a congestion
//    event the domain remembers the largest packet number sent so far; losses
//    of packets at or below it belong to the same round and do not decrease
//    again, and their acks do not grow the window. Within one ack, losses are
//    handled before acks (RFC 9002 A.7), so an ack that reveals a loss never
//    grows the window first. With send_one_on_recovery the next packet may
//    leave whatever the reduced window says (7.3.2).
//  - PRR (Recovery::prr, RFC 6937): from the decrease until recovery ends the
//    domain's Prr, not cwnd - flight, says whether a packet may leave.
//  - HyStart++ (SlowStart::hystart_pp): while ssthresh is unset, each ack's
//    growable bytes pass through the domain's HyStart.
//  - RTO (RFC 6298 5.1-5.7) per domain: armed when a packet leaves an idle
//    domain, restarted by every ack of new data (from any member of the
//    domain), off when nothing is outstanding.
//  - Idle. A domain that sends again after more than one RTO with nothing in
//    flight restarts its window: coupled, by careful resume from its own
//    state (initial window, RTT check, then at most half the old window,
//    paced and marked low priority, validated by one RTT), or from the
//    initial window when the idle time exceeds resume.max_idle; `none` (the
//    uncoupled TCP baseline) by RFC 5681 4.1's restart window. Shorter idle
//    periods are removed from CUBIC's clock.
//  - Joins (coupled, when a member first becomes backlogged while others
//    have data in flight): share = cwnd * tickets / active tickets (`n_flows`
//    first adds the newcomer's initial window, EFCM 2.4.1). ack_clocked (seed
//    003 Algorithm 1): each packet of the others that is acked releases one
//    packet of the share (at most a burst of max_burst_packets), the others'
//    window increase is held meanwhile in congestion avoidance (slow start
//    keeps its growth slot, see process_ack), and a timer releases one packet per
//    SRTT / share when the others' acks are too few; room in the window
//    changes nothing. immediate / paced: an allowance of `share` bytes beyond
//    the window (at once / paced), the baselines. A congestion event or RTO
//    ends every join.
#include "congestion/ensemble.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "common/ring_deque.h"
#include "congestion/careful_resume.h"
#include "congestion/hystart.h"
#include "congestion/pacer.h"
#include "congestion/prr.h"
#include "congestion/recent_max_rtt.h"
#include "congestion/rtt_estimator.h"
#include "congestion/sent_packets.h"
#include "congestion/window_law.h"

namespace egw::congestion {

namespace {

// A sender with fewer than this many packets of room left in the window is
// window-limited (quiche kMaxBurstBytes: an ack clock releases a few packets
// at a time, so "flight == cwnd" is rarely exact).
constexpr ByteCount kCwndLimitedSlackPackets = 3;
// TCP Veno's beta: below this backlog (packets queued by our window) a loss
// is taken as random, not as a queue overflow.
constexpr double kVenoBacklogPackets = 3.0;

ByteCount saturating_add(ByteCount a, ByteCount b) {
  return a > kInfiniteSsthresh - b ? kInfiniteSsthresh : a + b;
}

// a * num / den without overflowing for realistic windows.
ByteCount scale(ByteCount a, std::uint64_t num, std::uint64_t den) {
  if (den == 0) return 0;
  return a / den * num + a % den * num / den;
}

// Undoing a decrease that reordering caused (Linux's undo on DSACK, RFC
// 9002's "spurious" losses): the window before the latest loss round and the
// packets that round declared lost. If every one of them is acked after all,
// the losses were reordering, not congestion, and the decrease is undone.
struct SpuriousLossUndo {
  static constexpr std::size_t kMaxTracked = 64;  // larger rounds are not undone
  ByteCount cwnd_before = 0;
  ByteCount ssthresh_before = 0;
  RingDeque<PacketNumber> lost;  // declared lost in the round, not acked yet
  bool overflowed = false;
};

// A domain's window law parameters, in datagrams of the current size.
WindowLawParams law_params(const EnsembleConfig& config, std::uint32_t initial_window_packets) {
  const ByteCount mss = config.max_datagram_bytes;
  return WindowLawParams{mss, initial_window_packets * mss, config.min_window_packets * mss};
}

struct Domain {
  Domain(const EnsembleConfig& config, std::uint32_t initial_window_packets, Instant now)
      : law(make_window_law(config.law, law_params(config, initial_window_packets))),
        rtt(RttConfig{config.initial_rtt, config.min_rto, config.max_rto, ms(1)}),
        sent(LossDetectionConfig{config.packet_threshold, config.time_threshold, ms(1)}),
        pacer(config.pacing.max_burst_packets),
        initial_window_packets(initial_window_packets),
        initial_window_bytes(initial_window_packets * config.max_datagram_bytes),
        idle_since(now) {
    // Slow start is never paced here, so L = 8 (RFC 9406 4.2).
    if (config.slow_start == SlowStart::hystart_pp) hystart.emplace(/*paced=*/false);
  }

  bool resume_unvalidated() const { return resume && resume->unvalidated(); }

  std::unique_ptr<WindowLaw> law;
  RttEstimator rtt;
  RecentMaxRtt recent_max_rtt;  // random_loss: veno
  SentPackets sent;
  Pacer pacer;  // paces the unvalidated part of a careful resume
  std::uint32_t initial_window_packets;
  ByteCount initial_window_bytes;  // also the restart window after idle
  std::optional<PacketNumber> recovery_point;  // RFC 6582 "recover"
  std::optional<HyStart> hystart;              // SlowStart::hystart_pp
  bool recovery_send_pending = false;          // send_one_on_recovery: one packet may go
  std::optional<Prr> prr;                      // Recovery::prr, while in recovery
  std::optional<CarefulResume> resume;         // from the cache or after idle
  std::optional<SpuriousLossUndo> undo;        // the latest loss round, while undoable
  std::optional<Instant> rto_armed_at;  // the PTO's and the RTO's start
  std::uint32_t probes_unanswered = 0;  // tail loss probes since the last ack of new data
  bool probe_pending = false;           // one packet may go beyond the window
  Instant idle_since;    // when the last outstanding packet left
  bool retired = false;  // `none`: its member was removed
};

struct MemberState {
  ContentClass cls = ContentClass::bulk;
  bool backlogged = false;
  bool started = false;  // has been backlogged once: joined
  bool active = false;   // counted in active_members
  std::uint32_t active_tickets = 0;  // its tickets when it became active
  ByteCount bytes_in_flight = 0;
};

struct JoinState {
  JoinMode mode = JoinMode::ack_clocked;
  // ack_clocked: packets of the share not sent yet, packets released by the
  // others' acks and not sent yet, and the timer fallback.
  std::uint32_t packets_left = 0;
  std::uint32_t credit = 0;
  Duration release_interval{0};
  Instant last_release{};
  // immediate / paced: bytes the joiner may still send beyond the window.
  ByteCount allowance_bytes = 0;
  Pacer pacer;

  bool clocked() const { return mode == JoinMode::ack_clocked; }
  bool timer_due(Instant now) const { return now >= last_release + release_interval; }
};

}  // namespace

struct Ensemble::Impl {
  Impl(const EnsembleConfig& c, Instant now, std::optional<PathState> resume_from);

  bool coupled() const { return config.coupling != CouplingMode::none; }
  std::uint32_t law_flows() const {
    if (config.coupling != CouplingMode::n_flows) return 1;
    return static_cast<std::uint32_t>(std::max<std::size_t>(active_members, 1));
  }
  Domain& domain_for(MemberId id) {
    return const_cast<Domain&>(std::as_const(*this).domain_for(id));
  }
  const Domain& domain_for(MemberId id) const {
    if (coupled()) return *shared;
    auto it = member_domains.find(id);
    return it != member_domains.end() ? *it->second : *shared;
  }
  template <typename F>
  void for_each_domain(F&& f) {
    f(*shared);
    for (auto& [id, d] : member_domains) f(*d);
  }
  Domain& new_member_domain(MemberId id, Instant now);
  void set_max_datagram_bytes(ByteCount bytes);
  const JoinState* join_of(MemberId id) const {
    if (joins.empty()) return nullptr;
    auto it = joins.find(id);
    return it == joins.end() ? nullptr : &it->second;
  }
  bool clocked_join_running() const {
    return std::any_of(joins.begin(), joins.end(), [](const auto& e) { return e.second.clocked(); });
  }

  // Window validation: was the flight before an ack close enough to cwnd?
  bool cwnd_limited(const Domain& d, ByteCount prior_flight) const;
  // TCP Veno's test at a new loss round (`random_loss: veno`).
  bool looks_random(const Domain& d, ByteCount prior_flight) const;
  bool restart_due(const Domain& d, Instant now) const;
  void restart_after_idle(Domain& d, Instant now);
  Duration resume_interval(const Domain& d) const {
    return burst_interval_for(d.resume->jump_bytes(), d.resume->pacing_period(),
                              config.pacing.max_burst_packets, config.max_datagram_bytes);
  }
  Duration efcm_interval(const Domain& d) const {
    return efcm_burst_interval(config.pacing, d.rtt.srtt(), d.law->cwnd_bytes(),
                               config.max_datagram_bytes);
  }
  // Why `id` may not send now: the window (window_open false), or pacing /
  // a join's release timer until paced_until.
  struct Gate {
    bool window_open = false;
    std::optional<Instant> paced_until;
    bool open() const { return window_open && !paced_until; }
  };
  Gate gate(const Domain& d, const JoinState* join, Instant now) const;
  Gate gate(MemberId id, Instant now) const {
    return gate(domain_for(id), coupled() ? join_of(id) : nullptr, now);
  }

  void update_active(MemberId id, MemberState& m);
  void left_flight(const SentPacket& p);
  void on_join(MemberId id, Instant now);
  void release_join_credit(const std::vector<SentPacket>& acked, Instant now);
  void process_ack(Domain& d, std::span<const AckedRange> ranges, Duration ack_delay,
                   Instant now, AckOutcome& out);
  void on_lost(Domain& d, const std::vector<SentPacket>& lost, std::size_t first, Instant now,
               ByteCount prior_flight_bytes);
  void end_prr_if_recovered(Domain& d, PacketNumber largest_acked_in_event);
  void remember_lost(Domain& d, const std::vector<SentPacket>& lost, std::size_t first);
  void undo_if_spurious(Domain& d, std::span<const AckedRange> ranges);
  void fire_rto(Domain& d, Instant now, TimeoutOutcome& out);
  void fire_probe(Domain& d, Instant now, TimeoutOutcome& out);
  // Does the domain's timer send a tail probe (else it is the RTO)? Not
  // while a careful resume is unvalidated: silence then says the jump was
  // dropped (its packets are marked LE), and the RTO's fallback is the
  // answer (TCP fast start 3.4.4; the careful-resume draft's safe retreat).
  bool probe_next(const Domain& d) const {
    return d.probes_unanswered < config.tail_probes && !d.resume_unvalidated();
  }
  // How long after rto_armed_at the timer fires: a PTO while tail probes
  // are left, then the RTO.
  Duration timer_interval(const Domain& d) const;
  void update_timer(Domain& d, Instant now, bool new_data_acked);
  void drop_retired_domains();
  const Domain& reference_domain() const;
  // `none`: the member domains an ACK's ranges touch, from sent_index, so an
  // ACK costs the packets it covers, not the number of domains.
  void ack_touched_member_domains(std::span<const AckedRange> ranges, Duration ack_delay,
                                  Instant now, AckOutcome& out);
  void prune_sent_index();

  EnsembleConfig config;
  StrideScheduler scheduler;
  std::unordered_map<MemberId, MemberState> members;
  std::size_t active_members = 0;
  // Sum of active members' tickets, each counted as it was when the member
  // became active (a join share's denominator; exact enough, and O(1)).
  std::uint64_t active_tickets = 0;
  // Bytes in flight of current members (stream data): control packets (a
  // keep-alive PING, MAX_DATA) and removed members' tails are not "others
  // sending" that a newcomer must join behind.
  ByteCount members_bytes_in_flight = 0;
  std::unique_ptr<Domain> shared;
  std::map<MemberId, std::unique_ptr<Domain>> member_domains;  // `none` only
  std::size_t retired_domains = 0;
  std::vector<MemberId> retired_ids;  // `none`: retired domains not dropped yet
  // `none`: (number, member) of every ack-eliciting packet sent, ascending,
  // from the oldest one still outstanding or remembered for a spurious-loss
  // undo; and the members an ACK touches (scratch).
  RingDeque<std::pair<PacketNumber, MemberId>> sent_index;
  std::vector<MemberId> ack_members;
  std::uint64_t ack_domain_visits = 0;
  // `none`: lost numbers a domain's undo record waits for, and its member.
  std::map<PacketNumber, MemberId> undo_index;
  void forget_undo(Domain& d) {
    if (coupled() || !d.undo) return;
    for (std::size_t i = 0; i < d.undo->lost.size(); ++i) undo_index.erase(d.undo->lost[i]);
  }
  std::map<MemberId, JoinState> joins;  // a handful at a time
  std::optional<PathState> resumed_from;
  std::optional<PacketNumber> largest_sent;
  std::uint64_t packets_sent = 0;
  std::uint64_t packets_lost = 0;
  std::uint64_t loss_rounds = 0;
  std::uint64_t rto_count = 0;
  std::uint64_t tail_probes = 0;
  std::uint64_t random_loss_rounds = 0;  // of loss_rounds, Veno's lighter cuts
  std::uint64_t spurious_rounds = 0;  // decreases undone
  // `n_flows`: each member's own RFC 6582 "recover" point.
  std::unordered_map<MemberId, PacketNumber> member_recovery;
  // Reused so that acks and timeouts allocate nothing in steady state.
  AckOutcome ack_out;
  TimeoutOutcome timeout_out;
  SentPackets::AckResult acked_scratch;
};

Ensemble::Impl::Impl(const EnsembleConfig& c, Instant now, std::optional<PathState> resume_from)
    : config(c), scheduler(c.scheduler) {
  config.max_datagram_bytes = std::max<ByteCount>(config.max_datagram_bytes, 1);
  config.initial_window_packets = std::max<std::uint32_t>(config.initial_window_packets, 1);
  config.min_window_packets = std::max<std::uint32_t>(config.min_window_packets, 1);
  const std::uint32_t first_window =
      coupled() ? config.initial_window_packets : config.min_window_packets;
  shared = std::make_unique<Domain>(config, first_window, now);
  // Room for a large ack up front, so steady acks never grow these.
  for (auto* v : {&ack_out.acked, &ack_out.lost, &timeout_out.lost, &acked_scratch.acked}) {
    v->reserve(1024);
  }
  timeout_out.probes.reserve(64);

  if (!resume_from || !config.resume.enabled || resume_from->srtt <= Duration{0}) return;
  resumed_from = *resume_from;
  if (!coupled()) return;  // `none`: member domains take only the RTT (new_member_domain)
  shared->resume.emplace(*resume_from, shared->initial_window_bytes,
                         config.resume.rtt_check_first);
  if (!config.resume.rtt_check_first) {
    // TCP fast start: the saved RTT is trusted at once (its RTO included).
    shared->rtt.seed(resume_from->srtt, resume_from->rttvar, resume_from->min_rtt);
    if (shared->resume->unvalidated()) {
      shared->law->set_state(shared->resume->jump_bytes(), kInfiniteSsthresh);
    }
  }
  // With the RTT check the estimator starts fresh (RFC 6298 2.1): the saved
  // RTT is only compared with the first sample, so a path that got slower
  // meanwhile cannot cause spurious timeouts on the old, short RTO.
  if (!shared->resume->reconnaissance() && !shared->resume->unvalidated()) shared->resume.reset();
}

Domain& Ensemble::Impl::new_member_domain(MemberId id, Instant now) {
  auto it = member_domains.find(id);
  if (it != member_domains.end()) {
    if (it->second->retired) --retired_domains;
    it->second->retired = false;
    return *it->second;
  }
  auto d = std::make_unique<Domain>(config, config.initial_window_packets, now);
  if (resumed_from) d->rtt.seed(resumed_from->srtt, resumed_from->rttvar, resumed_from->min_rtt);
  return *member_domains.emplace(id, std::move(d)).first->second;
}

void Ensemble::Impl::set_max_datagram_bytes(ByteCount bytes) {
  bytes = std::max<ByteCount>(bytes, 1);
  if (bytes == config.max_datagram_bytes) return;
  // Everything that reads config.max_datagram_bytes at use time (gates,
  // pacing, joins, window validation, PRR, HyStart) follows from here.
  config.max_datagram_bytes = bytes;
  for_each_domain([&](Domain& d) {
    // RFC 9002 7.2: "If the maximum datagram size changes during the
    // connection, the initial congestion window SHOULD be recalculated with
    // the new size."
    const ByteCount old_initial = d.initial_window_bytes;
    d.initial_window_bytes = d.initial_window_packets * bytes;
    d.law->set_params(law_params(config, d.initial_window_packets));
    if (d.resume) d.resume->set_initial_window_bytes(d.initial_window_bytes);
    // A window nothing has been sent on yet is no measurement: it is simply
    // the initial window, so it becomes the new one.
    if (!d.sent.largest_sent() && d.law->cwnd_bytes() == old_initial) {
      d.law->set_state(d.initial_window_bytes, d.law->ssthresh_bytes());
    }
  });
}

bool Ensemble::Impl::cwnd_limited(const Domain& d, ByteCount prior_flight) const {
  const ByteCount cwnd = d.law->cwnd_bytes();
  if (prior_flight + kCwndLimitedSlackPackets * config.max_datagram_bytes >= cwnd) return true;
  // Slow start doubles per RTT: a sender using more than half is using it.
  return d.law->in_slow_start() && prior_flight > cwnd / 2;
}

bool Ensemble::Impl::looks_random(const Domain& d, ByteCount prior_flight) const {
  if (config.random_loss != RandomLoss::veno || !d.rtt.has_sample()) return false;
  // The largest RTT of the last round or two, not the last ack's: a sender
  // held by flow control or the application sends in bursts, and the loss
  // at a burst's tail is often detected by acks of the next burst, which
  // found the queue drained (recent_max_rtt.h).
  // (It holds the latest sample too; srtt covers a state seeded from the cache.)
  const Duration rtt = std::max(d.rtt.srtt(), d.recent_max_rtt.get());
  const Duration base = d.rtt.min_rtt();
  if (rtt <= Duration{0} || base <= Duration{0}) return false;
  // Veno's N = (Expected - Actual) * BaseRTT = window * (RTT - BaseRTT) / RTT,
  // in packets; beta = 3. The window is what was in flight: below cwnd when
  // the sender is not window-limited, and only that can be queued. A stale
  // min RTT (a longer route) overestimates N: the safe side, a full cut.
  const ByteCount window = std::min(d.law->cwnd_bytes(), prior_flight);
  const double backlog_packets = static_cast<double>(window) * to_seconds(rtt - base) / to_seconds(rtt) /
                                 static_cast<double>(config.max_datagram_bytes);
  return backlog_packets < kVenoBacklogPackets;
}

bool Ensemble::Impl::restart_due(const Domain& d, Instant now) const {
  return d.sent.empty() && !d.resume && d.rtt.srtt() > Duration{0} &&
         now - d.idle_since > d.rtt.rto() && d.law->cwnd_bytes() > d.initial_window_bytes;
}

void Ensemble::Impl::restart_after_idle(Domain& d, Instant now) {
  const ByteCount ssthresh = d.law->ssthresh_bytes();
  const bool resumable = coupled() && config.resume.enabled &&
                         now - d.idle_since <= config.resume.max_idle;
  if (!resumable) {
    // RFC 5681 4.1: restart window = min(IW, cwnd); ssthresh remembers.
    d.law->set_state(d.initial_window_bytes, ssthresh);
    return;
  }
  const PathState saved{d.law->cwnd_bytes(), ssthresh,          d.rtt.srtt(), d.rtt.rttvar(),
                        d.rtt.min_rtt(),     config.max_datagram_bytes, d.idle_since};
  d.resume.emplace(saved, d.initial_window_bytes, config.resume.rtt_check_first);
  d.law->set_state(d.resume->unvalidated() ? d.resume->jump_bytes() : d.initial_window_bytes,
                   d.resume->unvalidated() ? kInfiniteSsthresh : ssthresh);
  if (!d.resume->reconnaissance() && !d.resume->unvalidated()) d.resume.reset();
  d.pacer.reset();
}

Ensemble::Impl::Gate Ensemble::Impl::gate(const Domain& d, const JoinState* join,
                                          Instant now) const {
  Gate g;
  const ByteCount flight = d.sent.bytes_in_flight();
  // A domain about to restart after idle is judged by the window it restarts with.
  const ByteCount limit = restart_due(d, now) ? d.initial_window_bytes : d.law->cwnd_bytes();
  // immediate / paced joiners may send what is left of their share whatever
  // the window says.
  const bool allowance = join && !join->clocked() && join->allowance_bytes > 0;
  const bool window = d.prr ? d.prr->may_send() : flight + config.max_datagram_bytes <= limit;
  g.window_open = allowance || window || d.recovery_send_pending || d.probe_pending;
  if (!g.window_open || d.probe_pending) return g;  // a probe is not held either

  auto hold = [&](Instant release) {
    if (release > now) g.paced_until = g.paced_until ? std::max(*g.paced_until, release) : release;
  };
  if (d.resume && d.resume->is_extra(flight, config.max_datagram_bytes)) {
    hold(d.pacer.next_release(now, resume_interval(d)));  // beyond the ACK clock
  }
  if (join && join->clocked() && join->credit == 0) {
    hold(join->last_release + join->release_interval);  // the timer fallback
  }
  if (join && join->mode == JoinMode::paced && join->allowance_bytes > 0) {
    hold(join->pacer.next_release(now, efcm_interval(d)));
  }
  return g;
}

void Ensemble::Impl::update_active(MemberId id, MemberState& m) {
  const bool active = m.backlogged || m.bytes_in_flight > 0;
  if (active == m.active) return;
  m.active = active;
  if (active) {
    ++active_members;
    m.active_tickets = scheduler.tickets(id);
    active_tickets += m.active_tickets;
  } else {
    --active_members;
    active_tickets -= m.active_tickets;
  }
}

void Ensemble::Impl::left_flight(const SentPacket& p) {
  auto it = members.find(p.member);
  if (it == members.end()) return;  // removed since, or the control member
  MemberState& m = it->second;
  const ByteCount left = std::min(m.bytes_in_flight, p.bytes);
  m.bytes_in_flight -= left;
  members_bytes_in_flight -= std::min(members_bytes_in_flight, left);
  update_active(p.member, m);
}

void Ensemble::Impl::on_join(MemberId id, Instant now) {
  if (!coupled()) return;
  Domain& d = *shared;
  // Nobody else is sending stream data: the newcomer just starts with the
  // window (a PING or MAX_DATA in flight is no flow to join behind).
  if (members_bytes_in_flight <= members.at(id).bytes_in_flight) return;
  if (config.coupling == CouplingMode::n_flows) {
    // EFCM 2.4.1: the newcomer brings its initial window to the aggregate.
    const ByteCount ssthresh = d.law->ssthresh_bytes();
    d.law->set_state(saturating_add(d.law->cwnd_bytes(), d.initial_window_bytes),
                     saturating_add(ssthresh, d.initial_window_bytes));
  }
  const ByteCount share = scale(d.law->cwnd_bytes(), scheduler.tickets(id), active_tickets);
  JoinState join;
  join.mode = config.join;
  join.pacer = Pacer(config.pacing.max_burst_packets);
  if (join.clocked()) {
    join.packets_left = static_cast<std::uint32_t>(share / config.max_datagram_bytes);
    if (join.packets_left == 0) return;
    const Duration srtt = d.rtt.srtt() > Duration{0} ? d.rtt.srtt() : config.initial_rtt;
    join.release_interval = std::max(us(1), srtt / join.packets_left);
    join.last_release = now;
  } else {
    join.allowance_bytes = share;
    if (share == 0) return;
  }
  joins[id] = join;
}

void Ensemble::Impl::release_join_credit(const std::vector<SentPacket>& acked, Instant now) {
  for (auto& [id, j] : joins) {
    if (!j.clocked()) continue;
    std::uint32_t others = 0;
    for (const SentPacket& p : acked) others += p.member != id ? 1 : 0;
    if (others == 0) continue;
    // Seed 003 Algorithm 1 with N = 1: one packet of the share per packet of
    // the others acked; never more than a pacing burst at once.
    j.credit = std::min({j.credit + others, j.packets_left, config.pacing.max_burst_packets});
    j.last_release = now;
  }
}

void Ensemble::Impl::update_timer(Domain& d, Instant now, bool new_data_acked) {
  if (d.sent.empty()) {
    if (d.rto_armed_at) d.idle_since = now;
    d.rto_armed_at.reset();
    d.probes_unanswered = 0;
    d.probe_pending = false;
    return;
  }
  // RFC 6298 5.3: restart on an ack of new data, from any member.
  if (new_data_acked || !d.rto_armed_at) d.rto_armed_at = now;
}

void Ensemble::Impl::end_prr_if_recovered(Domain& d, PacketNumber largest_acked_in_event) {
  if (!d.prr || !d.recovery_point) return;
  // RFC 9002 7.3.2: a packet sent after recovery began was acked; RFC 6582:
  // nothing sent before it is outstanding.
  const auto oldest = d.sent.smallest_outstanding();
  if (largest_acked_in_event > *d.recovery_point || !oldest || *oldest > *d.recovery_point) {
    d.prr.reset();  // cwnd = ssthresh already: the plain gate takes over
  }
}

void Ensemble::Impl::remember_lost(Domain& d, const std::vector<SentPacket>& lost,
                                   std::size_t first) {
  if (!d.undo || d.undo->overflowed) return;
  for (std::size_t i = first; i < lost.size(); ++i) {
    if (d.undo->lost.size() == SpuriousLossUndo::kMaxTracked) {
      forget_undo(d);
      d.undo->overflowed = true;
      return;
    }
    d.undo->lost.push_back(lost[i].number);
    if (!coupled()) undo_index[lost[i].number] = lost[i].member;
  }
}

void Ensemble::Impl::undo_if_spurious(Domain& d, std::span<const AckedRange> ranges) {
  if (!d.undo || d.undo->overflowed || d.undo->lost.empty()) return;
  RingDeque<PacketNumber>& lost = d.undo->lost;
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
    if (!coupled()) undo_index.erase(n);
    lost[i] = lost.back();
    lost.pop_back();
  }
  if (!lost.empty()) return;
  // Every packet the round declared lost arrived: reordering, not congestion.
  d.law->set_state(d.undo->cwnd_before, d.undo->ssthresh_before);
  d.undo.reset();
  d.prr.reset();
  d.recovery_send_pending = false;
  ++spurious_rounds;
}

void Ensemble::Impl::on_lost(Domain& d, const std::vector<SentPacket>& lost, std::size_t first,
                             Instant now, ByteCount prior_flight_bytes) {
  if (first == lost.size()) return;
  packets_lost += lost.size() - first;
  if (d.resume) {
    if (auto fallback = d.resume->on_lost()) {
      // Unvalidated: fall back without penalty: a fresh flow's window, no
      // loss round; the rest of the jump lost with it is in this round.
      d.law->set_state(fallback->cwnd_bytes, fallback->ssthresh_bytes);
      d.recovery_point = d.sent.largest_sent();
      d.resume.reset();
      return;
    }
    d.resume.reset();  // reconnaissance: the resume ends, normal recovery follows
  }
  const ByteCount cwnd_before = d.law->cwnd_bytes();
  const ByteCount ssthresh_before = d.law->ssthresh_bytes();
  std::uint32_t decreases = 0;
  if (config.coupling == CouplingMode::n_flows) {
    // EFCM 2.4.2: each of n flows halves its own window once per its own loss
    // round, so the aggregate shrinks by 1/(2n) once per member that lost a
    // packet sent after that member's last decrease.
    for (std::size_t i = first; i < lost.size(); ++i) {
      const SentPacket& p = lost[i];
      auto it = member_recovery.find(p.member);
      if (it != member_recovery.end() && p.number <= it->second) continue;
      member_recovery[p.member] = std::max(d.sent.largest_sent().value_or(0), p.number);
      ++decreases;
    }
  } else {
    const PacketNumber largest_lost = lost.back().number;
    if (!d.recovery_point || largest_lost > *d.recovery_point) decreases = 1;  // new loss round
  }
  if (decreases == 0) {
    remember_lost(d, lost, first);  // more losses of the round being undone
    return;
  }
  forget_undo(d);
  d.undo.emplace();
  d.undo->cwnd_before = cwnd_before;
  d.undo->ssthresh_before = ssthresh_before;
  remember_lost(d, lost, first);
  if (looks_random(d, prior_flight_bytes)) {
    d.law->on_random_loss_events(now, law_flows(), decreases);
    random_loss_rounds += decreases;
  } else {
    d.law->on_congestion_events(now, law_flows(), decreases);
  }
  loss_rounds += decreases;
  d.recovery_point = d.sent.largest_sent();
  if (d.hystart) d.hystart->on_congestion();
  d.recovery_send_pending = config.send_one_on_recovery;
  if (config.recovery == Recovery::prr) d.prr.emplace(d.law->ssthresh_bytes(), prior_flight_bytes);
  if (coupled()) joins.clear();  // shares were computed from the old window
}

void Ensemble::Impl::process_ack(Domain& d, std::span<const AckedRange> ranges,
                                 Duration ack_delay, Instant now, AckOutcome& out) {
  ++ack_domain_visits;
  const ByteCount prior_flight = d.sent.bytes_in_flight();  // RecoverFS if recovery starts
  SentPackets::AckResult& result = acked_scratch;
  result.acked.clear();
  result.rtt_sample.reset();
  undo_if_spurious(d, ranges);
  d.sent.on_ack(ranges, now, result);
  if (result.acked.empty()) return;
  if (result.rtt_sample) {
    d.rtt.on_sample(*result.rtt_sample, ack_delay);
    d.recent_max_rtt.on_sample(now, *result.rtt_sample, d.rtt.srtt());
  }
  d.rtt.reset_backoff();
  d.probes_unanswered = 0;
  d.probe_pending = false;  // acks flow again: the window decides
  const std::size_t first_lost = out.lost.size();
  d.sent.detect_lost(now, std::max(d.rtt.srtt(), d.rtt.latest_rtt()), out.lost);
  // RFC 9002 A.7: losses first, so an ack that reveals a loss starts the loss
  // round before any of its acks could grow the window.
  on_lost(d, out.lost, first_lost, now, prior_flight);

  ByteCount acked_bytes = 0;
  ByteCount growable_bytes = 0;  // acks of packets sent after recovery began
  for (const SentPacket& p : result.acked) {
    acked_bytes += p.bytes;
    if (!d.recovery_point || p.number > *d.recovery_point) growable_bytes += p.bytes;
    left_flight(p);
  }
  for (std::size_t i = first_lost; i < out.lost.size(); ++i) left_flight(out.lost[i]);
  // The window grows only when it was used (RFC 7661), not while a careful
  // resume is unvalidated, and, in congestion avoidance, not while a
  // joiner's share is being clocked out of the others' acks (seed 003: the
  // others hold their increase). In slow start the growth slot of each ack
  // stays: the aggregate then sends two packets per ack, the joiner's and
  // the growth, which is slow start's own pace, not a burst; holding it cost
  // every web page's ramp whenever an object joined (E-TCP frames page: HTML
  // 8.7 % slower than the uncoupled bundle with the hold, 4.8 % faster
  // without it).
  const bool hold = d.resume_unvalidated() || !cwnd_limited(d, prior_flight) ||
                    (coupled() && !d.law->in_slow_start() && clocked_join_running());
  if (coupled()) release_join_credit(result.acked, now);
  bool css_over = false;  // HyStart++ CSS ran CSS_ROUNDS: congestion avoidance
  if (!hold && d.hystart && d.hystart->phase() != HyStart::Phase::done &&
      d.law->ssthresh_bytes() == kInfiniteSsthresh) {
    growable_bytes = d.hystart->on_ack(growable_bytes, result.acked.back().number,
                                       result.rtt_sample, config.max_datagram_bytes);
    css_over = d.hystart->phase() == HyStart::Phase::done;
  }
  if (!hold && growable_bytes > 0) {
    d.law->on_ack(growable_bytes, RttInfo{d.rtt.latest_rtt(), d.rtt.srtt(), d.rtt.min_rtt()},
                  now, law_flows());
  }
  if (css_over) d.law->set_state(d.law->cwnd_bytes(), d.law->cwnd_bytes());  // ssthresh = cwnd
  // Careful resume: the first RTT sample of the busy period decides the jump,
  // from the window slow start reached with this ack (never below it).
  bool jumped = false;  // this ack's bytes validate nothing of the jump
  if (result.rtt_sample && d.resume && d.resume->reconnaissance()) {
    if (auto jump = d.resume->on_rtt_sample(*result.rtt_sample, d.law->cwnd_bytes())) {
      d.law->set_state(jump->cwnd_bytes, jump->ssthresh_bytes);
      d.pacer.reset();
      jumped = true;
    } else {
      d.resume.reset();
    }
  }
  const PacketNumber largest_acked = result.acked.back().number;
  end_prr_if_recovered(d, largest_acked);
  if (d.prr) {
    // DeliveredData: what this ack newly acknowledged (our acks are SACKs).
    d.prr->on_ack(acked_bytes, d.sent.bytes_in_flight(), config.max_datagram_bytes);
    end_prr_if_recovered(d, largest_acked);
  }
  if (d.resume_unvalidated() && !jumped) {
    if (auto validated = d.resume->on_acked(acked_bytes, d.sent.smallest_outstanding())) {
      d.law->set_state(validated->cwnd_bytes, validated->ssthresh_bytes);
      d.resume.reset();
    }
  }
  update_timer(d, now, /*new_data_acked=*/true);
  out.acked.insert(out.acked.end(), result.acked.begin(), result.acked.end());
}

void Ensemble::Impl::fire_rto(Domain& d, Instant now, TimeoutOutcome& out) {
  // RFC 6298 5.4-5.6 and RFC 5681 3.1: everything outstanding is presumed
  // lost, ssthresh from FlightSize, cwnd = 1 MSS, the timer backs off.
  const ByteCount flight = d.sent.bytes_in_flight();
  const PacketNumber recover = d.sent.largest_sent().value_or(0);
  const std::size_t first = out.lost.size();
  d.sent.take_all(out.lost);
  packets_lost += out.lost.size() - first;
  for (std::size_t i = first; i < out.lost.size(); ++i) left_flight(out.lost[i]);
  std::optional<CarefulResume::Outcome> fallback;
  if (d.resume) fallback = d.resume->on_lost();
  d.resume.reset();
  if (fallback) {
    // TCP fast start 3.4.4, "slow start without penalty": a timeout of the
    // unvalidated window says the saved state was stale, not that the path
    // is congested: a fresh flow's window, no backoff, and an RTT estimator
    // started afresh (the timer ran on the old, possibly stale srtt).
    d.law->set_state(fallback->cwnd_bytes, fallback->ssthresh_bytes);
    d.rtt = RttEstimator(RttConfig{config.initial_rtt, config.min_rto, config.max_rto, ms(1)});
  } else {
    d.law->on_rto(flight, law_flows());
    d.rtt.on_rto_expired();
    if (d.hystart) d.hystart->on_congestion();
  }
  ++rto_count;
  forget_undo(d);
  d.undo.reset();  // a timeout is no reordering
  d.recovery_point = recover;
  d.recovery_send_pending = false;
  d.prr.reset();  // RFC 6937 applies to fast recovery only; slow start after an RTO
  if (coupled()) joins.clear();
  update_timer(d, now, false);
  out.rto_fired = true;
}

void Ensemble::Impl::fire_probe(Domain& d, Instant now, TimeoutOutcome& out) {
  // RFC 9002 6.2.4: a probe, nothing declared lost, the window untouched;
  // the next PTO is twice as long (6.2.1) and starts now.
  ++d.probes_unanswered;
  ++tail_probes;
  d.probe_pending = true;
  d.rto_armed_at = now;
  out.probes.push_back(d.sent.newest());
}

Duration Ensemble::Impl::timer_interval(const Domain& d) const {
  const Duration rto = d.rtt.rto();
  if (!probe_next(d)) return rto;
  // Never later than the RTO would have fired (Linux TLP): the probe changes
  // the response to a silent tail, not when it comes. PTO and RTO differ by
  // max_ack_delay and the RTO's floor, so on most paths they coincide.
  return std::min(d.rtt.pto(config.max_ack_delay), rto) * (std::int64_t{1} << d.probes_unanswered);
}

void Ensemble::Impl::drop_retired_domains() {
  if (retired_domains == 0) return;
  for (std::size_t i = 0; i < retired_ids.size();) {
    auto it = member_domains.find(retired_ids[i]);
    if (it == member_domains.end() || !it->second->retired || it->second->sent.empty()) {
      if (it != member_domains.end() && it->second->retired) {
        forget_undo(*it->second);
        member_domains.erase(it);
        --retired_domains;
      }
      retired_ids[i] = retired_ids.back();
      retired_ids.pop_back();
    } else {
      ++i;
    }
  }
}

void Ensemble::Impl::ack_touched_member_domains(std::span<const AckedRange> ranges,
                                                Duration ack_delay, Instant now,
                                                AckOutcome& out) {
  ack_members.clear();
  for (const AckedRange& r : ranges) {
    if (r.smallest > r.largest) continue;
    std::size_t lo = 0;
    std::size_t hi = sent_index.size();
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (sent_index[mid].first < r.smallest) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    for (std::size_t i = lo; i < sent_index.size() && sent_index[i].first <= r.largest; ++i) {
      if (ack_members.empty() || ack_members.back() != sent_index[i].second) {
        ack_members.push_back(sent_index[i].second);
      }
    }
    // Domains whose last loss round may turn out spurious (undo_if_spurious).
    for (auto it = undo_index.lower_bound(r.smallest);
         it != undo_index.end() && it->first <= r.largest; ++it) {
      ack_members.push_back(it->second);
    }
  }
  // In member order, as a walk over member_domains (a std::map) would go.
  std::sort(ack_members.begin(), ack_members.end());
  ack_members.erase(std::unique(ack_members.begin(), ack_members.end()), ack_members.end());
  for (MemberId id : ack_members) {
    auto it = member_domains.find(id);
    if (it != member_domains.end()) process_ack(*it->second, ranges, ack_delay, now, out);
  }
  prune_sent_index();
}

// Drops index entries from the front that are no longer outstanding (lost
// ones an undo may still need are in undo_index).
void Ensemble::Impl::prune_sent_index() {
  while (!sent_index.empty()) {
    const auto [number, member] = sent_index.front();
    auto it = member_domains.find(member);
    const Domain& d = it != member_domains.end() ? *it->second : *shared;
    if (d.sent.outstanding(number)) return;
    sent_index.pop_front();
  }
}

const Domain& Ensemble::Impl::reference_domain() const {
  if (coupled()) return *shared;
  // `none`: the largest member's state stands for the path.
  const Domain* best = nullptr;
  for (const auto& [id, d] : member_domains) {
    if (!best || d->law->cwnd_bytes() > best->law->cwnd_bytes()) best = d.get();
  }
  return best ? *best : *shared;
}

// --- public API ------------------------------------------------------------

Ensemble::Ensemble(const EnsembleConfig& config, Instant now, std::optional<PathState> resume_from)
    : impl_(std::make_unique<Impl>(config, now, resume_from)) {}

Ensemble::~Ensemble() = default;

void Ensemble::add_member(MemberId id, ContentClass cls, Instant now) {
  Impl& m = *impl_;
  if (id == kControlMember || m.members.contains(id)) return;
  m.members.emplace(id, MemberState{cls});
  m.scheduler.add(id, cls);
  m.scheduler.set_ready(id, false);  // until the tunnel says it has data
  if (!m.coupled()) m.new_member_domain(id, now);
}

void Ensemble::remove_member(MemberId id, Instant /*now*/) {
  Impl& m = *impl_;
  auto it = m.members.find(id);
  if (it == m.members.end()) return;
  if (it->second.active) {
    --m.active_members;
    m.active_tickets -= it->second.active_tickets;
  }
  m.members_bytes_in_flight -= std::min(m.members_bytes_in_flight, it->second.bytes_in_flight);
  m.members.erase(it);
  m.scheduler.remove(id);
  m.joins.erase(id);
  m.member_recovery.erase(id);
  if (!m.coupled()) {
    auto d = m.member_domains.find(id);
    if (d != m.member_domains.end() && !d->second->retired) {
      d->second->retired = true;
      ++m.retired_domains;
      m.retired_ids.push_back(id);
    }
    m.drop_retired_domains();
  }
}

void Ensemble::set_class(MemberId id, ContentClass cls) {
  auto it = impl_->members.find(id);
  if (it == impl_->members.end()) return;
  it->second.cls = cls;
  impl_->scheduler.set_class(id, cls);
}

void Ensemble::set_scheduler_config(const SchedulerConfig& config) {
  impl_->config.scheduler = config;
  impl_->scheduler.set_config(config);
}

std::size_t Ensemble::member_count() const { return impl_->members.size(); }

void Ensemble::set_backlogged(MemberId id, bool backlogged, Instant now) {
  Impl& m = *impl_;
  auto it = m.members.find(id);
  if (it == m.members.end()) return;
  MemberState& ms = it->second;
  if (ms.backlogged == backlogged) return;
  ms.backlogged = backlogged;
  m.scheduler.set_ready(id, backlogged);
  m.update_active(id, ms);
  if (backlogged && !ms.started) {
    ms.started = true;
    m.on_join(id, now);
  } else if (!backlogged) {
    // A joiner with nothing more to send ends its clocked phase: the others
    // must not hold their increase for a share nobody uses.
    auto j = m.joins.find(id);
    if (j != m.joins.end() && j->second.clocked()) m.joins.erase(j);
  }
}

bool Ensemble::backlogged(MemberId id) const {
  auto it = impl_->members.find(id);
  return it != impl_->members.end() && it->second.backlogged;
}

bool Ensemble::can_send(MemberId id, Instant now) const { return impl_->gate(id, now).open(); }

std::optional<MemberId> Ensemble::pick_sender(Instant now) {
  const Impl& m = *impl_;
  if (m.scheduler.ready_count() == 0) return std::nullopt;
  if (!m.coupled()) {
    // One window per member: skip those whose own window is closed.
    return m.scheduler.pick([&](MemberId id) { return can_send(id, now); });
  }
  if (!m.joins.empty()) {
    // Seed 003 Algorithm 1: a slot released by the others' acks goes to the
    // joiner. Under preempt (E-TCP HTML-pre) it never overtakes a sendable
    // member of the preempting class: a join shares the window, it does not
    // buy precedence.
    const SchedulerConfig& sc = m.config.scheduler;
    bool preempting_ready = false;
    if (sc.policy == SchedulingPolicy::preempt) {
      const auto top = m.scheduler.pick([&](MemberId id) { return !m.join_of(id); });
      preempting_ready = top && m.members.at(*top).cls == sc.preempt_class && can_send(*top, now);
    }
    for (const auto& [id, j] : m.joins) {
      const MemberState& ms = m.members.at(id);
      if (!ms.backlogged || !can_send(id, now)) continue;
      if (preempting_ready && ms.cls != sc.preempt_class) continue;
      if (j.clocked() && j.credit == 0 && !j.timer_due(now)) continue;
      return id;
    }
  }
  // Everyone else shares one gate; clocked joiners send only what is released.
  if (!m.gate(*m.shared, nullptr, now).open()) return std::nullopt;
  if (!m.clocked_join_running()) return m.scheduler.pick();
  return m.scheduler.pick([&](MemberId id) {
    const JoinState* j = m.join_of(id);
    return !j || !j->clocked();
  });
}

bool Ensemble::on_packet_sent(const SentPacket& packet) {
  Impl& m = *impl_;
  ++m.packets_sent;
  if (!packet.ack_eliciting) return false;
  if (m.largest_sent && packet.number <= *m.largest_sent) return false;  // numbers must increase
  m.largest_sent = packet.number;
  const Instant now = packet.sent_time;
  Domain& d = m.domain_for(packet.member);
  if (!m.coupled()) m.sent_index.push_back({packet.number, packet.member});

  if (d.sent.empty()) {
    if (m.restart_due(d, now)) {
      m.restart_after_idle(d, now);
    } else {
      d.law->on_idle_ended(now - d.idle_since);
    }
    d.rto_armed_at = now;  // RFC 6298 5.1
  }
  const bool extra = d.resume && d.resume->is_extra(d.sent.bytes_in_flight(), packet.bytes);
  d.sent.on_sent(packet);
  d.recovery_send_pending = false;
  d.probe_pending = false;
  if (d.prr) d.prr->on_sent(packet.bytes);
  if (d.hystart) d.hystart->on_packet_sent(packet.number);
  if (extra) d.pacer.on_sent(now, m.resume_interval(d));
  if (d.resume) d.resume->on_sent(packet.number, packet.bytes, extra);

  auto member = m.members.find(packet.member);
  if (member != m.members.end()) {
    member->second.bytes_in_flight += packet.bytes;
    m.members_bytes_in_flight += packet.bytes;
    m.update_active(packet.member, member->second);
  }
  if (auto it = m.joins.find(packet.member); it != m.joins.end()) {
    JoinState& j = it->second;
    if (j.clocked()) {
      if (j.credit > 0) {
        --j.credit;
      } else {
        j.last_release = now;  // released by the timer
      }
      if (--j.packets_left == 0) m.joins.erase(it);
    } else {
      if (j.mode == JoinMode::paced) j.pacer.on_sent(now, m.efcm_interval(d));
      j.allowance_bytes -= std::min(j.allowance_bytes, packet.bytes);
      if (j.allowance_bytes == 0) m.joins.erase(it);
    }
  }
  m.scheduler.on_sent(packet.member);  // unknown ids (control) are ignored
  return extra && m.config.resume.mark_low_priority;
}

bool Ensemble::low_priority() const {
  const Impl& m = *impl_;
  const Domain& d = *m.shared;
  return m.config.resume.mark_low_priority && d.resume &&
         d.resume->is_extra(d.sent.bytes_in_flight(), m.config.max_datagram_bytes);
}

const AckOutcome& Ensemble::on_ack(std::span<const AckedRange> ranges, Duration ack_delay,
                                   Instant now) {
  Impl& m = *impl_;
  AckOutcome& out = m.ack_out;
  out.acked.clear();
  out.lost.clear();
  m.process_ack(*m.shared, ranges, ack_delay, now, out);
  if (!m.coupled()) m.ack_touched_member_domains(ranges, ack_delay, now, out);
  if (!m.member_domains.empty()) {  // `none`: several domains appended in turn
    auto by_number = [](const SentPacket& a, const SentPacket& b) { return a.number < b.number; };
    std::sort(out.acked.begin(), out.acked.end(), by_number);
    std::sort(out.lost.begin(), out.lost.end(), by_number);
  }
  m.drop_retired_domains();
  return out;
}

std::optional<Instant> Ensemble::next_timeout() const {
  const Impl& m = *impl_;
  std::optional<Instant> earliest;
  auto consider = [&](const Domain& d) {
    if (d.sent.empty()) return;
    auto take = [&](Instant t) { earliest = earliest ? std::min(*earliest, t) : t; };
    if (auto t = d.sent.loss_time()) take(*t);
    if (d.rto_armed_at) take(*d.rto_armed_at + m.timer_interval(d));
  };
  consider(*m.shared);
  for (const auto& [id, d] : m.member_domains) consider(*d);
  return earliest;
}

const TimeoutOutcome& Ensemble::on_timeout(Instant now) {
  Impl& m = *impl_;
  TimeoutOutcome& out = m.timeout_out;
  out.lost.clear();
  out.rto_fired = false;
  out.probes.clear();
  m.for_each_domain([&](Domain& d) {
    if (d.sent.empty()) return;
    if (auto t = d.sent.loss_time(); t && *t <= now) {
      const ByteCount prior_flight = d.sent.bytes_in_flight();
      const std::size_t first = out.lost.size();
      d.sent.detect_lost(now, std::max(d.rtt.srtt(), d.rtt.latest_rtt()), out.lost);
      for (std::size_t i = first; i < out.lost.size(); ++i) m.left_flight(out.lost[i]);
      m.on_lost(d, out.lost, first, now, prior_flight);
      m.end_prr_if_recovered(d, /*largest_acked_in_event=*/0);  // no ack in a timeout
      m.update_timer(d, now, false);
    } else if (d.rto_armed_at && *d.rto_armed_at + m.timer_interval(d) <= now) {
      if (m.probe_next(d)) {
        m.fire_probe(d, now, out);
      } else {
        m.fire_rto(d, now, out);
      }
    }
  });
  std::sort(out.lost.begin(), out.lost.end(),
            [](const SentPacket& a, const SentPacket& b) { return a.number < b.number; });
  m.drop_retired_domains();
  return out;
}

std::optional<Instant> Ensemble::next_pacing_release(Instant now) const {
  const Impl& m = *impl_;
  std::optional<Instant> earliest;
  auto consider = [&](const Impl::Gate& g) {
    if (g.window_open && g.paced_until) {
      earliest = earliest ? std::min(*earliest, *g.paced_until) : *g.paced_until;
    }
  };
  consider(m.gate(*m.shared, nullptr, now));  // every coupled member, and control
  for (const auto& [id, j] : m.joins) {
    if (m.members.at(id).backlogged) consider(m.gate(id, now));
  }
  if (!m.coupled()) {
    // The uncoupled baseline pays O(members) here.
    for (const auto& [id, ms] : m.members) {
      if (ms.backlogged) consider(m.gate(id, now));
    }
  }
  return earliest;
}

PathObservation Ensemble::observe(Instant now) const {
  const Impl& m = *impl_;
  const Domain& d = m.reference_domain();
  PathObservation o;
  PathState& s = o.state;
  s.cwnd_bytes = d.law->cwnd_bytes();
  s.ssthresh_bytes = d.law->ssthresh_bytes();
  s.srtt = d.rtt.srtt();
  s.rttvar = d.rtt.rttvar();
  s.min_rtt = d.rtt.min_rtt();
  s.max_datagram_bytes = m.config.max_datagram_bytes;
  s.saved_at = now;
  o.in_initial_slow_start = s.ssthresh_bytes == kInfiniteSsthresh;
  // An unvalidated jump is a claim, not knowledge; recovery is a transient.
  o.window_unreliable = d.resume_unvalidated() || d.prr.has_value();
  o.backed_off = d.rtt.backoff() > 0;
  return o;
}

EnsembleStats Ensemble::stats() const {
  const Impl& m = *impl_;
  EnsembleStats s;
  s.ack_domain_visits = m.ack_domain_visits;
  if (m.coupled()) {
    s.cwnd_bytes = m.shared->law->cwnd_bytes();
    s.ssthresh_bytes = m.shared->law->ssthresh_bytes();
  } else {
    for (const auto& [id, d] : m.member_domains) {
      if (d->retired) continue;
      s.cwnd_bytes = saturating_add(s.cwnd_bytes, d->law->cwnd_bytes());
      s.ssthresh_bytes = saturating_add(s.ssthresh_bytes, d->law->ssthresh_bytes());
    }
  }
  s.bytes_in_flight = m.shared->sent.bytes_in_flight();
  for (const auto& [id, d] : m.member_domains) s.bytes_in_flight += d->sent.bytes_in_flight();
  const Domain& ref = m.reference_domain();
  s.srtt = ref.rtt.srtt();
  s.rttvar = ref.rtt.rttvar();
  s.min_rtt = ref.rtt.min_rtt();
  s.packets_sent = m.packets_sent;
  s.packets_lost = m.packets_lost;
  s.loss_rounds = m.loss_rounds;
  s.rto_count = m.rto_count;
  s.tail_probes = m.tail_probes;
  s.spurious_rounds = m.spurious_rounds;
  s.random_loss_rounds = m.random_loss_rounds;
  s.members = m.members.size();
  s.active_members = m.active_members;
  s.resumed = m.resumed_from.has_value();
  return s;
}

ByteCount Ensemble::member_cwnd_bytes(MemberId id) const {
  const Impl& m = *impl_;
  if (!m.members.contains(id)) return 0;
  if (!m.coupled()) return m.domain_for(id).law->cwnd_bytes();
  return scale(m.shared->law->cwnd_bytes(), m.scheduler.tickets(id), m.scheduler.total_tickets());
}

void Ensemble::set_max_datagram_bytes(ByteCount bytes) { impl_->set_max_datagram_bytes(bytes); }

const EnsembleConfig& Ensemble::config() const { return impl_->config; }

}  // namespace egw::congestion
