// Which member of an ensemble sends the next packet.
//
// Stride scheduling (Waldspurger & Weihl 1995, as used by E-TCP): every member
// holds tickets; its stride is kStride1 / tickets; the eligible member with the
// smallest pass sends and its pass advances by its stride. Over many packets a
// member's share is tickets / sum(tickets), and the error is at most one packet.
// "How much may be sent" is the controller's business (Ensemble); this class
// only answers "who sends next".
//
// Virtual time, and why nobody gets back-credit. Passes live on one virtual
// clock `virtual_pass_`: the pass the last charged member had when it sent (the
// start tag of the packet "in service", as in Start-time Fair Queuing, Goyal
// et al. 1996). Members that keep sending never fall behind it, because pick()
// always serves the smallest pass. A member that joins, or that was not
// eligible while others sent, would otherwise hold an old, small pass and then
// send a burst until it caught up (its "saved" share). Instead its pass is read
// as max(pass, virtual_pass_) wherever it is compared or charged, so it
// restarts level with the members that kept running: E-TCP's joiner splits
// the window at once (Fig. 4), never catches up on missed packets.
//
// Packets that skip pick() (retransmissions go first, E-TCP 3.3) are either
// not charged (E-TCP: the lost original was already charged) or charged with
// on_sent_unscheduled(), which advances the sender's pass but not the virtual
// time. Charging them with on_sent() would move the virtual time to the
// sender's pass and cost members behind it up to one stride of the sender
// (a bulk retransmission could cost an html member 12 packets of precedence).
//
// Ticket changes (set_class, set_config) rescale the part of the pass that is
// ahead of the virtual time by new_stride / old_stride (Waldspurger's ticket
// modification), so they take effect on the member's next packet and never
// create credit. Decay changes apply from the next charge on: the packet that
// crosses a threshold is charged at the old tickets.
//
// Ready members. Only members marked ready (the ensemble: backlogged, i.e.
// with something to send) are scheduled. They live in an indexed binary heap
// ordered by (precedence, pass, id), so the next sender is the heap's top:
// pick() costs O(1), a charge or a readiness change O(log ready), and members
// that are not ready cost nothing per packet. A member's pass is raised to
// the virtual time when it becomes ready (no credit for the time it had
// nothing to send); one that stays ready but is skipped by pick(eligible)
// keeps its old pass, which wins ties at the virtual time for one packet at
// most (it is then charged from the virtual time, like everyone).
// Ticket totals (all members, ready members) are kept as running sums.
//
// Realtime (issue 21). Under the content and preempt policies, realtime
// members (calls) live in their own heap with their own virtual time (a
// packet that jumps the queue must not move the clock the others are
// compared on) and go strictly first while realtime's share of the packets
// sent stays within realtime_cap_percent; past it they wait while anyone
// else is ready, so nothing starves. The share is a deficit counter, O(1)
// per packet, in hundredths of a packet: every packet sent earns realtime
// cap_percent, every realtime packet costs 100, and realtime may go first
// while the counter is >= 0 (its share so far within the cap). Realtime
// packets sent while nobody else is ready are not counted (a call alone owes
// nothing). The counter is clamped to +-kRealtimeBurstPackets packets, so
// after idling a call gets at most a short burst ahead (16 / (1 - cap)
// packets). Realtime members share among themselves by tickets.
//
// Determinism: ties go to the lowest id.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/content_class.h"
#include "common/units.h"
#include "congestion/packet.h"

namespace egw::congestion {

enum class SchedulingPolicy {
  fair,     // one ticket each
  content,  // tickets by content class (E-TCP: HTML 12, Java 6, image 3, FTP 1)
  decay,    // 16 tickets, halved after the 5th, 10th, 20th and 40th packet
  preempt,  // E-TCP HTML-pre: the preempt class strictly first, others by content
};
// Under content and preempt, realtime members go first up to a cap.
constexpr bool has_realtime_precedence(SchedulingPolicy p) {
  return p == SchedulingPolicy::content || p == SchedulingPolicy::preempt;
}

struct SchedulerConfig {
  SchedulingPolicy policy = SchedulingPolicy::content;
  // Indexed by ContentClass: html, script, image, bulk (E-TCP's), then
  // realtime (first anyway, up to the cap; this splits among calls and
  // counts when the cap is reached), interactive, web (html's equal),
  // streaming.
  std::array<std::uint32_t, kContentClassCount> class_tickets{12, 6, 3, 1, 12, 16, 12, 2};
  // Realtime's share of the packets sent while others wait, at most.
  std::uint32_t realtime_cap_percent = 30;
  ContentClass preempt_class = ContentClass::html;
  std::uint32_t decay_initial_tickets = 16;
  // After sending this many packets a member's tickets halve (never below 1).
  std::array<std::uint32_t, 4> decay_after_packets{5, 10, 20, 40};
};

class StrideScheduler {
 public:
  explicit StrideScheduler(const SchedulerConfig& config = {});

  // New members start ready (pass level with the virtual time).
  void add(MemberId id, ContentClass cls);
  void remove(MemberId id);
  // Only ready members are picked. Becoming ready raises the pass to the
  // virtual time.
  void set_ready(MemberId id, bool ready);
  bool ready(MemberId id) const;
  std::size_t ready_count() const { return heaps_[0].size() + heaps_[1].size(); }
  // Classes are often learned after a stream's first bytes; takes effect on
  // the member's next packet without giving it back-credit.
  void set_class(MemberId id, ContentClass cls);
  // Policies may change while members run (admin reload).
  void set_config(const SchedulerConfig& config);

