// Which member of an ensemble sends the next packet.
//
// Stride scheduling (Waldspurger & Weihl 1995, as used by E-TCP), in two
// levels (hierarchical stride, Waldspurger's "currencies"). Under `content`
// and `preempt` the tickets an admin writes (`script: 6, image: 3`) are the
// *classes'* shares: the ready classes take turns by their tickets, and the
// ready members of a class take its turns in equal parts. So one script
// beside five images gets 6/9 of the packets, not 6/21 (E-TCP gave each
// stream its class's tickets; over HTTP/1.1's six connections per host the
// images then outweighed the render-blocking CSS and JS). Under `fair` and
// `decay` there is one class holding every member, and the members share by
// their own tickets (one each; decaying with packets sent), as in E-TCP.
//
// Each level is a stride scheduler: an entity's stride is kStride1 / tickets;
// the ready entity with the smallest pass sends and its pass advances by its
// stride. Over many packets an entity's share is tickets / sum(tickets) of
// its level, and the error is at most one packet per level.
// "How much may be sent" is the controller's business (Ensemble); this class
// only answers "who sends next".
//
// Virtual time, and why nobody gets back-credit. Each level has its own
// virtual clock: `virtual_pass_` for the classes, Group::virtual_pass for a
// class's members. It is the pass the last charged entity had when it sent
// (the start tag of the packet "in service", as in Start-time Fair Queuing,
// Goyal et al. 1996). Entities that keep sending never fall behind it. One
// that joins, or that was not eligible while others sent, would otherwise
// hold an old, small pass and then send a burst until it caught up. Instead
// its pass is read as max(pass, virtual time) wherever it is compared or
// charged, so it restarts level with those that kept running: E-TCP's joiner
// splits the window at once (Fig. 4), never catches up on missed packets.
// A class that becomes ready (its first member does) restarts level in the
// same way; a member that joins a running class splits that class's share
// and leaves the other classes' alone.
//
// Packets that skip pick() (retransmissions go first, E-TCP 3.3) are either
// not charged (E-TCP: the lost original was already charged) or charged with
// on_sent_unscheduled(), which advances the sender's passes but not the
// virtual times. Charging them with on_sent() would move the virtual time to
// the sender's pass and cost members behind it up to one stride of the sender
// (a bulk retransmission could cost an html member 12 packets of precedence).
//
// Ticket changes (set_class, set_config) rescale the part of a pass that is
// ahead of its virtual time by new_stride / old_stride (Waldspurger's ticket
// modification), so they take effect on the next packet and never create
// credit. A member moved to another class carries the part of its pass ahead
// of the old class's clock to the new class's clock. Decay changes apply from
// the next charge on: the packet that crosses a threshold is charged at the
// old tickets.
//
// Ready members. Only members marked ready (the ensemble: backlogged, i.e.
// with something to send) are scheduled. Each class keeps an indexed binary
// heap of its ready members ordered by (pass, id), and the classes with a
// ready member are in a heap ordered by (precedence, pass, id of the class's
// first member). The next sender is the top class's top member: pick() costs
// O(1), a charge or a readiness change O(log ready members of its class +
// log classes), and members that are not ready cost nothing per packet.
// A pass is raised to its virtual time when its owner becomes ready (no
// credit for the time it had nothing to send); one that stays ready but is
// skipped by pick(eligible) keeps its old pass, which wins ties at the
// virtual time for one packet at most.
// Ticket totals (all members, ready members) are kept as running sums.
//
// Realtime (issue 21). Under the content and preempt policies the realtime
// class (calls) is kept out of the classes' turns: its members go strictly
// first while realtime's share of the bytes sent stays within
// realtime_cap_percent; past it they wait while anyone else is ready, so
// nothing starves. Bytes, not packets: a call's 200-byte datagrams beside
// full packets on a 1 Mbit/s uplink are a third of the packets but a tenth
// of the link, and a cap on packets held them back (the WAN lab's +46 ms).
// The share is a deficit counter, O(1) per packet, in hundredths of a byte:
// every byte sent earns realtime cap_percent, every realtime byte costs
// 100, and realtime may go first while the counter is >= 0 (its share so
// far within the cap). Realtime packets sent while nobody else is ready are
// not counted (a call alone owes nothing). The counter is clamped to
// +-kRealtimeBurstPackets full-size packets' bytes, so after idling a call
// gets at most a short burst ahead (16 / (1 - cap) full packets' worth).
// Calls share realtime's turns evenly, on the class's own member clock.
//
// Render-blocking first (issue 21 item 4). A page cannot render before its
// HTML, stylesheets and scripts (classes html and script) have arrived,
// and a proportional split lets five image streams of a page take a third
// of the link from the last script. Under content and preempt, with
// render_blocking_cap_percent > 0, the render-blocking classes go ahead of
// the other classes (precedence 1 of 0..2; realtime and the preempt class
// still first) while their share of the packets sent while another class
// waits stays within the cap; past it they are ordered with the others by
// their passes until the share is back within the cap. The share is a
// deficit counter like realtime's (clamped to +-kRealtimeBurstPackets
// packets); crossing the cap re-keys at most the two render-blocking classes
// in the classes' heap, O(log classes).
//
// Determinism: ties go to the lowest member id (a class's is its first
// member's).
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
  fair,     // one ticket each, one class for all
  content,  // classes share by class tickets (E-TCP: HTML 12, Java 6, image 3, FTP 1)
  decay,    // 16 tickets each, halved after the 5th, 10th, 20th and 40th packet
  preempt,  // E-TCP HTML-pre: the preempt class strictly first, others by content
};
// Under content and preempt, realtime members go first up to a cap.
constexpr bool has_realtime_precedence(SchedulingPolicy p) {
  return p == SchedulingPolicy::content || p == SchedulingPolicy::preempt;
}

