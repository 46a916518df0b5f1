// The simulator's clock and scheduler: virtual time plus a priority queue of
// timed callbacks (quiche's simulator::Simulator, picoquic's simulated time).
//
// Model:
//  - time only moves when the loop pops an event; callbacks read now();
//  - events at the same instant run in the order they were scheduled
//    (ties are broken by a global insertion sequence), so a run is a pure
//    function of its inputs and seeds;
//  - scheduling before now() is a bug in the caller and throws
//    std::logic_error: a simulator that silently reorders the past hides
//    exactly the timing bugs it exists to find.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "common/units.h"

namespace egw::sim {

using EventId = std::uint64_t;

class EventLoop {
 public:
  using Callback = std::function<void()>;

  explicit EventLoop(Instant start = Instant{}) : now_(start) {}
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  Instant now() const { return now_; }

  // Runs `cb` at `when` (>= now(), else std::logic_error).
  EventId schedule_at(Instant when, Callback cb);
  EventId schedule_in(Duration delay, Callback cb) { return schedule_at(now_ + delay, std::move(cb)); }
  // Cancels a pending event; false if it already ran, was cancelled or never
  // existed. O(pending): cancelling is rare (hosts invalidate stale timers by
  // generation instead), so the hot path carries no bookkeeping for it.
  bool cancel(EventId id);

  // Runs the earliest event; false when none is pending.
  bool step();
  // Runs every event due at or before `deadline`, then sets now() = deadline.
  void run_until(Instant deadline);
  // Runs events until `done()` holds (checked before each event) or the next
  // event lies beyond `deadline`. Returns done(). When it returns false,
  // now() = deadline; when true, now() is the instant `done` became true.
  bool run_until(const std::function<bool()>& done, Instant deadline);

  std::size_t pending() const { return heap_.size() - cancelled_in_heap_; }
  std::uint64_t events_run() const { return events_run_; }
  // Instant of the earliest pending event, if any (cancelled ones excluded).
  std::optional<Instant> next_event_time();

 private:
  struct Event {
    Instant when;
    EventId seq;  // insertion order: the tie-breaker and the id
    Callback cb;
  };
  // Min-heap order on (when, seq) for std::push_heap (which builds a max-heap).
  static bool later(const Event& a, const Event& b) {
    return a.when != b.when ? a.when > b.when : a.seq > b.seq;
  }
  void drop_cancelled_top();
  static bool is_cancelled(const Event& e) { return !e.cb; }

  Instant now_;
  EventId next_seq_ = 0;
  std::uint64_t events_run_ = 0;
  std::vector<Event> heap_;
  // Cancelled events stay in the heap with an empty callback until they surface.
  std::size_t cancelled_in_heap_ = 0;
};

}  // namespace egw::sim
