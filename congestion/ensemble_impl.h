// Ensemble::Impl: the state behind congestion/ensemble.h, shared by
// ensemble.cc (members, scheduling, acks, timers) and ensemble_stats.cc
// (what the ensemble reports). Internal: include only from congestion/.
#pragma once

#include "congestion/ensemble.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/ring_deque.h"
#include "congestion/congestion_domain.h"
#include "congestion/join.h"
#include "congestion/realtime_packets.h"

namespace egw::congestion {

struct MemberState {
  ContentClass cls = ContentClass::bulk;
  bool backlogged = false;
  bool started = false;  // has been backlogged once: joined
  bool active = false;   // counted in active_members
  std::uint32_t active_tickets = 0;  // its tickets when it became active
  ByteCount bytes_in_flight = 0;
};


struct Ensemble::Impl final : DomainListener {
  Impl(const EnsembleConfig& c, Instant now, std::optional<PathState> resume_from);

  bool coupled() const { return config.coupling != CouplingMode::none; }
  CongestionDomain& domain_for(MemberId id) {
    return const_cast<CongestionDomain&>(std::as_const(*this).domain_for(id));
  }
  const CongestionDomain& domain_for(MemberId id) const {
    if (coupled()) return *shared;
    auto it = member_domains.find(id);
    return it != member_domains.end() ? *it->second : *shared;
  }
  template <typename F>
  void for_each_domain(F&& f) {
    f(*shared);
    for (auto& [id, d] : member_domains) f(*d);
  }
  std::unique_ptr<CongestionDomain> make_domain(std::uint32_t initial_window_packets, Instant now) {
    return std::make_unique<CongestionDomain>(
        config, DomainOptions{initial_window_packets, coupled()}, now, this);
  }
  CongestionDomain& new_member_domain(MemberId id, Instant now);
  void set_max_datagram_bytes(ByteCount bytes);
  const JoinState* join_of(MemberId id) const { return joins.find(id); }

  SendGate gate(const CongestionDomain& d, const JoinState* join, Instant now) const {
    SendGate g = d.gate(now, join && join->has_allowance());
    if (join && g.window_open && !g.unheld) joins.hold(*join, d, now, g);
    return g;
  }
  SendGate gate(MemberId id, Instant now) const {
    return gate(domain_for(id), coupled() ? join_of(id) : nullptr, now);
  }
  std::optional<MemberId> pick_joiner(Instant now) const;
  // A call's datagram that pick() puts first does not wait for the pacers'
  // slot behind bulk (CongestionDomain::realtime_gate); coupled modes only.
  bool realtime_may_jump(Instant now) const {
    return coupled() && scheduler.realtime_first() && shared->realtime_gate(now).open();
  }
  void track_sent(const SentPacket& packet);
  // Runs (ensemble.cc, "Runs"): whether the member that sent the last
  // packets goes on instead of `next`, the scheduler's choice.
  bool run_goes_on(MemberId next) const;

  // DomainListener: what the domains tell the ensemble.
  std::uint32_t law_flows() const override {
    if (config.coupling != CouplingMode::n_flows) return 1;
    return static_cast<std::uint32_t>(std::max<std::size_t>(active_members, 1));
  }
  void on_left_flight(const SentPacket& p) override;
  void on_congestion_event() override {
    if (coupled()) joins.clear();  // shares were computed from the old window
  }
  bool growth_held() const override { return coupled() && joins.clocked_running(); }
  void on_acked(const std::vector<SentPacket>& acked, Instant now) override {
    if (coupled()) joins.release_credit(acked, *shared, now);
  }
  void on_undo_awaits(const SentPacket& lost) override {
    if (!coupled()) undo_index[lost.number] = lost.member;
  }
  void on_undo_forgets(PacketNumber number) override {
    if (!coupled()) undo_index.erase(number);
  }

  void update_active(MemberId id, MemberState& m);
  void on_join(MemberId id, Instant now);
  void process_ack(CongestionDomain& d, std::span<const AckedRange> ranges, Duration ack_delay,
                   Instant now, AckOutcome& out, std::optional<Duration> peer_sent_at) {
    ++ack_domain_visits;
    d.on_ack(ranges, ack_delay, now, out, acked_scratch, peer_sent_at);
  }
  void drop_retired_domains();
  const CongestionDomain& reference_domain() const;
  // `none`: the member domains an ACK's ranges touch, from sent_index, so an
  // ACK costs the packets it covers, not the number of domains.
  void ack_touched_member_domains(std::span<const AckedRange> ranges, Duration ack_delay,
                                  Instant now, AckOutcome& out, std::optional<Duration> peer_sent_at);
  void collect_touched_members(const AckedRange& r);
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
  std::unique_ptr<CongestionDomain> shared;
  std::map<MemberId, std::unique_ptr<CongestionDomain>> member_domains;  // `none` only
  std::unordered_set<MemberId> retired;  // `none`: members removed, domains kept
  std::vector<MemberId> retired_ids;  // `none`: retired domains not dropped yet
  DomainCounters dropped_counters;    // of the domains dropped since
  // `none`: (number, member) of every ack-eliciting packet sent, ascending,
  // from the oldest one still outstanding or remembered for a spurious-loss
  // undo; and the members an ACK touches (scratch).
  RingDeque<std::pair<PacketNumber, MemberId>> sent_index;
  std::vector<MemberId> ack_members;
  std::uint64_t ack_domain_visits = 0;
  // `none`: lost numbers a domain's undo record waits for, and its member.
  std::map<PacketNumber, MemberId> undo_index;
  Joins joins{config};
  RealtimePackets realtime_packets{config.realtime_packets};
  std::optional<PathState> resumed_from;
  std::optional<PacketNumber> largest_sent;
  std::uint64_t packets_sent = 0;
  // The member that sent the last stream packets, their bytes, and the
  // member pick_sender() last named to go on with its run.
  struct Run {
    MemberId member = kControlMember;
    ByteCount bytes = 0;
    MemberId goes_on = kControlMember;
  } run;
  // Reused so that acks and timeouts allocate nothing in steady state.
  AckOutcome ack_out;
  TimeoutOutcome timeout_out;
  SentPackets::AckResult acked_scratch;
};

}  // namespace egw::congestion