struct SchedulerConfig {
  SchedulingPolicy policy = SchedulingPolicy::content;
  // Indexed by ContentClass: the class's share, split evenly among its
  // members. html, script, image, bulk (E-TCP's), then realtime (first
  // anyway, up to the cap; counts when the cap is reached), interactive,
  // web (html's equal), streaming.
  std::array<std::uint32_t, kContentClassCount> class_tickets{12, 6, 3, 1, 12, 16, 12, 2};
  // Realtime's share of the packets sent while others wait, at most.
  std::uint32_t realtime_cap_percent = 30;
  // html and script ahead of the other classes (not realtime) for at most
  // this share of the packets sent while others wait; 0: by tickets only.
  std::uint32_t render_blocking_cap_percent = 95;
  ContentClass preempt_class = ContentClass::html;
  std::uint32_t decay_initial_tickets = 16;
  // After sending this many packets a member's tickets halve (never below 1).
  std::array<std::uint32_t, 4> decay_after_packets{5, 10, 20, 40};
};

// A member's part of the schedule as a fraction (0/1 for unknown members).
struct ScheduleShare {
  std::uint64_t numerator = 0;
  std::uint64_t denominator = 1;
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
  std::size_t ready_count() const { return ready_members_; }
  // Classes are often learned after a stream's first bytes; takes effect on
  // the member's next packet without giving it back-credit.
  void set_class(MemberId id, ContentClass cls);
  // Policies may change while members run (admin reload).
  void set_config(const SchedulerConfig& config);

