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

std::uint8_t StrideScheduler::heap_for(const Member& m) const {
  return has_realtime_precedence(config_.policy) && m.cls == ContentClass::realtime ? kRealtimeHeap : kOtherHeap;
}

std::uint64_t StrideScheduler::effective_pass(const Member& m) const {
  return std::max(m.pass, virtual_pass_[m.heap]);
}

int StrideScheduler::precedence(const Member& m) const {
  return config_.policy == SchedulingPolicy::preempt && m.cls == config_.preempt_class ? 0 : 1;
}

void StrideScheduler::rescale(Member& m, std::uint64_t old_stride) {
  const std::uint64_t new_stride = stride_for(m);
  const std::uint64_t vt = virtual_pass_[m.heap];
  if (m.pass <= vt || new_stride == old_stride) return;
  // 128-bit product: a pass far ahead (many charges) times a stride of 2^20.
  const unsigned __int128 ahead = m.pass - vt;
  const unsigned __int128 scaled = ahead * new_stride / old_stride;
  const std::uint64_t cap = ~std::uint64_t{0} - vt;
  m.pass = vt + static_cast<std::uint64_t>(std::min<unsigned __int128>(scaled, cap));
}

StrideScheduler::Member* StrideScheduler::find(MemberId id, std::uint32_t* index) {
  auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  if (index) *index = it->second;
  return &pool_[it->second];
}

const StrideScheduler::Member* StrideScheduler::find(MemberId id) const {
  auto it = index_.find(id);
  return it == index_.end() ? nullptr : &pool_[it->second];
}

void StrideScheduler::refresh(MemberId id, std::uint32_t index, Member& m) {
  const std::uint32_t t = tickets_for(m);
  total_tickets_ = total_tickets_ - m.tickets + t;
  if (m.heap_index != kNotReady) {
    ready_tickets_ = ready_tickets_ - m.tickets + t;
    heaps_[m.heap][m.heap_index] = Slot{precedence(m), m.pass, id, index};
    heap_update(m.heap, m.heap_index);
  }
  m.tickets = t;
}

void StrideScheduler::rehome(MemberId id, std::uint32_t index, Member& m) {
  const std::uint8_t heap = heap_for(m);
  if (heap == m.heap) return;
  const bool was_ready = m.heap_index != kNotReady;
  heap_erase(m);
  // Passes on the two clocks are not comparable: it starts level with its
  // new heap's virtual time (no credit, no debt).
  m.heap = heap;
  m.pass = virtual_pass_[heap];
  if (was_ready) heap_push(id, index, m);
}

void StrideScheduler::add(MemberId id, ContentClass cls) {
  if (index_.contains(id)) {
    set_class(id, cls);
    return;
  }
  std::uint32_t index = static_cast<std::uint32_t>(pool_.size());
  if (!free_slots_.empty()) {
    index = free_slots_.back();
    free_slots_.pop_back();
  } else {
    pool_.emplace_back();
  }
  // Starts level with the virtual time: no credit for the time before it existed.
  Member& m = pool_[index];
  m = Member{cls, kOtherHeap, 0, 0, 0, kNotReady};
  m.heap = heap_for(m);
  m.pass = virtual_pass_[m.heap];
  m.tickets = tickets_for(m);
  total_tickets_ += m.tickets;
  index_.emplace(id, index);
  heap_push(id, index, m);
}

void StrideScheduler::remove(MemberId id) {
  auto it = index_.find(id);
  if (it == index_.end()) return;
  Member& m = pool_[it->second];
  heap_erase(m);
  total_tickets_ -= m.tickets;
  free_slots_.push_back(it->second);
  index_.erase(it);
}

void StrideScheduler::set_ready(MemberId id, bool ready) {
  std::uint32_t index = 0;
  Member* m = find(id, &index);
  if (!m || ready == (m->heap_index != kNotReady)) return;
  if (!ready) {
    heap_erase(*m);
    return;
  }
  m->pass = effective_pass(*m);  // no credit for the time it had nothing to send
  heap_push(id, index, *m);
}

bool StrideScheduler::ready(MemberId id) const {
  const Member* m = find(id);
  return m && m->heap_index != kNotReady;
}

void StrideScheduler::set_class(MemberId id, ContentClass cls) {
  std::uint32_t index = 0;
  Member* m = find(id, &index);
  if (!m || m->cls == cls) return;
  const std::uint64_t old_stride = stride_for(*m);
  m->cls = cls;
  rescale(*m, old_stride);
  rehome(id, index, *m);
  refresh(id, index, *m);
}

void StrideScheduler::set_config(const SchedulerConfig& config) {
  // An admin reload: O(members) is fine here, never per packet.
  std::vector<std::uint64_t> old_strides(pool_.size(), 0);
  for (const auto& [id, index] : index_) old_strides[index] = stride_for(pool_[index]);
  config_ = config;
  for (const auto& [id, index] : index_) {
    rescale(pool_[index], old_strides[index]);
    rehome(id, index, pool_[index]);
    refresh(id, index, pool_[index]);
  }
}

bool StrideScheduler::realtime_below_cap() const {
  // Its share so far is within the cap (it may pass it by one packet).
  return realtime_credit_ >= 0;
}

std::optional<MemberId> StrideScheduler::pick() const {
  const auto& realtime = heaps_[kRealtimeHeap];
  const auto& other = heaps_[kOtherHeap];
  if (!realtime.empty() && (other.empty() || realtime_below_cap())) return realtime.front().id;
  if (!other.empty()) return other.front().id;
  return std::nullopt;
}

