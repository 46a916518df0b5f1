// One direction of a link: a drop-tail queue in front of a transmitter of
// fixed rate, then a propagation delay (ns-2's DropTail + DelayLink,
// picoquic's sim_link.c).
//
//   send() -> [loss] -> [queue (limit, priority drop)] -> [transmitter: rate]
//          -> [propagation delay + jitter] -> sink
//
// Model:
//  - a packet occupies the wire for (payload + overhead_bytes) * 8 / rate;
//    the sub-microsecond remainder is carried while the transmitter stays
//    busy, so a saturated link delivers exactly `rate` over any interval;
//  - queue_limit_packets counts packets waiting, not the one being
//    transmitted (as in ns-2); 0 means unlimited;
//  - i.i.d. random loss is applied on arrival, before the queue;
//  - priority drop: a low-priority arrival is dropped while the queue holds
//    at least low_priority_queue_fraction * limit packets; a normal arrival
//    to a full queue evicts the newest queued low-priority packet instead of
//    being dropped itself (fast start's "low drop priority", RFC 8622 LE);
//  - jitter adds a uniform random extra delay in [0, max_jitter] per packet
//    after transmission, so a later packet can overtake an earlier one;
//  - set_rate() changes the rate at run time (an LTE or Wi-Fi link whose
//    rate steps): the packet on the wire finishes at the old rate, the
//    next one starts at the new (as bench/wanem does).
// Randomness only comes from the std::mt19937_64 passed in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <random>

#include "common/units.h"
#include "tests/sim/event_loop.h"
#include "tests/sim/packet.h"

namespace egw::sim {

struct LinkConfig {
  std::uint64_t rate_bits_per_second = 10'000'000;  // must be > 0
  Duration propagation_delay = ms(0);
  std::size_t queue_limit_packets = 0;  // 0 = unlimited
  ByteCount overhead_bytes = 0;         // per packet on the wire, e.g. 28 for IPv4 + UDP
  double loss_probability = 0.0;        // i.i.d., needs an rng
  bool priority_drop = false;
  double low_priority_queue_fraction = 0.5;
  Duration max_jitter = ms(0);          // > 0 needs an rng
};

enum class DropCause {
  queue_full,        // drop-tail
  random_loss,       // loss_probability
  low_priority,      // low-priority arrival above its threshold
  evicted,           // low-priority packet pushed out by a normal arrival
};
inline constexpr int kDropCauseCount = 4;

struct LinkStats {
  std::uint64_t packets_enqueued = 0;
  std::uint64_t bytes_enqueued = 0;  // wire bytes (payload + overhead)
  std::uint64_t packets_delivered = 0;
  std::uint64_t bytes_delivered = 0;  // wire bytes
  std::uint64_t packets_dropped[kDropCauseCount] = {};
  std::size_t max_queue_packets = 0;

  std::uint64_t dropped(DropCause c) const { return packets_dropped[static_cast<int>(c)]; }
  std::uint64_t dropped_total() const;
};

// What the observer sees; queue_packets is the queue length after the event.
struct LinkEvent {
  enum class Kind { enqueue, drop, deliver };
  Kind kind;
  Instant time;
  std::size_t queue_packets;
  DropCause cause = DropCause::queue_full;  // for drops only
  bool low_priority = false;
  ByteCount queue_bytes = 0;  // wire bytes waiting after the event: the queue's delay is this / rate
};

class Link {
 public:
  using Sink = std::function<void(Packet)>;

  // `rng` may be null when neither loss nor jitter is configured; it must
  // outlive the link.
  Link(EventLoop& loop, const LinkConfig& config, std::mt19937_64* rng, Sink sink);
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  void send(Packet packet);
  // From now on; must be > 0. The queue stays: only its drain rate changes.
  void set_rate(std::uint64_t bits_per_second);

  // Time series hook (enqueue, drop, deliver); set to {} to remove.
  void set_observer(std::function<void(const LinkEvent&)> observer) { observer_ = std::move(observer); }

  const LinkStats& stats() const { return stats_; }
  const LinkConfig& config() const { return config_; }
  std::size_t queue_packets() const { return queue_.size(); }
  ByteCount queue_bytes() const { return queued_bytes_; }  // wire bytes waiting
  // Time to put `payload_bytes` on the wire, rounded down to the microsecond.
  Duration serialization_time(ByteCount payload_bytes) const;

 private:
  ByteCount wire_bytes(const Packet& p) const { return p.payload.size() + config_.overhead_bytes; }
  void drop(const Packet& p, DropCause cause);
  void transmit(Packet packet);  // the transmitter is idle
  void on_transmitted();
  void notify(LinkEvent::Kind kind, DropCause cause, bool low_priority);

  EventLoop& loop_;
  LinkConfig config_;
  std::mt19937_64* rng_;
  Sink sink_;
  std::function<void(const LinkEvent&)> observer_;
  std::deque<Packet> queue_;
  ByteCount queued_bytes_ = 0;  // wire bytes in queue_
  std::size_t low_priority_queued_ = 0;
  bool busy_ = false;
  // Numerator (bit-microseconds) of the sub-microsecond serialization
  // remainder, carried across back-to-back packets: exact long-run rate.
  std::uint64_t remainder_ = 0;
  LinkStats stats_;
};

}  // namespace egw::sim