  // The ready member that should send next, or nullopt; O(1).
  std::optional<MemberId> pick() const;
  // The best ready member that `eligible` accepts, visiting ready members in
  // schedule order (best first) and stopping at the first accepted one: the
  // cost is the number of members rejected before it. Does not advance anything.
  std::optional<MemberId> pick(const std::function<bool(MemberId)>& eligible) const;
  // Charge `id` for one packet it sent (chosen by pick()). Unknown ids (such
  // as the ensemble's control pseudo-member) are ignored.
  void on_sent(MemberId id);
  // Charge `id` for a packet it sent out of turn (not chosen by pick(), e.g. a
  // retransmission): it pays its stride, nobody else's position changes.
  void on_sent_unscheduled(MemberId id);

  // Current tickets of `id` under the policy (0 when unknown). Under preempt
  // the preempt class reports its content tickets; its precedence is separate.
  std::uint32_t tickets(MemberId id) const;
  // Running sums of tickets(id): over every member, and over ready members.
  std::uint64_t total_tickets() const { return total_tickets_; }
  std::uint64_t ready_tickets() const { return ready_tickets_; }
  // Whether realtime may go first now (below its cap); for tests and status.
  bool realtime_below_cap() const;
  // Whether a realtime member is ready (in the realtime heap); O(1).
  bool realtime_ready() const { return !heaps_[kRealtimeHeap].empty(); }
  std::size_t size() const;
  bool contains(MemberId id) const;

 private:
  // kStride1 / tickets, in 64-bit integers: 2^20 keeps the rounding error of
  // a stride under 1e-6 for any realistic ticket count.
  static constexpr std::uint64_t kStride1 = std::uint64_t{1} << 20;

  static constexpr std::size_t kNotReady = ~std::size_t{0};
  // Heaps: realtime (under content/preempt) and everyone else.
  static constexpr std::uint8_t kRealtimeHeap = 0;
  static constexpr std::uint8_t kOtherHeap = 1;
  static constexpr std::int64_t kRealtimeBurstPackets = 16;

  struct Member {
    ContentClass cls = ContentClass::bulk;
    std::uint8_t heap = kOtherHeap;  // heap_for(*this); beside cls: no padding added per member
    std::uint64_t pass = 0;          // virtual time of this member's next packet
    std::uint64_t packets_sent = 0;  // drives ticket decay
    std::uint32_t tickets = 1;       // cached tickets_for(*this)
    std::size_t heap_index = kNotReady;
  };
  // A heap slot carries its sort key and where its Member lives in the pool,
  // so sifting compares slots and updates heap indexes without hashing.
  struct Slot {
    int precedence = 1;
    std::uint64_t pass = 0;
    MemberId id = 0;
    std::uint32_t member = 0;  // index into pool_
    bool operator<(const Slot& o) const {
      if (precedence != o.precedence) return precedence < o.precedence;
      if (pass != o.pass) return pass < o.pass;
      return id < o.id;
    }
  };

  std::uint32_t tickets_for(const Member& m) const;
  std::uint64_t stride_for(const Member& m) const;
  std::uint8_t heap_for(const Member& m) const;
  // The pass as charged: never behind its heap's virtual time.
  std::uint64_t effective_pass(const Member& m) const;
  // 0 for members that preempt everyone else, 1 otherwise.
  int precedence(const Member& m) const;
  // Re-express the part of m's pass ahead of the virtual time in a new stride.
  void rescale(Member& m, std::uint64_t old_stride);
  void charge(MemberId id, bool in_turn);
  // Ticket sums and heap key after m's tickets, class or pass changed.
  void refresh(MemberId id, std::uint32_t index, Member& m);
  Member* find(MemberId id, std::uint32_t* index = nullptr);
  const Member* find(MemberId id) const;

  // Moves m to heap_for(m) if its class or the policy changed that.
  void rehome(MemberId id, std::uint32_t index, Member& m);
  void charge_realtime_share(const Member& m);
  std::optional<MemberId> search(std::uint8_t heap, const std::function<bool(MemberId)>& eligible) const;

  // Heaps over ready members (min at 0).
  void heap_push(MemberId id, std::uint32_t index, Member& m);
  void heap_erase(Member& m);
  void heap_update(std::uint8_t heap, std::size_t index);  // the key at index changed
  void sift_up(std::uint8_t heap, std::size_t index);
  void sift_down(std::uint8_t heap, std::size_t index);
  void place(std::uint8_t heap, std::size_t index, const Slot& slot);

  SchedulerConfig config_;
  // Members live in a dense pool (freed slots reused); one hash lookup per
  // call finds a member, the heap then works on pool indexes.
  std::vector<Member> pool_;
  std::vector<std::uint32_t> free_slots_;
  std::unordered_map<MemberId, std::uint32_t> index_;
  std::array<std::vector<Slot>, 2> heaps_;
  mutable std::vector<std::size_t> search_;  // pick(eligible)'s frontier, reused
  std::array<std::uint64_t, 2> virtual_pass_{};  // per heap
  // Realtime's deficit counter, in hundredths of a packet.
  std::int64_t realtime_credit_ = 0;
  std::uint64_t total_tickets_ = 0;
  std::uint64_t ready_tickets_ = 0;
};

}  // namespace egw::congestion