  // The ready member that should send next, or nullopt; O(1).
  std::optional<MemberId> pick() const;
  // The best ready member that `eligible` accepts, visiting ready members in
  // schedule order (best class first, within it best member first) and
  // stopping at the first accepted one: the cost is the number of members
  // rejected before it. Does not advance anything.
  std::optional<MemberId> pick(const std::function<bool(MemberId)>& eligible) const;
  // The size a packet is counted at when the caller does not give one.
  static constexpr ByteCount kFullPacketBytes = 1500;
  // Charge `id` for one packet of `bytes` it sent (chosen by pick()). Unknown
  // ids (such as the ensemble's control pseudo-member) are ignored. Turns
  // are by packets; realtime's cap is on bytes.
  void on_sent(MemberId id, ByteCount bytes = kFullPacketBytes);
  // Charge `id` for a packet it sent out of turn (not chosen by pick(), e.g. a
  // retransmission): it pays its strides, nobody else's position changes.
  void on_sent_unscheduled(MemberId id, ByteCount bytes = kFullPacketBytes);
  // Charge `id` for a packet its class's turn gave it while pick() named
  // another member of the class (the ensemble's runs, ensemble.cc): the
  // classes' clock moves as for on_sent(), the class's members' clock does
  // not. Moved to the run's pass, it would raise every waiting member's
  // pass to it (passes are read as at least the clock): they would lose
  // the turns the run took, where now they catch up after it.
  void on_sent_in_run(MemberId id, ByteCount bytes = kFullPacketBytes);

  // Tickets of `id` under the policy (0 when unknown): its class's tickets
  // under content and preempt (the preempt class reports its content
  // tickets; its precedence is separate), its own under fair and decay.
  std::uint32_t tickets(MemberId id) const;
  // Running sums of tickets(id): over every member, and over ready members.
  std::uint64_t total_tickets() const { return total_tickets_; }
  std::uint64_t ready_tickets() const { return ready_tickets_; }
  // The share of the packets `id` gets while it goes ahead of the others
  // (ScheduleShare), or nullopt while it takes turns by tickets: realtime
  // below its cap (the cap, split among the calls), the preempt class (all),
  // a render-blocking class ahead of waiting classes (the cap, split by
  // tickets among the render-blocking classes with a ready member, evenly
  // within one). The ensemble's joins size a joiner's share by it.
  std::optional<ScheduleShare> precedence_share(MemberId id) const;
  // Whether realtime may go first now (below its cap); for tests and status.
  bool realtime_below_cap() const;
  // Whether a realtime member is ready (under content and preempt); O(1).
  bool realtime_ready() const;
  // Whether pick() gives a realtime member (ready, and below its cap or
  // alone); O(1).
  bool realtime_first() const;
  std::size_t size() const;
  bool contains(MemberId id) const;

 private:
  // kStride1 / tickets, in 64-bit integers: 2^20 keeps the rounding error of
  // a stride under 1e-6 for any realistic ticket count.
  static constexpr std::uint64_t kStride1 = std::uint64_t{1} << 20;
  static constexpr std::size_t kNotReady = ~std::size_t{0};
  static constexpr std::size_t kGroupCount = kContentClassCount;
  static constexpr std::size_t kRealtimeGroup = static_cast<std::size_t>(ContentClass::realtime);
  static constexpr std::int64_t kRealtimeBurstPackets = 16;

  // A heap slot carries its sort key and where its owner (a Member in pool_,
  // or a Group in groups_) lives, so sifting compares slots and updates heap
  // indexes without hashing.
  struct Slot {
    int precedence = 2;
    std::uint64_t pass = 0;
    MemberId id = 0;
    std::uint32_t owner = 0;
    bool operator<(const Slot& o) const {
      if (precedence != o.precedence) return precedence < o.precedence;
      if (pass != o.pass) return pass < o.pass;
      return id < o.id;
    }
  };
  // An indexed binary min-heap of slots; `where(owner)` is the owner's
  // stored heap index, kept up to date as slots move.
  struct Heap {
    std::vector<Slot> slots;
    template <class Where> void push(const Slot& slot, Where where);
    template <class Where> void erase(std::size_t index, Where where);
    template <class Where> void update(std::size_t index, const Slot& slot, Where where);
    template <class Where> void sift_up(std::size_t index, Where where);
    template <class Where> void sift_down(std::size_t index, Where where);
  };

