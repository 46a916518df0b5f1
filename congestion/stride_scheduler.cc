#include "congestion/stride_scheduler.h"

#include <algorithm>
#include <numeric>

namespace egw::congestion {

// ------------------------------------------------------------------ heap

template <class Where>
void StrideScheduler::Heap::push(const Slot& slot, Where where) {
  slots.push_back(slot);
  where(slot.owner) = slots.size() - 1;
  sift_up(slots.size() - 1, where);
}

template <class Where>
void StrideScheduler::Heap::erase(std::size_t index, Where where) {
  where(slots[index].owner) = kNotReady;
  const Slot last = slots.back();
  slots.pop_back();
  if (index == slots.size()) return;  // it was the last slot
  update(index, last, where);
}

template <class Where>
void StrideScheduler::Heap::update(std::size_t index, const Slot& slot, Where where) {
  slots[index] = slot;
  where(slot.owner) = index;
  if (index > 0 && slots[index] < slots[(index - 1) / 2]) {
    sift_up(index, where);
  } else {
    sift_down(index, where);
  }
}

template <class Where>
void StrideScheduler::Heap::sift_up(std::size_t index, Where where) {
  const Slot moving = slots[index];
  while (index > 0) {
    const std::size_t parent = (index - 1) / 2;
    if (!(moving < slots[parent])) break;
    slots[index] = slots[parent];
    where(slots[index].owner) = index;
    index = parent;
  }
  slots[index] = moving;
  where(moving.owner) = index;
}

template <class Where>
void StrideScheduler::Heap::sift_down(std::size_t index, Where where) {
  const Slot moving = slots[index];
  const std::size_t n = slots.size();
  while (true) {
    std::size_t best = index;
    const Slot* best_slot = &moving;
    for (std::size_t child : {2 * index + 1, 2 * index + 2}) {
      if (child < n && slots[child] < *best_slot) {
        best = child;
        best_slot = &slots[child];
      }
    }
    if (best == index) break;
    slots[index] = slots[best];
    where(slots[index].owner) = index;
    index = best;
  }
  slots[index] = moving;
  where(moving.owner) = index;
}

// ------------------------------------------------------------------ policy

StrideScheduler::StrideScheduler(const SchedulerConfig& config) : config_(config) {
  for (std::size_t g = 0; g < kGroupCount; ++g) groups_[g].tickets = group_tickets(g);
}

bool StrideScheduler::flat() const {
  return config_.policy == SchedulingPolicy::fair || config_.policy == SchedulingPolicy::decay;
}

std::uint8_t StrideScheduler::group_of(ContentClass cls) const {
  return flat() ? 0 : static_cast<std::uint8_t>(cls);
}

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

std::uint32_t StrideScheduler::weight_for(const Member& m) const {
  // Classed policies split a class's share evenly; flat ones rank members
  // by their own tickets.
  return flat() ? tickets_for(m) : 1;
}

std::uint32_t StrideScheduler::group_tickets(std::size_t group) const {
  if (flat()) return 1;
  return std::max<std::uint32_t>(config_.class_tickets[group], 1);
}

std::uint64_t StrideScheduler::stride(std::uint32_t tickets) {
  return std::max<std::uint64_t>(kStride1 / std::max<std::uint32_t>(tickets, 1), 1);
}

int StrideScheduler::precedence(std::size_t group) const {
  if (config_.policy == SchedulingPolicy::preempt &&
      group == static_cast<std::size_t>(config_.preempt_class)) {
    return 0;
  }
  return render_blocking(group) && render_blocking_credit_ >= 0 ? 1 : 2;
}

bool StrideScheduler::render_blocking(std::size_t group) const {
  return has_realtime_precedence(config_.policy) && config_.render_blocking_cap_percent > 0 &&
         (group == static_cast<std::size_t>(ContentClass::html) ||
          group == static_cast<std::size_t>(ContentClass::script));
}

bool StrideScheduler::separate(std::size_t group) const {
  return group == kRealtimeGroup && has_realtime_precedence(config_.policy);
}

std::uint64_t StrideScheduler::rescaled_ahead(std::uint64_t pass, std::uint64_t clock,
                                              std::uint32_t old_tickets,
                                              std::uint32_t new_tickets) {
  if (pass <= clock) return 0;
  const std::uint64_t old_stride = stride(old_tickets);
  const std::uint64_t new_stride = stride(new_tickets);
  if (old_stride == new_stride) return pass - clock;
  // 128-bit product: a pass far ahead (many charges) times a stride of 2^20.
  const unsigned __int128 scaled =
      static_cast<unsigned __int128>(pass - clock) * new_stride / old_stride;
  return static_cast<std::uint64_t>(
      std::min<unsigned __int128>(scaled, ~std::uint64_t{0} - clock));
}

// ------------------------------------------------------------------ members

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

void StrideScheduler::join_group(Member& m) {
  total_tickets_ += m.tickets;
}

void StrideScheduler::leave_group(Member& m) {
  make_unready(m);
  total_tickets_ -= m.tickets;
}

void StrideScheduler::make_ready(MemberId id, std::uint32_t index, Member& m) {
  if (m.heap_index != kNotReady) return;
  Group& g = groups_[m.group];
  m.pass = std::max(m.pass, g.virtual_pass);  // no credit for the time it had nothing to send
  g.ready.push(Slot{1, m.pass, id, index},
               [this](std::uint32_t i) -> std::size_t& { return pool_[i].heap_index; });
  ready_tickets_ += m.tickets;
  ++ready_members_;
  group_changed(m.group);
}

void StrideScheduler::make_unready(Member& m) {
  if (m.heap_index == kNotReady) return;
  Group& g = groups_[m.group];
  g.ready.erase(m.heap_index,
                [this](std::uint32_t i) -> std::size_t& { return pool_[i].heap_index; });
  ready_tickets_ -= m.tickets;
  --ready_members_;
  group_changed(m.group);
}

void StrideScheduler::refresh(MemberId id, std::uint32_t index, Member& m) {
  const std::uint32_t t = tickets_for(m);
  const std::uint32_t w = weight_for(m);
  Group& g = groups_[m.group];
  total_tickets_ = total_tickets_ - m.tickets + t;
  if (m.heap_index != kNotReady) {
    ready_tickets_ = ready_tickets_ - m.tickets + t;
    g.ready.update(m.heap_index, Slot{1, m.pass, id, index},
                   [this](std::uint32_t i) -> std::size_t& { return pool_[i].heap_index; });
  }
  m.tickets = t;
  m.weight = w;
}

void StrideScheduler::group_changed(std::size_t group) {
  Group& g = groups_[group];
  auto where = [this](std::uint32_t i) -> std::size_t& { return groups_[i].heap_index; };
  if (g.ready.slots.empty() || separate(group)) {
    if (g.heap_index == kNotReady) return;
    classes_.erase(g.heap_index, where);
    return;
  }
  if (g.heap_index == kNotReady) {
    g.pass = std::max(g.pass, virtual_pass_);  // a class that wakes up gets no credit either
    classes_.push(Slot{precedence(group), g.pass, g.ready.slots.front().id,
                       static_cast<std::uint32_t>(group)},
                  where);
    return;
  }
  classes_.update(g.heap_index,
                  Slot{precedence(group), g.pass, g.ready.slots.front().id,
                       static_cast<std::uint32_t>(group)},
                  where);
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
  Member& m = pool_[index];
  m = Member{};
  m.cls = cls;
  m.group = group_of(cls);
  // Starts level with its class's clock: no credit for the time before it existed.
  m.pass = groups_[m.group].virtual_pass;
  m.tickets = tickets_for(m);
  m.weight = weight_for(m);
  index_.emplace(id, index);
  join_group(m);
  make_ready(id, index, m);
}

void StrideScheduler::remove(MemberId id) {
  auto it = index_.find(id);
  if (it == index_.end()) return;
  leave_group(pool_[it->second]);
  free_slots_.push_back(it->second);
  index_.erase(it);
}

void StrideScheduler::set_ready(MemberId id, bool ready) {
  std::uint32_t index = 0;
  Member* m = find(id, &index);
  if (!m) return;
  if (ready) {
    make_ready(id, index, *m);
  } else {
    make_unready(*m);
  }
}

bool StrideScheduler::ready(MemberId id) const {
  const Member* m = find(id);
  return m && m->heap_index != kNotReady;
}

void StrideScheduler::set_class(MemberId id, ContentClass cls) {
  std::uint32_t index = 0;
  Member* m = find(id, &index);
  if (!m || m->cls == cls) return;
  const std::uint8_t group = group_of(cls);
  if (group == m->group) {  // flat policies: only the public tickets may change
    m->cls = cls;
    refresh(id, index, *m);
    return;
  }
  const bool was_ready = m->heap_index != kNotReady;
  const std::uint32_t old_weight = m->weight;
  const std::uint64_t old_clock = groups_[m->group].virtual_pass;
  leave_group(*m);
  m->cls = cls;
  m->group = group;
  m->tickets = tickets_for(*m);
  m->weight = weight_for(*m);
  // Its debt within the old class follows it; the new class is charged from
  // its own pass, level with the others once it wakes up (group_changed).
  m->pass = groups_[group].virtual_pass +
            rescaled_ahead(m->pass, old_clock, old_weight, m->weight);
  join_group(*m);
  if (was_ready) make_ready(id, index, *m);
}

void StrideScheduler::set_config(const SchedulerConfig& config) {
  // An admin reload: O(members log members) is fine here, never per packet.
  const bool was_flat = flat();
  std::array<std::uint32_t, kGroupCount> old_group_tickets{};
  for (std::size_t g = 0; g < kGroupCount; ++g) old_group_tickets[g] = groups_[g].tickets;
  std::vector<std::uint64_t> ahead(pool_.size(), 0);
  std::vector<bool> was_ready(pool_.size(), false);
  std::vector<std::uint32_t> old_weight(pool_.size(), 1);
  for (const auto& [id, index] : index_) {
    Member& m = pool_[index];
    was_ready[index] = m.heap_index != kNotReady;
    old_weight[index] = m.weight;
    ahead[index] = m.pass > groups_[m.group].virtual_pass ? m.pass - groups_[m.group].virtual_pass : 0;
    leave_group(m);
  }
  config_ = config;
  for (std::size_t g = 0; g < kGroupCount; ++g) {
    Group& group = groups_[g];
    group.tickets = group_tickets(g);
    group.pass = was_flat == flat()
                     ? virtual_pass_ + rescaled_ahead(group.pass, virtual_pass_,
                                                      old_group_tickets[g], group.tickets)
                     : virtual_pass_;  // regrouped: every class starts level
  }
  for (const auto& [id, index] : index_) {
    Member& m = pool_[index];
    m.group = group_of(m.cls);
    m.tickets = tickets_for(m);
    m.weight = weight_for(m);
    m.pass = groups_[m.group].virtual_pass +
             rescaled_ahead(ahead[index], 0, old_weight[index], m.weight);
    join_group(m);
    if (was_ready[index]) make_ready(id, index, m);
  }
}

// ------------------------------------------------------------------ picking

bool StrideScheduler::realtime_below_cap() const {
  // Its share so far is within the cap (it may pass it by one packet).
  return realtime_credit_ >= 0;
}

bool StrideScheduler::realtime_ready() const {
  return separate(kRealtimeGroup) && !groups_[kRealtimeGroup].ready.slots.empty();
}

bool StrideScheduler::realtime_first() const {
  return realtime_ready() && (classes_.slots.empty() || realtime_below_cap());
}

std::optional<MemberId> StrideScheduler::pick() const {
  if (realtime_first()) return groups_[kRealtimeGroup].ready.slots.front().id;
  if (!classes_.slots.empty()) return classes_.slots.front().id;  // the top class's top member
  return std::nullopt;
}

std::optional<MemberId> StrideScheduler::pick(
    const std::function<bool(MemberId)>& eligible) const {
  // Best-first walks of the heaps: a frontier of heap indexes ordered by key;
  // a node's children can only be worse than the node itself. Classes in
  // order, and within each class its members in order. Realtime first while
  // below its cap; otherwise only when nobody else can send (work
  // conserving: the cap protects others, not the link).
  auto walk = [](const std::vector<Slot>& heap, std::vector<std::size_t>& frontier,
                 auto&& visit) -> bool {
    frontier.clear();
    auto worse = [&](std::size_t a, std::size_t b) { return heap[b] < heap[a]; };
    auto push = [&](std::size_t i) {
      if (i >= heap.size()) return;
      frontier.push_back(i);
      std::push_heap(frontier.begin(), frontier.end(), worse);
    };
    push(0);
    while (!frontier.empty()) {
      std::pop_heap(frontier.begin(), frontier.end(), worse);
      const std::size_t i = frontier.back();
      frontier.pop_back();
      if (visit(heap[i])) return true;
      push(2 * i + 1);
      push(2 * i + 2);
    }
    return false;
  };
  std::optional<MemberId> found;
  auto members = [&](std::size_t group) {
    return walk(groups_[group].ready.slots, member_search_, [&](const Slot& member) {
      if (!eligible(member.id)) return false;
      found = member.id;
      return true;
    });
  };
  const bool realtime = realtime_ready();
  if (realtime && realtime_below_cap() && members(kRealtimeGroup)) return found;
  walk(classes_.slots, class_search_, [&](const Slot& cls) { return members(cls.owner); });
  if (!found && realtime && !realtime_below_cap()) members(kRealtimeGroup);
  return found;
}

void StrideScheduler::on_sent(MemberId id, ByteCount bytes) { charge(id, true, true, bytes); }

void StrideScheduler::on_sent_unscheduled(MemberId id, ByteCount bytes) { charge(id, false, false, bytes); }

void StrideScheduler::on_sent_in_run(MemberId id, ByteCount bytes) { charge(id, true, false, bytes); }

void StrideScheduler::charge_realtime_share(const Member& m, ByteCount bytes) {
  if (!has_realtime_precedence(config_.policy)) return;
  const bool realtime = m.group == kRealtimeGroup;
  // A realtime packet sent while nobody else waits takes nothing from anyone.
  if (realtime && classes_.slots.empty()) return;
  constexpr std::int64_t kBound = 100 * kRealtimeBurstPackets * static_cast<std::int64_t>(kFullPacketBytes);
  const auto b = static_cast<std::int64_t>(bytes);
  realtime_credit_ += config_.realtime_cap_percent * b;
  if (realtime) realtime_credit_ -= 100 * b;
  realtime_credit_ = std::clamp(realtime_credit_, -kBound, kBound);
}

bool StrideScheduler::render_blocking_others_wait() const {
  // A ready class below the render-blocking ones (not realtime, not preempting).
  for (std::size_t g = 0; g < kGroupCount; ++g) {
    if (!render_blocking(g) && !separate(g) && precedence(g) == 2 && !groups_[g].ready.slots.empty()) {
      return true;
    }
  }
  return false;
}

void StrideScheduler::charge_render_blocking_share(const Member& m) {
  // Realtime and the preempt class have their own precedence: neither pays
  // nor earns here.
  if (!has_realtime_precedence(config_.policy) || config_.render_blocking_cap_percent == 0 ||
      separate(m.group) || precedence(m.group) == 0) {
    return;
  }
  const bool blocking = render_blocking(m.group);
  // A render-blocking packet sent while no other class waits takes nothing from anyone.
  if (blocking && !render_blocking_others_wait()) return;
  const bool was_first = render_blocking_credit_ >= 0;
  constexpr std::int64_t kBound = 100 * kRealtimeBurstPackets;
  render_blocking_credit_ += config_.render_blocking_cap_percent;
  if (blocking) render_blocking_credit_ -= 100;
  render_blocking_credit_ = std::clamp(render_blocking_credit_, -kBound, kBound);
  if (was_first == (render_blocking_credit_ >= 0)) return;
  for (ContentClass cls : {ContentClass::html, ContentClass::script}) {
    group_changed(static_cast<std::size_t>(cls));  // re-keyed: precedence 1 <-> 2
  }
}

void StrideScheduler::charge(MemberId id, bool class_in_turn, bool member_in_turn, ByteCount bytes) {
  std::uint32_t index = 0;
  Member* m = find(id, &index);
  if (!m) return;
  charge_realtime_share(*m, bytes);
  charge_render_blocking_share(*m);
  Group& g = groups_[m->group];
  const std::uint64_t member_start = std::max(m->pass, g.virtual_pass);
  // The packet in service defines each level's virtual time (SFQ); monotone.
  // An out of turn packet is not "in service" on the schedule: it leaves them
  // alone. Realtime jumps the classes' turns: it never moves their clock.
  if (!separate(m->group)) {
    const std::uint64_t class_start = std::max(g.pass, virtual_pass_);
    if (class_in_turn) virtual_pass_ = std::max(virtual_pass_, class_start);
    g.pass = class_start + stride(g.tickets);
  }
  if (member_in_turn) g.virtual_pass = std::max(g.virtual_pass, member_start);
  m->pass = member_start + stride(m->weight);
  ++m->packets_sent;  // decay: the new tickets apply from the next charge
  refresh(id, index, *m);
  group_changed(m->group);
}

// ------------------------------------------------------------------ figures

std::uint32_t StrideScheduler::tickets(MemberId id) const {
  const Member* m = find(id);
  return m ? m->tickets : 0;
}

namespace {

ScheduleShare lowest_terms(std::uint64_t num, std::uint64_t den) {
  if (den == 0) return {};
  const std::uint64_t d = std::gcd(num, den);
  return d == 0 ? ScheduleShare{} : ScheduleShare{num / d, den / d};
}

}  // namespace

std::optional<ScheduleShare> StrideScheduler::precedence_share(MemberId id) const {
  const Member* m = find(id);
  if (!m) return std::nullopt;
  const Group& g = groups_[m->group];
  const std::uint64_t members = std::max<std::uint64_t>(g.ready.slots.size(), 1);
  if (separate(m->group)) {
    if (!realtime_below_cap()) return std::nullopt;
    return lowest_terms(config_.realtime_cap_percent, 100 * members);
  }
  const int p = precedence(m->group);
  if (p == 0) return lowest_terms(1, members);
  if (p != 1 || !render_blocking_others_wait()) return std::nullopt;
  std::uint64_t tickets = 0;  // of the render-blocking classes with a ready member
  for (std::size_t i = 0; i < kGroupCount; ++i) {
    if (render_blocking(i) && (i == m->group || !groups_[i].ready.slots.empty())) {
      tickets += groups_[i].tickets;
    }
  }
  return lowest_terms(config_.render_blocking_cap_percent * std::uint64_t{g.tickets},
                      100 * tickets * members);
}

std::size_t StrideScheduler::size() const { return index_.size(); }

bool StrideScheduler::contains(MemberId id) const { return index_.contains(id); }

}  // namespace egw::congestion