std::optional<MemberId> StrideScheduler::pick(
    const std::function<bool(MemberId)>& eligible) const {
  // Realtime first while below its cap; otherwise only when nobody else
  // can send (work conserving: the cap protects others, not the link).
  const bool realtime_first = realtime_below_cap();
  const std::uint8_t first = realtime_first ? kRealtimeHeap : kOtherHeap;
  if (auto id = search(first, eligible)) return id;
  return search(realtime_first ? kOtherHeap : kRealtimeHeap, eligible);
}

std::optional<MemberId> StrideScheduler::search(std::uint8_t h,
                                                const std::function<bool(MemberId)>& eligible) const {
  // Best-first walk of the heap: a frontier of heap indexes ordered by key;
  // a node's children can only be worse than the node itself.
  const auto& heap = heaps_[h];
  search_.clear();
  auto worse = [&](std::size_t a, std::size_t b) { return heap[b] < heap[a]; };
  auto push = [&](std::size_t i) {
    if (i >= heap.size()) return;
    search_.push_back(i);
    std::push_heap(search_.begin(), search_.end(), worse);
  };
  push(0);
  while (!search_.empty()) {
    std::pop_heap(search_.begin(), search_.end(), worse);
    const std::size_t i = search_.back();
    search_.pop_back();
    if (eligible(heap[i].id)) return heap[i].id;
    push(2 * i + 1);
    push(2 * i + 2);
  }
  return std::nullopt;
}

void StrideScheduler::on_sent(MemberId id) { charge(id, true); }

void StrideScheduler::on_sent_unscheduled(MemberId id) { charge(id, false); }

void StrideScheduler::charge_realtime_share(const Member& m) {
  if (!has_realtime_precedence(config_.policy)) return;
  const bool realtime = m.heap == kRealtimeHeap;
  // A realtime packet sent while nobody else waits takes nothing from anyone.
  if (realtime && heaps_[kOtherHeap].empty()) return;
  constexpr std::int64_t kBound = 100 * kRealtimeBurstPackets;
  realtime_credit_ += config_.realtime_cap_percent;
  if (realtime) realtime_credit_ -= 100;
  realtime_credit_ = std::clamp(realtime_credit_, -kBound, kBound);
}

void StrideScheduler::charge(MemberId id, bool in_turn) {
  std::uint32_t index = 0;
  Member* m = find(id, &index);
  if (!m) return;
  charge_realtime_share(*m);
  const std::uint64_t start = effective_pass(*m);
  // The packet in service defines the virtual time (SFQ); monotone. An out of
  // turn packet is not "in service" on the schedule: it leaves it alone.
  if (in_turn) virtual_pass_[m->heap] = std::max(virtual_pass_[m->heap], start);
  m->pass = start + stride_for(*m);
  ++m->packets_sent;  // decay: the new tickets apply from the next charge
  refresh(id, index, *m);
}

std::uint32_t StrideScheduler::tickets(MemberId id) const {
  const Member* m = find(id);
  return m ? m->tickets : 0;
}

std::size_t StrideScheduler::size() const { return index_.size(); }

bool StrideScheduler::contains(MemberId id) const { return index_.contains(id); }

void StrideScheduler::place(std::uint8_t h, std::size_t index, const Slot& slot) {
  heaps_[h][index] = slot;
  pool_[slot.member].heap_index = index;
}

void StrideScheduler::heap_push(MemberId id, std::uint32_t index, Member& m) {
  auto& heap = heaps_[m.heap];
  heap.push_back(Slot{precedence(m), m.pass, id, index});
  m.heap_index = heap.size() - 1;
  ready_tickets_ += m.tickets;
  sift_up(m.heap, m.heap_index);
}

void StrideScheduler::heap_erase(Member& m) {
  if (m.heap_index == kNotReady) return;
  auto& heap = heaps_[m.heap];
  const std::size_t index = m.heap_index;
  m.heap_index = kNotReady;
  ready_tickets_ -= m.tickets;
  const Slot last = heap.back();
  heap.pop_back();
  if (index == heap.size()) return;  // it was the last slot
  place(m.heap, index, last);
  heap_update(m.heap, index);
}

void StrideScheduler::heap_update(std::uint8_t h, std::size_t index) {
  const auto& heap = heaps_[h];
  if (index > 0 && heap[index] < heap[(index - 1) / 2]) {
    sift_up(h, index);
  } else {
    sift_down(h, index);
  }
}

void StrideScheduler::sift_up(std::uint8_t h, std::size_t index) {
  auto& heap = heaps_[h];
  const Slot moving = heap[index];
  while (index > 0) {
    const std::size_t parent = (index - 1) / 2;
    if (!(moving < heap[parent])) break;
    place(h, index, heap[parent]);
    index = parent;
  }
  place(h, index, moving);
}

void StrideScheduler::sift_down(std::uint8_t h, std::size_t index) {
  auto& heap = heaps_[h];
  const Slot moving = heap[index];
  const std::size_t n = heap.size();
  while (true) {
    std::size_t best = index;
    const Slot* best_slot = &moving;
    for (std::size_t child : {2 * index + 1, 2 * index + 2}) {
      if (child < n && heap[child] < *best_slot) {
        best = child;
        best_slot = &heap[child];
      }
    }
    if (best == index) break;
    place(h, index, heap[best]);
    index = best;
  }
  place(h, index, moving);
}

}  // namespace egw::congestion