  struct Member {  // 40 bytes: AllocFree.IdleStreamHoldsAtMostOneKilobytePerSide
    ContentClass cls = ContentClass::bulk;
    std::uint8_t group = 0;
    std::uint32_t tickets = 1;       // cached tickets_for(*this): the public figure
    std::uint32_t weight = 1;        // cached weight_for(*this): tickets within its class
    std::uint64_t pass = 0;          // its class's virtual time of its next packet
    std::uint64_t packets_sent = 0;  // drives ticket decay
    std::size_t heap_index = kNotReady;
  };
  // A class (one per ContentClass; under fair and decay only group 0 is used).
  struct Group {
    std::uint64_t pass = 0;          // virtual_pass_ of the class's next packet
    std::uint64_t virtual_pass = 0;  // the members' clock
    std::uint32_t tickets = 1;       // cached group_tickets()
    std::size_t heap_index = kNotReady;
    Heap ready;                      // its ready members
  };

  bool flat() const;  // one class for all (fair, decay)
  std::uint8_t group_of(ContentClass cls) const;
  std::uint32_t tickets_for(const Member& m) const;
  std::uint32_t weight_for(const Member& m) const;
  std::uint32_t group_tickets(std::size_t group) const;
  static std::uint64_t stride(std::uint32_t tickets);
  // 0 for a class that preempts everyone else, 1 for render-blocking classes
  // within their cap, 2 otherwise.
  int precedence(std::size_t group) const;
  // html and script under content and preempt with a render-blocking cap.
  bool render_blocking(std::size_t group) const;
  void charge_render_blocking_share(const Member& m);
  bool render_blocking_others_wait() const;
  // Realtime is outside the classes' turns (content, preempt): its own rules.
  bool separate(std::size_t group) const;
  void charge_realtime_share(const Member& m, ByteCount bytes);
  // `pass` ahead of `clock`, re-expressed from old_tickets to new_tickets.
  static std::uint64_t rescaled_ahead(std::uint64_t pass, std::uint64_t clock,
                                      std::uint32_t old_tickets, std::uint32_t new_tickets);
  void charge(MemberId id, bool class_in_turn, bool member_in_turn, ByteCount bytes);

  Member* find(MemberId id, std::uint32_t* index = nullptr);
  const Member* find(MemberId id) const;
  // Membership of a class (counts and weights) and readiness within it.
  void join_group(Member& m);
  void leave_group(Member& m);
  void make_ready(MemberId id, std::uint32_t index, Member& m);
  void make_unready(Member& m);
  // Cached tickets and weight (and their sums) after m's class, policy or
  // packet count changed; re-keys m in its class's heap.
  void refresh(MemberId id, std::uint32_t index, Member& m);
  // Puts a class in, out of or back in order in the classes' heap after its
  // ready members or its pass changed.
  void group_changed(std::size_t group);

  SchedulerConfig config_;
  // Members live in a dense pool (freed slots reused); one hash lookup per
  // call finds a member, the heaps then work on pool indexes.
  std::vector<Member> pool_;
  std::vector<std::uint32_t> free_slots_;
  std::unordered_map<MemberId, std::uint32_t> index_;
  std::array<Group, kGroupCount> groups_{};
  Heap classes_;  // classes with a ready member (Slot::owner = group)
  mutable std::vector<std::size_t> class_search_;  // pick(eligible)'s frontiers, reused
  mutable std::vector<std::size_t> member_search_;
  std::uint64_t virtual_pass_ = 0;
  std::size_t ready_members_ = 0;
  std::uint64_t total_tickets_ = 0;
  std::uint64_t ready_tickets_ = 0;
  // Realtime's deficit counter in hundredths of a byte, the render-blocking
  // classes' in hundredths of a packet.
  std::int64_t realtime_credit_ = 0;
  std::int64_t render_blocking_credit_ = 0;
};

}  // namespace egw::congestion
