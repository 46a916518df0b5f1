// The packet path allocates nothing in steady state, and an idle stream is
// small. Runs two Connections over a lossless in-memory link (rate + delay,
// preallocated slots) with a counting global operator new (this binary
// only, see counting_allocator.h), warms up, then counts.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "tests/alloc/counting_allocator.h"
#include "tests/support/test_protection.h"
#include "tunnel/connection.h"

namespace egw::alloc_test {
namespace {

using tunnel::Connection;
using tunnel::ConnectionConfig;

inline constexpr std::uint64_t kKey = 0x5eed'cafe'f00d'1234;
inline constexpr std::size_t kSlotBytes = 2048;

// Sends a datagram from `c` into `buffer`; its length, or nullopt.
std::optional<std::size_t> transmit(Connection& c, Instant now, std::span<std::byte> buffer) {
  auto t = c.poll_transmit(now, buffer);
  if (!t) return std::nullopt;
  return t->bytes;
}

// One direction: a FIFO of preallocated slots; each datagram leaves after
// the previous one finished serialising and arrives `delay` later.
class Link {
 public:
  Link(std::size_t slots, double rate_bits_per_s, Duration delay)
      : slots_(slots), rate_(rate_bits_per_s), delay_(delay) {}

  std::span<std::byte> next_slot() { return slots_[(head_ + count_) % slots_.size()].bytes; }
  void commit(std::size_t bytes, Instant now) {
    ASSERT_LT(count_, slots_.size()) << "link overflow";
    Slot& s = slots_[(head_ + count_) % slots_.size()];
    s.size = bytes;
    const Instant start = std::max(now, free_at_);
    free_at_ = start + Duration(static_cast<Duration::rep>(bytes * 8 / rate_ * 1e6));
    s.arrival = free_at_ + delay_;
    ++count_;
  }
  std::optional<Instant> next_arrival() const {
    if (count_ == 0) return std::nullopt;
    return slots_[head_].arrival;
  }
  // The front datagram if it has arrived by `now` (mutable: opened in place).
  std::optional<std::span<std::byte>> arrived(Instant now) {
    if (count_ == 0 || slots_[head_].arrival > now) return std::nullopt;
    return std::span<std::byte>(slots_[head_].bytes).first(slots_[head_].size);
  }
  void pop() {
    head_ = (head_ + 1) % slots_.size();
    --count_;
  }

 private:
  struct Slot {
    std::array<std::byte, kSlotBytes> bytes{};
    std::size_t size = 0;
    Instant arrival{};
  };
  std::vector<Slot> slots_;
  double rate_;
  Duration delay_;
  Instant free_at_{};
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

// Client streams write a pattern forever; the hub reads everything.
class Harness {
 public:
  explicit Harness(bool null_protection = false, double rate_bits_per_s = 200e6,
                   Duration one_way = ms(5))
      : to_hub_(8192, rate_bits_per_s, one_way),
        to_client_(8192, rate_bits_per_s, one_way),
        source_(64 * 1024),
        sink_(64 * 1024) {
    ConnectionConfig client;
    client.is_client = true;
    ConnectionConfig hub;
    hub.is_client = false;
    for (std::size_t i = 0; i < source_.size(); ++i) source_[i] = static_cast<std::byte>(i * 7);
    auto protection = [&]() -> std::unique_ptr<tunnel::PacketProtection> {
      if (null_protection) return std::make_unique<tunnel::NullProtection>();
      return std::make_unique<tunnel::TestProtection>(kKey);
    };
    {
      SideScope s(1);
      client_ = std::make_unique<Connection>(client, protection(), nullptr, now_);
    }
    {
      SideScope s(2);
      hub_ = std::make_unique<Connection>(hub, protection(), nullptr, now_);
    }
  }

  // Every stream the hub accepts gets this many bytes back.
  void set_answer_bytes(std::size_t bytes) { answer_bytes_ = bytes; }
  // A one-off request on a stream.
  void write_once(StreamId id, std::size_t bytes) {
    SideScope s(1);
    client_->stream_write(id, std::span(source_).first(bytes), now_);
  }

  StreamId open(bool writing) {
    SideScope s(1);
    tunnel::Destination d;
    d.address = {10, 0, 0, 1};
    d.port = 80;
    const StreamId id = *client_->open_stream(d, ContentClass::bulk, now_);
    if (writing) writers_[writer_count_++] = id;
    return id;
  }

  // Advances virtual time event by event until the client has sent
  // `datagrams` more datagrams.
  void run_client_datagrams(std::uint64_t datagrams) {
    const std::uint64_t target = client_sent_ + datagrams;
    while (client_sent_ < target) step();
  }
  void run_for(Duration d) {
    const Instant end = now_ + d;
    while (now_ < end) step();
  }

