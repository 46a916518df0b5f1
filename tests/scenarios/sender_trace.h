// SenderTrace: what one sender put on a bottleneck link, seen at the link's
// entrance (access links are ideal, so a packet arrives at the bottleneck at
// the instant its host sent it). Records every arrival (enqueued or dropped)
// with its time and low-priority mark, and, when asked, samples the sender's
// ensemble (cwnd, bytes in flight) at each of its packets.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tests/sim/link.h"
#include "tunnel/connection.h"

namespace egw::scenarios {

class SenderTrace {
 public:
  struct Arrival {
    Instant time;
    bool low_priority;
    bool dropped;
    std::size_t queue_packets;
  };

  // Observes `link` until stop() or destruction. `sender` (may be null) is
  // sampled at each arrival: its ensemble's cwnd and bytes in flight.
  SenderTrace(sim::Link& link, tunnel::Connection* sender) : link_(link), sender_(sender) {
    link_.set_observer([this](const sim::LinkEvent& e) {
      if (e.kind == sim::LinkEvent::Kind::deliver) return;
      arrivals_.push_back({e.time, e.low_priority, e.kind == sim::LinkEvent::Kind::drop, e.queue_packets});
      if (sender_) {
        const auto st = sender_->stats().ensemble;
        max_cwnd_ = std::max(max_cwnd_, st.cwnd_bytes);
        max_in_flight_ = std::max(max_in_flight_, st.bytes_in_flight);
        max_bw_ = std::max(max_bw_, st.law.bottleneck_bytes_per_s);
      }
    });
  }
  ~SenderTrace() { stop(); }
  SenderTrace(const SenderTrace&) = delete;
  SenderTrace& operator=(const SenderTrace&) = delete;
  void stop() { link_.set_observer({}); }

  const std::vector<Arrival>& arrivals() const { return arrivals_; }
  ByteCount max_cwnd() const { return max_cwnd_; }
  ByteCount max_in_flight() const { return max_in_flight_; }
  // The model law's bottleneck rate estimate, largest (0 for loss-based laws).
  double max_bottleneck_bytes_per_s() const { return max_bw_; }

  // Over arrivals in [from, to):
  struct Window {
    std::uint64_t packets = 0;
    std::uint64_t low_priority = 0;
    std::uint64_t drops = 0;
    std::size_t max_queue = 0;
    std::uint64_t max_at_one_instant = 0;  // packets that arrived at the same instant
  };
  Window window(Instant from, Instant to) const {
    Window w;
    std::uint64_t run = 0;
    Instant run_at{};
    for (const Arrival& a : arrivals_) {
      if (a.time < from || a.time >= to) continue;
      ++w.packets;
      if (a.low_priority) ++w.low_priority;
      if (a.dropped) ++w.drops;
      w.max_queue = std::max(w.max_queue, a.queue_packets);
      run = (run > 0 && a.time == run_at) ? run + 1 : 1;
      run_at = a.time;
      w.max_at_one_instant = std::max(w.max_at_one_instant, run);
    }
    return w;
  }

 private:
  sim::Link& link_;
  tunnel::Connection* sender_;
  std::vector<Arrival> arrivals_;
  ByteCount max_cwnd_ = 0;
  ByteCount max_in_flight_ = 0;
  double max_bw_ = 0;
};

}  // namespace egw::scenarios
