// The packet path allocates nothing in steady state, and an idle stream is
// small. Runs two Connections over a lossless in-memory link (rate + delay,
// preallocated slots; tests/support/memory_pair.h) with a counting global
// operator new (this binary only, see counting_allocator.h), warms up, then
// counts.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <span>
#include <vector>

#include "tests/alloc/counting_allocator.h"
#include "tests/support/memory_pair.h"

namespace egw::alloc_test {
namespace {

using tunnel::Connection;

// The applications on the in-memory pair (tests/support/memory_pair.h):
// client streams write a pattern forever; the hub reads everything.
class Harness : public test_support::MemoryPair {
 public:
  Harness() : MemoryPair(config()), source_(64 * 1024), sink_(64 * 1024) {
    for (std::size_t i = 0; i < source_.size(); ++i) source_[i] = static_cast<std::byte>(i * 7);
  }

  // Every stream the hub accepts gets this many bytes back.
  void set_answer_bytes(std::size_t bytes) { answer_bytes_ = bytes; }
  // A one-off request on a stream.
  void write_once(StreamId id, std::size_t bytes) {
    SideScope s(kClient);
    client().stream_write(id, std::span(source_).first(bytes), now());
  }

  StreamId open(bool writing) {
    const StreamId id = open_stream();
    if (writing) writers_[writer_count_++] = id;
    return id;
  }

  std::uint64_t hub_read_bytes() const { return hub_read_; }
  // Bytes the hub read on the i-th stream it accepted.
  std::uint64_t hub_read_bytes(std::size_t i) const { return read_per_stream_[i]; }

 private:
  static test_support::MemoryPairConfig config() {
    test_support::MemoryPairConfig c;
    c.null_protection = false;
    c.rate_bits_per_s = 200e6;
    c.one_way = ms(5);
    c.link_slots = 8192;
    c.enter_side = &set_side;
    return c;
  }

  void client_app() override {
    Connection& c = client();
    while (auto e = c.poll_event()) {
      if (auto* r = std::get_if<tunnel::StreamReadable>(&*e)) {
        bool fin = false;
        while (c.stream_read(r->id, sink_, &fin, now()) > 0) {
        }
      }
    }
    for (std::size_t i = 0; i < writer_count_; ++i) {
      while (c.stream_write(writers_[i], source_, now()) > 0) {
      }
    }
  }
  void hub_app() override {
    Connection& h = hub();
    while (auto e = h.poll_event()) {
      if (auto* o = std::get_if<tunnel::StreamOpened>(&*e)) {
        readers_[reader_count_++] = o->id;
        // A short answer, so the hub's sending side has been used too.
        if (answer_bytes_ > 0) h.stream_write(o->id, std::span(source_).first(answer_bytes_), now());
      }
    }
    for (std::size_t i = 0; i < reader_count_; ++i) {
      bool fin = false;
      while (std::size_t n = h.stream_read(readers_[i], sink_, &fin, now())) {
        hub_read_ += n;
        read_per_stream_[i] += n;
      }
    }
  }

  std::vector<std::byte> source_;
  std::vector<std::byte> sink_;
  std::array<StreamId, 64> writers_{};
  std::size_t writer_count_ = 0;
  std::array<StreamId, 1024> readers_{};
  std::size_t reader_count_ = 0;
  std::array<std::uint64_t, 1024> read_per_stream_{};
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
  h.run_for(ms(200), /*stop_at_end=*/false);
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
  h.run_for(ms(500), /*stop_at_end=*/false);  // opened, data exchanged and acknowledged, quiet
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