  std::uint64_t client_sent() const { return client_sent_; }
  std::uint64_t hub_read_bytes() const { return hub_read_; }
  // Bytes the hub read on the i-th stream it accepted.
  std::uint64_t hub_read_bytes(std::size_t i) const { return read_per_stream_[i]; }
  Connection& client() { return *client_; }
  Connection& hub() { return *hub_; }

 private:
  void step() {
    deliver(to_hub_, *hub_, 2);
    deliver(to_client_, *client_, 1);
    fire(*client_, 1);
    fire(*hub_, 2);
    apps();
    flush(*client_, to_hub_, 1, &client_sent_);
    flush(*hub_, to_client_, 2, nullptr);
    // Next event: an arrival or a timer (at least 1 us ahead).
    std::optional<Instant> next;
    auto consider = [&](std::optional<Instant> t) {
      if (t && (!next || *t < *next)) next = t;
    };
    consider(to_hub_.next_arrival());
    consider(to_client_.next_arrival());
    consider(client_->next_timeout());
    consider(hub_->next_timeout());
    const Instant floor = now_ + us(1);
    now_ = next && *next > floor ? *next : floor;
  }

  void deliver(Link& link, Connection& c, int side) {
    SideScope s(side);
    while (auto d = link.arrived(now_)) {
      c.on_datagram(*d, now_);
      link.pop();
    }
  }
  void fire(Connection& c, int side) {
    SideScope s(side);
    if (auto t = c.next_timeout(); t && *t <= now_) c.on_timeout(now_);
  }
  void flush(Connection& c, Link& link, int side, std::uint64_t* counter) {
    SideScope s(side);
    while (auto n = transmit(c, now_, link.next_slot())) {
      link.commit(*n, now_);
      if (counter) ++*counter;
    }
  }
  void apps() {
    {
      SideScope s(1);
      while (auto e = client_->poll_event()) {
        if (auto* r = std::get_if<tunnel::StreamReadable>(&*e)) {
          bool fin = false;
          while (client_->stream_read(r->id, sink_, &fin, now_) > 0) {
          }
        }
      }
      for (std::size_t i = 0; i < writer_count_; ++i) {
        while (client_->stream_write(writers_[i], source_, now_) > 0) {
        }
      }
    }
    SideScope s(2);
    while (auto e = hub_->poll_event()) {
      if (auto* o = std::get_if<tunnel::StreamOpened>(&*e)) {
        readers_[reader_count_++] = o->id;
        // A short answer, so the hub's sending side has been used too.
        if (answer_bytes_ > 0) {
          hub_->stream_write(o->id, std::span(source_).first(answer_bytes_), now_);
        }
      }
    }
    for (std::size_t i = 0; i < reader_count_; ++i) {
      bool fin = false;
      while (std::size_t n = hub_->stream_read(readers_[i], sink_, &fin, now_)) {
        hub_read_ += n;
        read_per_stream_[i] += n;
      }
    }
  }

