// The Ensemble: members, the stride scheduler, the coupling modes and the
// glue between them, congestion domains (congestion/congestion_domain.h) and
// joins (congestion/join.h). The model is in ensemble.h. What lives here:
//
//  - Domains. Coupled modes have one shared domain for every member; `none`
//    has one per member plus the shared one (min_window_packets) for
//    kControlMember and packets of unknown members. A removed member's
//    domain is retired and dropped once its packets are acked or lost.
//  - Members. Each knows whether the tunnel says it is backlogged and how
//    many bytes it has in flight; `n_flows` counts the active ones (either)
//    as its n, so idle streams add no aggressiveness. Only backlogged members
//    are in the scheduler's ready heap: per-packet work does not depend on
//    how many streams are open.
//  - `none`'s sent index: which member sent each outstanding packet, so an
//    ACK visits only the domains whose packets it covers.
//  - Joins (coupled, when a member first becomes backlogged while others
//    have data in flight): the Joins decide the share and its release; the
//    domain holds the others' increase while a clocked join runs (the
//    DomainListener hooks in ensemble_impl.h), and a congestion event or
//    RTO ends every join.
#include "congestion/ensemble_impl.h"

namespace egw::congestion {

Ensemble::Impl::Impl(const EnsembleConfig& c, Instant now, std::optional<PathState> resume_from)
    : config(c), scheduler(c.scheduler) {
  config.max_datagram_bytes = std::max<ByteCount>(config.max_datagram_bytes, 1);
  config.initial_window_packets = std::max<std::uint32_t>(config.initial_window_packets, 1);
  config.min_window_packets = std::max<std::uint32_t>(config.min_window_packets, 1);
  shared = make_domain(coupled() ? config.initial_window_packets : config.min_window_packets, now);
  // Room for a large ack up front, so steady acks never grow these.
  for (auto* v : {&ack_out.acked, &ack_out.lost, &timeout_out.lost, &acked_scratch.acked}) {
    v->reserve(1024);
  }
  timeout_out.probes.reserve(64);

  if (!resume_from || !config.resume.enabled || resume_from->srtt <= Duration{0}) return;
  resumed_from = *resume_from;
  // `none`: member domains take only the RTT (new_member_domain).
  if (coupled()) shared->resume_from(*resume_from);
}

CongestionDomain& Ensemble::Impl::new_member_domain(MemberId id, Instant now) {
  auto it = member_domains.find(id);
  if (it != member_domains.end()) {
    retired.erase(id);
    return *it->second;
  }
  auto d = make_domain(config.initial_window_packets, now);
  if (resumed_from) d->seed_rtt(*resumed_from);
  return *member_domains.emplace(id, std::move(d)).first->second;
}

void Ensemble::Impl::set_max_datagram_bytes(ByteCount bytes) {
  bytes = std::max<ByteCount>(bytes, 1);
  if (bytes == config.max_datagram_bytes) return;
  // Everything that reads config.max_datagram_bytes at use time (gates,
  // pacing, joins, window validation, PRR, HyStart) follows from here.
  config.max_datagram_bytes = bytes;
  for_each_domain([](CongestionDomain& d) { d.on_max_datagram_changed(); });
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

void Ensemble::Impl::on_left_flight(const SentPacket& p) {
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
  // Nobody else is sending stream data: the newcomer just starts with the
  // window (a PING or MAX_DATA in flight is no flow to join behind).
  if (members_bytes_in_flight <= members.at(id).bytes_in_flight) return;
  // One that goes ahead of the others (a call, render-blocking CSS and JS)
  // joins with the part it gets ahead of them, not by its tickets.
  const auto ahead = scheduler.precedence_share(id);
  joins.start(id, *shared, ahead ? ahead->numerator : scheduler.tickets(id),
              ahead ? ahead->denominator : active_tickets, now);
}

void Ensemble::Impl::drop_retired_domains() {
  if (retired.empty()) return;
  for (std::size_t i = 0; i < retired_ids.size();) {
    const MemberId id = retired_ids[i];
    auto it = member_domains.find(id);
    if (it == member_domains.end() || !retired.contains(id) || it->second->idle()) {
      if (it != member_domains.end() && retired.contains(id)) {
        it->second->forget_undo();
        dropped_counters += it->second->counters();
        member_domains.erase(it);
        retired.erase(id);
      }
      retired_ids[i] = retired_ids.back();
      retired_ids.pop_back();
    } else {
      ++i;
    }
  }
}

void Ensemble::Impl::collect_touched_members(const AckedRange& r) {
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

void Ensemble::Impl::ack_touched_member_domains(std::span<const AckedRange> ranges,
                                                Duration ack_delay, Instant now, AckOutcome& out,
                                                std::optional<Duration> peer_sent_at) {
  ack_members.clear();
  for (const AckedRange& r : ranges) {
    if (r.smallest <= r.largest) collect_touched_members(r);
  }
  // In member order, as a walk over member_domains (a std::map) would go.
  std::sort(ack_members.begin(), ack_members.end());
  ack_members.erase(std::unique(ack_members.begin(), ack_members.end()), ack_members.end());
  for (MemberId id : ack_members) {
    auto it = member_domains.find(id);
    if (it != member_domains.end()) process_ack(*it->second, ranges, ack_delay, now, out, peer_sent_at);
  }
  prune_sent_index();
}

// Drops index entries from the front that are no longer outstanding (lost
// ones an undo may still need are in undo_index).
void Ensemble::Impl::prune_sent_index() {
  while (!sent_index.empty()) {
    const auto [number, member] = sent_index.front();
    auto it = member_domains.find(member);
    const CongestionDomain& d = it != member_domains.end() ? *it->second : *shared;
    if (d.sent().outstanding(number)) return;
    sent_index.pop_front();
  }
}

const CongestionDomain& Ensemble::Impl::reference_domain() const {
  if (coupled()) return *shared;
  // `none`: the largest member's state stands for the path.
  const CongestionDomain* best = nullptr;
  for (const auto& [id, d] : member_domains) {
    if (!best || d->cwnd_bytes() > best->cwnd_bytes()) best = d.get();
  }
  return best ? *best : *shared;
}

std::optional<MemberId> Ensemble::Impl::pick_joiner(Instant now) const {
  // Seed 003 Algorithm 1: a slot released by the others' acks goes to the
  // joiner, in its class's turn: under content and preempt the scheduler's
  // best sendable member (joiners included) must be of its class, else the
  // slot stays in the window for that one (pick_sender's fall-through). A
  // join shares the window, it buys no precedence: an image that opens
  // while a script runs does not overtake it (issue 21 item 4).
  std::optional<ContentClass> due;
  if (has_realtime_precedence(config.scheduler.policy)) {
    const auto top = scheduler.pick([&](MemberId id) {
      const JoinState* j = join_of(id);
      return members.at(id).backlogged && gate(id, now).open() && (!j || j->released(now));
    });
    if (!top) return std::nullopt;
    due = members.at(*top).cls;
  }
  for (const auto& [id, j] : joins.all()) {
    const MemberState& ms = members.at(id);
    if (!ms.backlogged || !gate(id, now).open()) continue;
    if (due && ms.cls != *due) continue;
    if (!j.released(now)) continue;
    return id;
  }
  return std::nullopt;
}

// Member and join bookkeeping of a packet the domain now tracks.
void Ensemble::Impl::track_sent(const SentPacket& packet) {
  auto member = members.find(packet.member);
  if (member != members.end()) {
    member->second.bytes_in_flight += packet.bytes;
    members_bytes_in_flight += packet.bytes;
    update_active(packet.member, member->second);
    if (member->second.cls == ContentClass::realtime) realtime_packets.on_realtime_sent(packet.sent_time);
  }
  joins.on_sent(packet.member, packet.bytes, domain_for(packet.member), packet.sent_time);
  // Unknown ids (control) are ignored. A run's packet is its class's turn,
  // not its member's (StrideScheduler::on_sent_in_run).
  if (packet.member == run.goes_on) {
    scheduler.on_sent_in_run(packet.member, packet.bytes);
  } else {
    scheduler.on_sent(packet.member, packet.bytes);
  }
  run.goes_on = kControlMember;
  if (member == members.end()) return;  // a control packet neither breaks nor extends a run
  if (packet.member == run.member) {
    run.bytes += packet.bytes;
  } else {
    run = {packet.member, packet.bytes};
  }
}

// Runs. The stride scheduler alternates members packet by packet, so at
// gigabit rates each of n bulk streams gets 1/n of every receive batch at
// the peer gateway, whose relay then writes n small pieces per batch to n
// TCP sockets: on the data-plane bench 8 streams wrote ~10 KB a sendmsg
// (one stream ~65 KB), and the hub spent a quarter of its CPU waking the
// server and being woken. So the member that sent the last packet goes on
// while the scheduler's choice is a member of the same class (a class the
// tickets or precedence put first, a call or a page's HTML, still comes
// next) and its run is under kRunDuration at the pacing rate and under the
// window (a slow start's rate over a round trip of a few us reads GB/s: a
// run of 100 us at it would span windows). 100 us is ~60 KB at 5 Gbit/s
// and about a packet at a pacing rate of ~100 Mbit/s: on WAN links the
// schedule stays E-TCP's, packet by packet. Shares are unchanged (every packet
// is charged; the others catch up after the run); within a class the order
// is off by at most one run. A run's packets after the first are charged as
// their class's turn but not their member's (on_sent_in_run): the members'
// clock moved to the run's pass would raise every waiting member to it, and
// the run would cost the others their turns instead of being caught up.
bool Ensemble::Impl::run_goes_on(MemberId next) const {
  if (next == run.member || run.member == kControlMember) return false;
  // The bound first: at WAN rates it ends every run here, before any lookup.
  const double by_rate = shared->pacing_rate_bytes_per_s() * to_seconds(Ensemble::kRunDuration);
  const double by_window = static_cast<double>(shared->window_bytes());
  if (static_cast<double>(run.bytes) >= std::min(by_rate, by_window)) return false;
  if (!scheduler.ready(run.member)) return false;
  const auto a = members.find(run.member);
  const auto b = members.find(next);
  return a != members.end() && b != members.end() && a->second.cls == b->second.cls;
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
  m.shared->forget_member(id);
  if (!m.coupled()) {
    if (m.member_domains.contains(id) && m.retired.emplace(id).second) {
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
    m.joins.end_clocked(id);
    // Nothing left to send with the window open: the rate samples of this
    // flight would understate the path (delivery_rate.h).
    CongestionDomain& d = m.domain_for(id);
    if ((!m.coupled() || m.scheduler.ready_count() == 0) && d.gate(now).window_open) {
      d.on_app_limited();
    }
  }
}

bool Ensemble::backlogged(MemberId id) const {
  auto it = impl_->members.find(id);
  return it != impl_->members.end() && it->second.backlogged;
}

bool Ensemble::can_send(MemberId id, Instant now) const {
  const Impl& m = *impl_;
  if (m.gate(id, now).open()) return true;
  const auto it = m.members.find(id);
  return it != m.members.end() && it->second.cls == ContentClass::realtime && m.realtime_may_jump(now);
}

std::optional<MemberId> Ensemble::pick_sender(Instant now) {
  impl_->run.goes_on = kControlMember;
  const Impl& m = *impl_;
  if (m.scheduler.ready_count() == 0) return std::nullopt;
  if (!m.coupled()) {
    // One window per member: skip those whose own window is closed.
    return m.scheduler.pick([&](MemberId id) { return can_send(id, now); });
  }
  if (!m.joins.empty()) {
    if (auto joiner = m.pick_joiner(now)) return joiner;
  }
  // Everyone else shares one gate; clocked joiners send only what is released.
  if (!m.gate(*m.shared, nullptr, now).open()) {
    return m.realtime_may_jump(now) ? m.scheduler.pick() : std::nullopt;
  }
  if (!m.joins.clocked_running()) {
    const auto next = m.scheduler.pick();
    if (next && m.run_goes_on(*next)) return impl_->run.goes_on = m.run.member;
    return next;
  }
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
  if (!m.coupled()) m.sent_index.push_back({packet.number, packet.member});
  const bool extra = m.domain_for(packet.member).on_sent(packet);
  m.track_sent(packet);
  return extra && m.config.resume.mark_low_priority;
}

// The shared domain: `single` and `n_flows` send everything through it, and
// under `none` it is where the control member's packets go.
void Ensemble::on_unscheduled_sent(Instant now, ByteCount bytes) {
  impl_->shared->on_unscheduled_sent(now, bytes);
}

bool Ensemble::low_priority() const {
  const Impl& m = *impl_;
  return m.config.resume.mark_low_priority && m.shared->next_is_extra();
}

ByteCount Ensemble::packet_bytes_limit(MemberId id, Instant now) const {
  const Impl& m = *impl_;
  const ByteCount full = m.config.max_datagram_bytes;
  if (!m.realtime_packets.active(now)) return full;
  const auto it = m.members.find(id);
  if (it != m.members.end() && it->second.cls == ContentClass::realtime) return full;
  const double rate = m.coupled() ? m.shared->path_rate_bytes_per_s() : m.config.max_rate_bps / 8.0;
  return m.realtime_packets.limit(rate, full, now);
}

const AckOutcome& Ensemble::on_ack(std::span<const AckedRange> ranges, Duration ack_delay,
                                   Instant now, std::optional<Duration> peer_sent_at) {
  Impl& m = *impl_;
  AckOutcome& out = m.ack_out;
  out.acked.clear();
  out.lost.clear();
  m.process_ack(*m.shared, ranges, ack_delay, now, out, peer_sent_at);
  if (!m.coupled()) m.ack_touched_member_domains(ranges, ack_delay, now, out, peer_sent_at);
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
  std::optional<Instant> earliest = m.shared->next_timeout();
  for (const auto& [id, d] : m.member_domains) {
    if (auto t = d->next_timeout()) earliest = earliest ? std::min(*earliest, *t) : *t;
  }
  return earliest;
}

const TimeoutOutcome& Ensemble::on_timeout(Instant now) {
  Impl& m = *impl_;
  TimeoutOutcome& out = m.timeout_out;
  out.lost.clear();
  out.rto_fired = false;
  out.probes.clear();
  m.for_each_domain([&](CongestionDomain& d) { d.on_timeout(now, out); });
  std::sort(out.lost.begin(), out.lost.end(),
            [](const SentPacket& a, const SentPacket& b) { return a.number < b.number; });
  m.drop_retired_domains();
  return out;
}

std::optional<Instant> Ensemble::next_pacing_release(Instant now) const {
  const Impl& m = *impl_;
  std::optional<Instant> earliest;
  auto consider = [&](const SendGate& g) {
    if (g.window_open && g.paced_until) {
      earliest = earliest ? std::min(*earliest, *g.paced_until) : *g.paced_until;
    }
  };
  consider(m.gate(*m.shared, nullptr, now));  // every coupled member, and control
  if (m.coupled() && m.scheduler.realtime_first()) consider(m.shared->realtime_gate(now));
  for (const auto& [id, j] : m.joins.all()) {
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

void Ensemble::set_max_datagram_bytes(ByteCount bytes) { impl_->set_max_datagram_bytes(bytes); }

// Every domain reads config.max_rate_bps at use time.
void Ensemble::set_max_rate_bps(std::uint64_t bits_per_s) { impl_->config.max_rate_bps = bits_per_s; }

const EnsembleConfig& Ensemble::config() const { return impl_->config; }

}  // namespace egw::congestion
