#include "congestion/stride_scheduler.h"

#include <algorithm>

namespace egw::congestion {

StrideScheduler::StrideScheduler(const SchedulerConfig& config) : config_(config) {}

std::uint32_t StrideScheduler::tickets_for(const Member& m) const {
  std::uint32_t t = 1;
  switch (config_.policy) {
    case SchedulingPolicy::fair:
      t = 1;
      break;
    case SchedulingPolicy::content:
    case SchedulingPolicy::preempt:
      t = config_.class_tickets[static_cast<std::size_t>(m.cls)];
      break;
    case SchedulingPolicy::decay: {
      t = config_.decay_initial_tickets;
      for (std::uint32_t threshold : config_.decay_after_packets) {
        if (m.packets_sent >= threshold) t /= 2;
      }
      break;
    }
  }
  // A member with zero tickets would never send: every member keeps at least one.
  return std::max<std::uint32_t>(t, 1);
}

std::uint64_t StrideScheduler::stride_for(const Member& m) const {
  return std::max<std::uint64_t>(kStride1 / tickets_for(m), 1);
}

std::uint64_t StrideScheduler::effective_pass(const Member& m) const {
  return std::max(m.pass, virtual_pass_);
}

int StrideScheduler::precedence(const Member& m) const {
  return config_.policy == SchedulingPolicy::preempt && m.cls == config_.preempt_class ? 0 : 1;
}

void StrideScheduler::rescale(Member& m, std::uint64_t old_stride) {
  const std::uint64_t new_stride = stride_for(m);
  if (m.pass <= virtual_pass_ || new_stride == old_stride) return;
  // 128-bit product: a pass far ahead (many charges) times a stride of 2^20.
  const unsigned __int128 ahead = m.pass - virtual_pass_;
  const unsigned __int128 scaled = ahead * new_stride / old_stride;
  const std::uint64_t cap = ~std::uint64_t{0} - virtual_pass_;
  m.pass = virtual_pass_ + static_cast<std::uint64_t>(std::min<unsigned __int128>(scaled, cap));
}

void StrideScheduler::add(MemberId id, ContentClass cls) {
  auto it = members_.find(id);
  if (it != members_.end()) {
    set_class(id, cls);
    return;
  }
  // Starts level with the virtual time: no credit for the time before it existed.
  members_.emplace(id, Member{cls, virtual_pass_, 0});
}

void StrideScheduler::remove(MemberId id) { members_.erase(id); }

void StrideScheduler::set_class(MemberId id, ContentClass cls) {
  auto it = members_.find(id);
  if (it == members_.end() || it->second.cls == cls) return;
  const std::uint64_t old_stride = stride_for(it->second);
  it->second.cls = cls;
  rescale(it->second, old_stride);
}

void StrideScheduler::set_config(const SchedulerConfig& config) {
  std::map<MemberId, std::uint64_t> old_strides;
  for (const auto& [id, m] : members_) old_strides[id] = stride_for(m);
  config_ = config;
  for (auto& [id, m] : members_) rescale(m, old_strides[id]);
}

std::optional<MemberId> StrideScheduler::pick(
    const std::function<bool(MemberId)>& eligible) const {
  std::optional<MemberId> best;
  int best_precedence = 0;
  std::uint64_t best_pass = 0;
  // Ascending ids, strict comparisons: ties go to the lowest id. eligible() is
  // only asked about members that would beat the current best.
  for (const auto& [id, m] : members_) {
    const int prec = precedence(m);
    const std::uint64_t pass = effective_pass(m);
    const bool better =
        !best || prec < best_precedence || (prec == best_precedence && pass < best_pass);
    if (!better || !eligible(id)) continue;
    best = id;
    best_precedence = prec;
    best_pass = pass;
  }
  return best;
}

void StrideScheduler::on_sent(MemberId id) { charge(id, true); }

void StrideScheduler::on_sent_unscheduled(MemberId id) { charge(id, false); }

void StrideScheduler::charge(MemberId id, bool in_turn) {
  auto it = members_.find(id);
  if (it == members_.end()) return;
  Member& m = it->second;
  const std::uint64_t start = effective_pass(m);
  // The packet in service defines the virtual time (SFQ); monotone. An out of
  // turn packet is not "in service" on the schedule: it leaves it alone.
  if (in_turn) virtual_pass_ = std::max(virtual_pass_, start);
  m.pass = start + stride_for(m);
  ++m.packets_sent;  // decay: the new tickets apply from the next charge
}

std::uint32_t StrideScheduler::tickets(MemberId id) const {
  auto it = members_.find(id);
  return it == members_.end() ? 0 : tickets_for(it->second);
}

std::size_t StrideScheduler::size() const { return members_.size(); }

bool StrideScheduler::contains(MemberId id) const { return members_.contains(id); }

}  // namespace egw::congestion