  Instant now_{};
  Link to_hub_;
  Link to_client_;
  std::unique_ptr<Connection> client_;
  std::unique_ptr<Connection> hub_;
  std::vector<std::byte> source_;
  std::vector<std::byte> sink_;
  std::array<StreamId, 64> writers_{};
  std::size_t writer_count_ = 0;
  std::array<StreamId, 1024> readers_{};
  std::size_t reader_count_ = 0;
  std::array<std::uint64_t, 1024> read_per_stream_{};
  std::uint64_t client_sent_ = 0;
  std::uint64_t hub_read_ = 0;
  std::size_t answer_bytes_ = 0;
};

std::uint64_t allocations() { return counters().allocations; }


struct Counts {
  std::uint64_t packets = 0;
  std::uint64_t allocations = 0;             // all of them
  std::uint64_t congestion_allocations = 0;  // made inside egw::congestion
};

// Steady bulk transfer on `streams` streams: warm up, then count over
// 1,000 client data packets.
Counts count_steady_state(std::size_t streams) {
  Harness h;
  for (std::size_t i = 0; i < streams; ++i) h.open(true);
  h.run_client_datagrams(20'000);  // warm up: windows, rings and histories at their peak
  warm_up_attribution();
  const std::uint64_t before = allocations();
  const std::uint64_t congestion_before = counters().congestion_allocations;
  const std::uint64_t sent_before = h.client_sent();
  const std::uint64_t read_before = h.hub_read_bytes();
  std::array<std::uint64_t, 4> stream_read_before{};
  for (std::size_t i = 0; i < streams && i < 4; ++i) stream_read_before[i] = h.hub_read_bytes(i);
  counters().attributing = true;
  h.run_client_datagrams(1'000);
  counters().attributing = false;
  Counts c;
  c.allocations = allocations() - before;
  c.congestion_allocations = counters().congestion_allocations - congestion_before;
  c.packets = h.client_sent() - sent_before;
  std::printf(
      "[ alloc    ] %zu stream(s), %llu data packets: %llu allocations (%.2f per packet), "
      "%llu of them in congestion/\n",
      streams, static_cast<unsigned long long>(c.packets),
      static_cast<unsigned long long>(c.allocations), double(c.allocations) / double(c.packets),
      static_cast<unsigned long long>(c.congestion_allocations));
  EXPECT_GT(h.hub_read_bytes() - read_before, 1'000'000u) << "the transfer must be moving";
  for (std::size_t i = 0; i < streams && i < 4; ++i) {
    EXPECT_GT(h.hub_read_bytes(i) - stream_read_before[i], 0u) << "stream " << i << " starved";
  }
  return c;
}

// The tunnel's own packet path (everything but the ensemble's internals,
// which congestion/ is rewriting to the same standard) allocates nothing.
TEST(AllocFree, SteadyBulkTransferAllocatesNothingPerPacket) {
  const Counts c = count_steady_state(1);
  EXPECT_EQ(c.allocations - c.congestion_allocations, 0u);
}

TEST(AllocFree, InterleavedStreamsAllocateNothingPerPacket) {
  const Counts c = count_steady_state(4);
  EXPECT_EQ(c.allocations - c.congestion_allocations, 0u);
}

// The whole stack, ensemble included: the scheduler's ready heap, the
// outstanding-packet ring and the reused ack/timeout outcomes allocate
// nothing per packet either.
TEST(AllocFree, WholeStackIncludingEnsembleAllocatesNothing) {
  EXPECT_EQ(count_steady_state(1).allocations, 0u);
  EXPECT_EQ(count_steady_state(4).allocations, 0u);
}

// CPU per data packet is a speed goal: measured by bench/core (BENCHMARKS.md),
// not asserted here.

// Live heap bytes (plus the Stream object, counted in its map node) per idle
// open stream, on each side, after each stream carried a small request and
// answer both ways (so every buffer has been used once) and went quiet.
// Drained stream buffers go to the connection's BufferPool (bounded, shared
// by all streams, reported as buffer_pool_bytes): not counted per stream.
// Rings the connection grew for 64 streams at once (history, events) are.
TEST(AllocFree, IdleStreamHoldsAtMostOneKilobytePerSide) {
  constexpr std::size_t kStreams = 64;
  constexpr std::size_t kExchangeBytes = 2000;
  Harness h;
  h.set_answer_bytes(kExchangeBytes);
  h.write_once(h.open(false), kExchangeBytes);  // the ensemble and first-stream state exist
  h.run_for(ms(200));
  warm_up_attribution();
  counters().attributing = true;  // the ensemble's member state is reported apart
  auto live = [](int side) { return counters().live_bytes[side]; };
  auto pool = [&](int side) {
    SideScope s(side);
    return static_cast<std::int64_t>((side == 1 ? h.client() : h.hub()).stats().buffer_pool_bytes);
  };
  const std::int64_t before[] = {live(1) - pool(1), live(2) - pool(2), live(1 + kSides),
                                 live(2 + kSides)};
  for (std::size_t i = 0; i < kStreams; ++i) h.write_once(h.open(false), kExchangeBytes);
  h.run_for(ms(500));  // opened on both sides, data exchanged and acknowledged, quiet
  counters().attributing = false;
  auto per_stream = [&](int index, std::int64_t now_bytes) {
    return double(now_bytes - before[index]) / double(kStreams);
  };
  const double client_per_stream = per_stream(0, live(1) - pool(1));
  const double hub_per_stream = per_stream(1, live(2) - pool(2));
  std::printf(
      "[ alloc    ] idle stream: %.0f bytes (client), %.0f bytes (hub); the ensemble's "
      "member state adds %.0f (client), %.0f (hub)\n",
      client_per_stream, hub_per_stream, per_stream(2, live(1 + kSides)),
      per_stream(3, live(2 + kSides)));
  std::printf("[ alloc    ] buffer pools: %lld bytes (client), %lld bytes (hub)\n",
              static_cast<long long>(pool(1)), static_cast<long long>(pool(2)));
  // The budget covers the ensemble's share too.
  EXPECT_LE(client_per_stream + per_stream(2, live(1 + kSides)), 1024.0);
  EXPECT_LE(hub_per_stream + per_stream(3, live(2 + kSides)), 1024.0);
}

}  // namespace
}  // namespace egw::alloc_test
