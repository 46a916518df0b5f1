// One direction of an emulated WAN link, sans-IO: packets go in with the time
// they arrived and come out at the time they are due. No clock, no sockets;
// the driver (wanem_main.cc) owns the packet bytes and passes a slot number.
//
// Model, in the order a packet meets it:
//   1. loss: dropped with probability `loss` (Bernoulli, seeded), before the
//      queue, so a lost packet never takes queue space or wire time.
//   2. queue (drop-tail, ns-2 semantics): packets *waiting* for the wire;
//      the one being serialised does not count. queue=10p holds 10 waiting
//      + 1 on the wire; a packet that finds the wire idle always goes on it.
//      A full queue drops the arrival, except with le_drop (default on): an
//      arrival that is not DSCP LE (RFC 8622) evicts the newest LE packets
//      waiting, as few as make room, and is queued instead.
//   3. wire: serialised at `rate_bps` over its IP length (L3 bytes: no
//      Ethernet framing), one after the other:
//        finish = max(arrival, previous finish) + len * 8 / rate
//      rate 0: no serialisation (finish = arrival), so nothing ever waits.
//   4. propagation: departure = finish + delay + U[0, jitter]. Without
//      reorder, a departure never precedes the previous one (order kept);
//      with reorder probability p, a packet skips that clamp with
//      probability p and may overtake.
// Options changed with configure() apply from then on: to packets that start
// serialisation (rate) or arrive (the rest) afterwards.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "bench/wanem/ring.h"

namespace egw::wanem {

// Nanoseconds: a 1500-byte packet at 10 Mbit/s serialises in exactly
// 1,200,000 ns, so serialisation times in tests are exact integers.
using Nanos = std::chrono::nanoseconds;
struct WanClock {  // no now(): instants come from the driver
  using duration = Nanos;
  using rep = Nanos::rep;
  using period = Nanos::period;
  using time_point = std::chrono::time_point<WanClock, Nanos>;
  static constexpr bool is_steady = true;
};
using Time = WanClock::time_point;

struct LinkConfig {
  std::uint64_t rate_bps = 0;         // 0 = unlimited
  Nanos delay{0};                     // one way
  Nanos jitter{0};                    // added uniformly in [0, jitter]
  double reorder = 0;                 // probability a packet may overtake
  std::uint32_t queue_packets = 0;    // limit on waiting packets, 0 = none
  std::uint64_t queue_bytes = 0;      // limit on waiting IP bytes, 0 = none
  double loss = 0;                    // 1 = link down
  bool le_drop = true;                // evict LE packets for others when full
  std::uint64_t seed = 1;
};

// What the model knows of a packet. `slot` is the driver's handle (its
// buffer), returned unchanged when the packet leaves or is evicted.
struct Packet {
  std::uint32_t slot = 0;
  std::uint32_t len_bytes = 0;  // IP length
  bool is_le = false;           // DSCP 1 (Lower Effort)
};

enum class Verdict { queued, dropped_loss, dropped_queue };

struct Admission {
  Verdict verdict;
  // Waiting LE packets dropped to make room for this one (le_drop), newest
  // first. Valid until the next call into the Link.
  std::span<const Packet> evicted;
};

struct LinkCounters {
  std::uint64_t in_packets = 0, in_bytes = 0;    // every packet offered
  std::uint64_t out_packets = 0, out_bytes = 0;  // returned by pop_due
  std::uint64_t dropped_loss = 0;                // random loss
  std::uint64_t dropped_queue = 0;               // arrivals at a full queue
  std::uint64_t dropped_le = 0;                  // LE packets evicted from the queue
  std::uint64_t max_queue_packets = 0, max_queue_bytes = 0;  // waiting, after admission
};

class Link {
 public:
  explicit Link(const LinkConfig& config);

  // Replaces the options from `now` on (a new seed restarts the RNG).
  void configure(const LinkConfig& config);
  const LinkConfig& config() const { return config_; }

  Admission on_packet(Time now, Packet packet);

  // When to call pop_due next (nullopt: the link is empty). Exactly the next
  // departure without jitter; with jitter it may be earlier (the end of the
  // serialisation on the wire plus the delay), never later.
  std::optional<Time> next_departure() const;
  // One packet due at `now` (departure <= now), in departure order; call
  // until nullopt.
  std::optional<Packet> pop_due(Time now);

  // Waiting for the wire (the queue the limit applies to).
  std::uint64_t queued_packets() const { return wire_.empty() ? 0 : wire_.size() - 1; }
  std::uint64_t queued_bytes() const { return waiting_bytes_; }
  // Everything inside: waiting, on the wire, propagating.
  std::uint64_t packets_inside() const { return wire_.size() + flight_.size(); }

  const LinkCounters& counters() const { return counters_; }
  void reset_counters();  // max_queue_* restart from the current queue

 private:
  struct Waiting {
    Packet packet;
    Nanos jitter;       // drawn on arrival, so next_departure() is exact
    bool may_overtake;  // drawn on arrival
  };
  struct InFlight {
    Time departure;
    std::uint64_t seq;  // ties leave in arrival order
    Packet packet;
  };

  static bool later(const InFlight& a, const InFlight& b);
  Nanos serialisation(std::uint32_t len_bytes) const;
  double uniform();  // [0, 1)
  bool fits(std::uint64_t waiting_packets, std::uint64_t waiting_bytes) const;
  void start_head(Time start);
  Time departure_of(const Waiting& w, Time finish) const;
  void advance(Time now);  // moves packets whose serialisation ended into flight_
  bool evict_le_for(std::uint32_t len_bytes);

  LinkConfig config_;
  std::mt19937_64 rng_;
  Ring<Waiting> wire_;  // front() is on the wire until head_finish_, the rest wait
  Time head_finish_{};
  std::uint64_t waiting_bytes_ = 0;
  std::vector<InFlight> flight_;  // min-heap on (departure, seq)
  std::uint64_t next_seq_ = 0;
  Time last_departure_{};  // the order-keeping clamp
  std::vector<Packet> evicted_;
  LinkCounters counters_;
};

}  // namespace egw::wanem
