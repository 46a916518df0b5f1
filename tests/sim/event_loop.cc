#include "tests/sim/event_loop.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace egw::sim {

EventId EventLoop::schedule_at(Instant when, Callback cb) {
  if (when < now_) throw std::logic_error("EventLoop: event scheduled in the past");
  if (!cb) throw std::logic_error("EventLoop: empty callback");
  const EventId id = next_seq_++;
  heap_.push_back(Event{when, id, std::move(cb)});
  std::push_heap(heap_.begin(), heap_.end(), later);
  return id;
}

bool EventLoop::cancel(EventId id) {
  for (Event& e : heap_) {
    if (e.seq != id || is_cancelled(e)) continue;
    e.cb = nullptr;  // the heap order depends on (when, seq) only
    ++cancelled_in_heap_;
    return true;
  }
  return false;
}

void EventLoop::drop_cancelled_top() {
  while (!heap_.empty() && is_cancelled(heap_.front())) {
    --cancelled_in_heap_;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    heap_.pop_back();
  }
}

std::optional<Instant> EventLoop::next_event_time() {
  drop_cancelled_top();
  if (heap_.empty()) return std::nullopt;
  return heap_.front().when;
}

bool EventLoop::step() {
  drop_cancelled_top();
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  Event event = std::move(heap_.back());
  heap_.pop_back();
  now_ = event.when;
  ++events_run_;
  event.cb();  // may schedule more events: the heap is consistent here
  return true;
}

void EventLoop::run_until(Instant deadline) {
  if (deadline < now_) throw std::logic_error("EventLoop: run_until into the past");
  while (true) {
    const auto next = next_event_time();
    if (!next || *next > deadline) break;
    step();
  }
  now_ = deadline;
}

bool EventLoop::run_until(const std::function<bool()>& done, Instant deadline) {
  if (deadline < now_) throw std::logic_error("EventLoop: run_until into the past");
  while (!done()) {
    const auto next = next_event_time();
    if (!next || *next > deadline) {
      now_ = deadline;
      return done();
    }
    step();
  }
  return true;
}

}  // namespace egw::sim
