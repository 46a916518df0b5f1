#include "congestion/join.h"

#include <algorithm>

namespace egw::congestion {

void Joins::start(MemberId id, CongestionDomain& d, std::uint64_t tickets,
                  std::uint64_t active_tickets, Instant now) {
  if (config_.coupling == CouplingMode::n_flows) {
    // EFCM 2.4.1: the newcomer brings its initial window to the aggregate.
    WindowLaw& law = d.law();
    const ByteCount ssthresh = law.ssthresh_bytes();
    law.set_state(saturating_add(law.cwnd_bytes(), d.initial_window_bytes()),
                  saturating_add(ssthresh, d.initial_window_bytes()));
  }
  const ByteCount share = scale(d.cwnd_bytes(), tickets, active_tickets);
  JoinState join;
  join.mode = config_.join;
  join.pacer = Pacer(config_.pacing.max_burst_packets);
  if (join.clocked()) {
    join.packets_left = static_cast<std::uint32_t>(share / config_.max_datagram_bytes);
    if (join.packets_left == 0) return;
    join.share_packets = join.packets_left;
    const Duration srtt = d.rtt().srtt() > Duration{0} ? d.rtt().srtt() : config_.initial_rtt;
    join.release_interval = std::max(us(1), srtt / join.packets_left);
    join.last_release = now;
  } else {
    join.allowance_bytes = share;
    if (share == 0) return;
  }
  joins_[id] = join;
}

void Joins::release_credit(const std::vector<SentPacket>& acked, const CongestionDomain& d,
                           Instant now) {
  for (auto& [id, j] : joins_) {
    if (!j.clocked()) continue;
    // The timer runs on the RTT as now measured: a join that began before
    // the first sample (a stream opened beside another before the handshake
    // ended: the branch's upload beside a download's request) had SRTT /
    // share on the initial RTT, 333 ms (RFC 9002), one packet per 67 ms for
    // its first 5 round trips.
    if (d.rtt().has_sample()) {
      const std::uint32_t share = std::max<std::uint32_t>(j.share_packets, 1);
      j.release_interval = std::max(us(1), d.rtt().srtt() / share);
    }
    std::uint32_t others = 0;
    for (const SentPacket& p : acked) others += p.member != id ? 1 : 0;
    if (others == 0) continue;
    // Seed 003 Algorithm 1 with N = 1: one packet of the share per packet of
    // the others acked; never more than a pacing burst at once.
    j.credit = std::min({j.credit + others, j.packets_left, config_.pacing.max_burst_packets});
    j.last_release = now;
  }
}

void Joins::on_sent(MemberId id, ByteCount bytes, const CongestionDomain& d, Instant now) {
  auto it = joins_.find(id);
  if (it == joins_.end()) return;
  JoinState& j = it->second;
  if (j.clocked()) {
    if (j.credit > 0) {
      --j.credit;
    } else {
      j.last_release = now;  // released by the timer
    }
    if (--j.packets_left == 0) joins_.erase(it);
    return;
  }
  if (j.mode == JoinMode::paced) j.pacer.on_sent(now, efcm_interval(d));
  j.allowance_bytes -= std::min(j.allowance_bytes, bytes);
  if (j.allowance_bytes == 0) joins_.erase(it);
}

void Joins::hold(const JoinState& j, const CongestionDomain& d, Instant now, SendGate& g) const {
  if (j.clocked() && j.credit == 0) {
    g.hold(j.last_release + j.release_interval, now);  // the timer fallback
  }
  if (j.mode == JoinMode::paced && j.allowance_bytes > 0) {
    g.hold(j.pacer.next_release(now, efcm_interval(d)), now);
  }
}

bool Joins::clocked_running() const {
  return std::any_of(joins_.begin(), joins_.end(),
                     [](const auto& e) { return e.second.clocked(); });
}

void Joins::end_clocked(MemberId id) {
  auto j = joins_.find(id);
  if (j != joins_.end() && j->second.clocked()) joins_.erase(j);
}

Duration Joins::efcm_interval(const CongestionDomain& d) const {
  return efcm_burst_interval(config_.pacing, d.rtt().srtt(), d.cwnd_bytes(),
                             config_.max_datagram_bytes);
}

}  // namespace egw::congestion
