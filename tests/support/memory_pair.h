// Two tunnel::Connections (client = branch, hub) exchanging datagrams over a
// lossless in-memory link on virtual time: no sockets, no threads, no
// simulator. The harness of tests/alloc (allocations per packet, bytes per
// idle stream) and bench/core (CPU per packet); each derives its own
// applications from MemoryPair.
//
// Each step runs one side's work contiguously (arrivals, timers, its
// application, its sends), then the other's, so the cost of each side can be
// measured apart: the cycles are counted per side, and `enter_side` tells a
// counting allocator whom to charge. The one-way delay is never zero, so
// nothing one side sends in a step can reach the other in the same step:
// the order of the two sides does not change the trajectory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#else
#include <chrono>
#endif

#include "common/units.h"
#include "tunnel/connection.h"

namespace egw::test_support {

// Cheap cycle counter, to split one CPU-time measurement between the sides.
inline std::uint64_t cycles() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// One direction: a FIFO of preallocated slots; each datagram leaves after
// the previous one finished serialising and arrives `delay` later. Lossless:
// running out of slots is a harness error (abort).
class MemoryLink {
 public:
  static constexpr std::size_t kSlotBytes = 1280;  // >= max_datagram_bytes (1200)

  MemoryLink(std::size_t slots, double rate_bits_per_s, Duration delay);

  // Where the next datagram is written, then commit() its size.
  std::span<std::byte> next_slot() {
    return {storage_.get() + ((head_ + count_) % slots_.size()) * kSlotBytes, kSlotBytes};
  }
  void commit(std::size_t bytes, Instant now);
  std::optional<Instant> next_arrival() const {
    if (count_ == 0) return std::nullopt;
    return slots_[head_].arrival;
  }
  // The front datagram if it has arrived by `now` (mutable: opened in place).
  std::optional<std::span<std::byte>> arrived(Instant now) {
    if (count_ == 0 || slots_[head_].arrival > now) return std::nullopt;
    return std::span<std::byte>(storage_.get() + head_ * kSlotBytes, slots_[head_].size);
  }
  void pop() {
    head_ = (head_ + 1) % slots_.size();
    --count_;
  }

 private:
  struct Slot {
    std::size_t size = 0;
    Instant arrival{};
  };
  std::vector<Slot> slots_;
  std::unique_ptr<std::byte[]> storage_;  // untouched (no pages) until used
  double rate_;
  Duration delay_;
  Instant free_at_{};
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

struct MemoryPairConfig {
  tunnel::ConnectionConfig client;  // is_client is set by the pair
  tunnel::ConnectionConfig hub;
  bool null_protection = false;  // else TestProtection (a tag per packet)
  double rate_bits_per_s = 1e9;
  Duration one_way = ms(1);
  std::size_t link_slots = 8192;  // per direction
  // Called with the side whose code is about to run (kClient, kHub) and
  // kHarness after it; tests/alloc's set_side charges allocations with it.
  void (*enter_side)(int side) = nullptr;
};

class MemoryPair {
 public:
  // The numbering of tests/alloc/counting_allocator.h's sides.
  static constexpr int kHarness = 0;
  static constexpr int kClient = 1;
  static constexpr int kHub = 2;

  explicit MemoryPair(const MemoryPairConfig& config);
  virtual ~MemoryPair();
  MemoryPair(const MemoryPair&) = delete;
  MemoryPair& operator=(const MemoryPair&) = delete;

  // A client stream (bulk, to 10.0.0.1:80).
  StreamId open_stream();

  // Advance virtual time event by event.
  void run_until_client_sent(std::uint64_t datagrams_in_total) {
    while (client_sent_ < datagrams_in_total) step();
  }
  void run_client_datagrams(std::uint64_t datagrams) {
    run_until_client_sent(client_sent_ + datagrams);
  }
  // Runs until virtual time reaches now + d. With `stop_at_end` it never
  // jumps past that (an idle connection's next timer may be its idle
  // timeout, 30 s away); without, the last step goes on to the next event,
  // as tests/alloc's figures were taken.
  void run_for(Duration d, bool stop_at_end = true);
  template <class Done>
  void run_until(Done done) {
    while (!done()) step();
  }

  Instant now() const { return now_; }
  std::uint64_t client_sent() const { return client_sent_; }  // datagrams
  std::uint64_t client_cycles() const { return client_cycles_; }
  std::uint64_t hub_cycles() const { return hub_cycles_; }
  tunnel::Connection& client() { return *client_; }
  tunnel::Connection& hub() { return *hub_; }

 protected:
  // The applications: once a step on each side, after its arrivals and
  // timers and before its sends, charged to that side.
  virtual void client_app() = 0;
  virtual void hub_app() = 0;
  // Charges what follows to `side` (kHarness: to nobody).
  void enter(int side) const {
    if (enter_side_) enter_side_(side);
  }

 private:
  void step();
  void deliver(MemoryLink& link, tunnel::Connection& c);
  void fire(tunnel::Connection& c);
  void flush(tunnel::Connection& c, MemoryLink& link, std::uint64_t* sent);

  void (*enter_side_)(int side);
  Instant now_{};
  std::optional<Instant> horizon_;  // while run_for runs
  MemoryLink to_hub_;
  MemoryLink to_client_;
  std::unique_ptr<tunnel::Connection> client_;
  std::unique_ptr<tunnel::Connection> hub_;
  std::uint64_t client_sent_ = 0;
  std::uint64_t client_cycles_ = 0;
  std::uint64_t hub_cycles_ = 0;
};

}  // namespace egw::test_support
