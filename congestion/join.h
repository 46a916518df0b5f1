// Joins: how a member that starts sending while others have data in flight
// gets its share of a coupled ensemble's window (E-TCP, EFCM, seed 003).
//
// share = cwnd * tickets / active tickets (`n_flows` first adds the
// newcomer's initial window, EFCM 2.4.1). Then, by JoinMode:
//  - ack_clocked (seed 003 Algorithm 1): each packet of the others that is
//    acked releases one packet of the share (at most a burst of
//    max_burst_packets), the others' window increase is held meanwhile in
//    congestion avoidance (CongestionDomain::grow), and a timer releases one
//    packet per SRTT / share when the others' acks are too few; room in the
//    window changes nothing.
//  - immediate / paced: an allowance of `share` bytes beyond the window (at
//    once / paced by EFCM's timer), the baselines.
// A congestion event or RTO ends every join (the shares were computed from
// the old window).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/units.h"
#include "congestion/congestion_domain.h"
#include "congestion/ensemble_config.h"
#include "congestion/pacer.h"
#include "congestion/packet.h"

namespace egw::congestion {

inline ByteCount saturating_add(ByteCount a, ByteCount b) {
  return a > kInfiniteSsthresh - b ? kInfiniteSsthresh : a + b;
}

// a * num / den without overflowing for realistic windows.
inline ByteCount scale(ByteCount a, std::uint64_t num, std::uint64_t den) {
  if (den == 0) return 0;
  return a / den * num + a % den * num / den;
}

struct JoinState {
  JoinMode mode = JoinMode::ack_clocked;
  // ack_clocked: packets of the share not sent yet, packets released by the
  // others' acks and not sent yet, and the timer fallback.
  std::uint32_t packets_left = 0;
  std::uint32_t share_packets = 0;  // the whole share, for the timer's interval
  std::uint32_t credit = 0;
  Duration release_interval{0};
  Instant last_release{};
  // immediate / paced: bytes the joiner may still send beyond the window.
  ByteCount allowance_bytes = 0;
  Pacer pacer;

  bool clocked() const { return mode == JoinMode::ack_clocked; }
  bool timer_due(Instant now) const { return now >= last_release + release_interval; }
  // ack_clocked: may a packet of the share go now (released by an ack or the timer)?
  bool released(Instant now) const { return !clocked() || credit > 0 || timer_due(now); }
  // immediate / paced: may the joiner send whatever the window says?
  bool has_allowance() const { return !clocked() && allowance_bytes > 0; }
};

// The joins in progress of one coupled ensemble (a handful at a time).
class Joins {
 public:
  using Map = std::map<MemberId, JoinState>;

  explicit Joins(const EnsembleConfig& config) : config_(config) {}

  // `id` starts sending beside others: its share of `d`'s window, as
  // `tickets` of `active_tickets`. `n_flows` grows the aggregate first.
  void start(MemberId id, CongestionDomain& d, std::uint64_t tickets,
             std::uint64_t active_tickets, Instant now);
  // Seed 003 Algorithm 1: the others' acked packets release the share.
  void release_credit(const std::vector<SentPacket>& acked, const CongestionDomain& d, Instant now);
  // A packet of `id` left (`d`: the domain it is paced against).
  void on_sent(MemberId id, ByteCount bytes, const CongestionDomain& d, Instant now);
  // Adds a join's holds (its timer fallback, its paced allowance) to `g`.
  void hold(const JoinState& j, const CongestionDomain& d, Instant now, SendGate& g) const;

  const JoinState* find(MemberId id) const {
    if (joins_.empty()) return nullptr;
    auto it = joins_.find(id);
    return it == joins_.end() ? nullptr : &it->second;
  }
  bool clocked_running() const;
  // A joiner with nothing more to send ends its clocked phase: the others
  // must not hold their increase for a share nobody uses.
  void end_clocked(MemberId id);
  void erase(MemberId id) { joins_.erase(id); }
  void clear() { joins_.clear(); }
  bool empty() const { return joins_.empty(); }
  const Map& all() const { return joins_; }

 private:
  Duration efcm_interval(const CongestionDomain& d) const;

  const EnsembleConfig& config_;
  Map joins_;
};

}  // namespace egw::congestion
