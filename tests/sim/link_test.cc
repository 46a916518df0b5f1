#include "tests/sim/link.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace egw::sim {
namespace {

Instant at_us(std::int64_t v) { return instant_at(us(v)); }

// Packets carry their sequence number in the first 4 bytes.
Packet numbered(std::uint32_t n, std::size_t bytes, bool low_priority = false) {
  Packet p;
  p.payload.resize(bytes);
  for (int i = 0; i < 4; ++i) p.payload[i] = static_cast<std::byte>(n >> (8 * i));
  p.low_priority = low_priority;
  return p;
}
std::uint32_t number_of(const Packet& p) {
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= std::to_integer<std::uint32_t>(p.payload[i]) << (8 * i);
  return n;
}

struct Arrival {
  std::uint32_t number;
  Instant time;
};

struct Harness {
  explicit Harness(const LinkConfig& config, std::uint64_t seed = 7)
      : rng(seed), link(loop, config, &rng, [this](Packet p) {
          arrivals.push_back({number_of(p), loop.now()});
        }) {}
  EventLoop loop;
  std::mt19937_64 rng;
  std::vector<Arrival> arrivals;
  Link link;
};

TEST(LinkTest, SerializationPlusPropagationIsExact) {
  LinkConfig config;
  config.rate_bits_per_second = 10'000'000;
  config.propagation_delay = ms(50);
  Harness h(config);
  // 1500 B * 8 / 10 Mbit/s = 1200 us on the wire, then 50 ms of flight.
  EXPECT_EQ(h.link.serialization_time(1500), us(1200));
  h.link.send(numbered(0, 1500));
  h.link.send(numbered(1, 1500));  // waits for the first: 2 * 1200 us
  h.loop.run_until(instant_at(ms(100)));
  ASSERT_EQ(h.arrivals.size(), 2u);
  EXPECT_EQ(h.arrivals[0].time, at_us(50'000 + 1'200));
  EXPECT_EQ(h.arrivals[1].time, at_us(50'000 + 2'400));
  EXPECT_EQ(h.link.stats().packets_delivered, 2u);
  EXPECT_EQ(h.link.stats().bytes_delivered, 3000u);
}

// A rate step while a queue waits: the packet on the wire keeps the old
// rate, the ones behind it drain at the new one (a step down makes the
// standing queue longer in time, as on an LTE link).
TEST(LinkTest, RateChangeAppliesFromTheNextPacketOn) {
  LinkConfig config;
  config.rate_bits_per_second = 12'000'000;  // 1500 B = 1000 us
  config.propagation_delay = ms(10);
  Harness h(config);
  for (std::uint32_t i = 0; i < 3; ++i) h.link.send(numbered(i, 1500));
  h.loop.run_until(at_us(500));  // packet 0 is half on the wire
  h.link.set_rate(3'000'000);    // 1500 B = 4000 us
  EXPECT_EQ(h.link.serialization_time(1500), us(4'000));
  EXPECT_EQ(h.link.config().rate_bits_per_second, 3'000'000u);
  EXPECT_EQ(h.link.queue_packets(), 2u);
  h.loop.run_until(instant_at(ms(20)));
  h.link.set_rate(24'000'000);  // the link idle: the next arrival goes at once
  h.link.send(numbered(3, 1500));
  h.loop.run_until(instant_at(ms(100)));
  ASSERT_EQ(h.arrivals.size(), 4u);
  EXPECT_EQ(h.arrivals[0].time, at_us(1'000 + 10'000));
  EXPECT_EQ(h.arrivals[1].time, at_us(5'000 + 10'000));
  EXPECT_EQ(h.arrivals[2].time, at_us(9'000 + 10'000));
  EXPECT_EQ(h.arrivals[3].time, at_us(20'000 + 500 + 10'000));
  EXPECT_THROW(h.link.set_rate(0), std::invalid_argument);
}

TEST(LinkTest, OverheadBytesCountOnTheWire) {
  LinkConfig config;
  config.rate_bits_per_second = 10'000'000;
  config.overhead_bytes = 28;  // IPv4 + UDP
  Harness h(config);
  h.link.send(numbered(0, 1472));  // 1472 + 28 = 1500 B -> 1200 us
  h.loop.run_until(instant_at(ms(10)));
  ASSERT_EQ(h.arrivals.size(), 1u);
  EXPECT_EQ(h.arrivals[0].time, at_us(1'200));
  EXPECT_EQ(h.link.stats().bytes_enqueued, 1500u);
}

TEST(LinkTest, FractionalSerializationTimeDoesNotDrift) {
  LinkConfig config;
  config.rate_bits_per_second = 10'000'000;
  Harness h(config);
  // 1228 B * 8 / 10 Mbit/s = 982.4 us: rounding each packet down would lose
  // 0.4 us per packet; carried, 1000 packets take exactly 982'400 us.
  for (std::uint32_t i = 0; i < 1000; ++i) h.link.send(numbered(i, 1228));
  h.loop.run_until(instant_at(ms(2000)));
  ASSERT_EQ(h.arrivals.size(), 1000u);
  EXPECT_EQ(h.arrivals[0].time, at_us(982));
  EXPECT_EQ(h.arrivals[4].time, at_us(4'912));  // 5 * 982.4
  EXPECT_EQ(h.arrivals.back().time, at_us(982'400));
}

TEST(LinkTest, DropTailAtTheQueueLimit) {
  LinkConfig config;
  config.rate_bits_per_second = 1'000'000;
  config.queue_limit_packets = 5;
  Harness h(config);
  // One goes straight onto the wire, five wait, the last four are dropped.
  for (std::uint32_t i = 0; i < 10; ++i) h.link.send(numbered(i, 1000));
  EXPECT_EQ(h.link.queue_packets(), 5u);
  h.loop.run_until(instant_at(ms(1000)));
  ASSERT_EQ(h.arrivals.size(), 6u);  // 1 + 5
  for (std::uint32_t i = 0; i < 6; ++i) EXPECT_EQ(h.arrivals[i].number, i);
  const auto& s = h.link.stats();
  EXPECT_EQ(s.dropped(DropCause::queue_full), 4u);  // 10 - 6
  EXPECT_EQ(s.dropped_total(), 4u);
  EXPECT_EQ(s.packets_enqueued, 6u);
  EXPECT_EQ(s.max_queue_packets, 5u);
}

TEST(LinkTest, RandomLossRateMatchesProbability) {
  LinkConfig config;
  config.rate_bits_per_second = 1'000'000'000;
  config.loss_probability = 0.1;
  constexpr int kPackets = 20'000;
  auto run = [&](std::uint64_t seed) {
    Harness h(config, seed);
    for (std::uint32_t i = 0; i < kPackets; ++i) h.link.send(numbered(i, 100));
    h.loop.run_until(instant_at(ms(10'000)));
    EXPECT_EQ(h.arrivals.size() + h.link.stats().dropped(DropCause::random_loss),
              static_cast<std::size_t>(kPackets));
    return h.link.stats().dropped(DropCause::random_loss);
  };
  const auto dropped = run(1234);
  // Binomial: mean 20'000 * 0.1 = 2'000, sd sqrt(20'000 * 0.1 * 0.9) ~= 42.4;
  // 5 sd ~= 212.
  EXPECT_NEAR(static_cast<double>(dropped), 2'000.0, 212.0);
  EXPECT_EQ(run(1234), dropped);  // same seed, same losses
  EXPECT_NE(run(4321), dropped);  // another seed, another sample (almost surely)
}

TEST(LinkTest, PriorityDropEvictsLowPriorityFirst) {
  LinkConfig config;
  config.rate_bits_per_second = 1'000'000;
  config.queue_limit_packets = 10;
  config.priority_drop = true;
  config.low_priority_queue_fraction = 0.5;  // low priority admitted below 5 queued
  Harness h(config);
  h.link.send(numbered(0, 1000));  // on the wire
  for (std::uint32_t i = 100; i < 106; ++i) h.link.send(numbered(i, 1000, /*low_priority=*/true));
  // 100..104 queued (queue 0..4 < 5); 105 arrives at 5 >= 5 and is dropped.
  EXPECT_EQ(h.link.stats().dropped(DropCause::low_priority), 1u);
  for (std::uint32_t i = 1; i <= 8; ++i) h.link.send(numbered(i, 1000));
  // 1..5 fill the queue to 10; 6, 7, 8 each push out the newest low-priority
  // packet (104, 103, 102) instead of being dropped.
  EXPECT_EQ(h.link.stats().dropped(DropCause::evicted), 3u);
  EXPECT_EQ(h.link.stats().dropped(DropCause::queue_full), 0u);
  h.link.send(numbered(200, 1000, true));  // still above the threshold
  EXPECT_EQ(h.link.stats().dropped(DropCause::low_priority), 2u);
  h.loop.run_until(instant_at(ms(1000)));
  std::vector<std::uint32_t> order;
  for (const auto& a : h.arrivals) order.push_back(a.number);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{0, 100, 101, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(LinkTest, NormalArrivalToFullQueueWithoutLowPriorityIsDropped) {
  LinkConfig config;
  config.rate_bits_per_second = 1'000'000;
  config.queue_limit_packets = 2;
  config.priority_drop = true;
  Harness h(config);
  for (std::uint32_t i = 0; i < 4; ++i) h.link.send(numbered(i, 1000));
  EXPECT_EQ(h.link.stats().dropped(DropCause::queue_full), 1u);  // 4 - 1 - 2
  EXPECT_EQ(h.link.stats().dropped(DropCause::evicted), 0u);
}

TEST(LinkTest, JitterReordersButDeliversEverything) {
  LinkConfig config;
  config.rate_bits_per_second = 100'000'000;
  config.propagation_delay = ms(10);
  config.max_jitter = ms(5);
  Harness h(config);
  // One packet every 100 us; jitter up to 5 ms lets later ones overtake.
  for (std::uint32_t i = 0; i < 200; ++i) {
    h.loop.schedule_at(at_us(100 * i), [&h, i] { h.link.send(numbered(i, 1000)); });
  }
  h.loop.run_until(instant_at(ms(100)));
  ASSERT_EQ(h.arrivals.size(), 200u);
  int inversions = 0;
  for (std::size_t k = 1; k < h.arrivals.size(); ++k) {
    if (h.arrivals[k].number < h.arrivals[k - 1].number) ++inversions;
  }
  EXPECT_GT(inversions, 10);
  for (const auto& a : h.arrivals) {
    // Sent at 100 * n us, 80 us on the wire (1000 B at 100 Mbit/s), 10 ms flight, <= 5 ms jitter.
    const Instant earliest = at_us(100 * a.number + 80 + 10'000);
    EXPECT_GE(a.time, earliest);
    EXPECT_LE(a.time, earliest + ms(5));
  }
}

TEST(LinkTest, ObserverSeesQueueOverTime) {
  LinkConfig config;
  config.rate_bits_per_second = 8'000'000;  // 1000 B = 1 ms
  config.queue_limit_packets = 3;
  Harness h(config);
  std::vector<LinkEvent> events;
  h.link.set_observer([&](const LinkEvent& e) { events.push_back(e); });
  // t=0: burst of 5 (1 on the wire, 3 queued, 1 dropped); t=10 ms: one more.
  for (std::uint32_t i = 0; i < 5; ++i) h.link.send(numbered(i, 1000));
  h.loop.schedule_at(instant_at(ms(10)), [&] { h.link.send(numbered(9, 1000)); });
  h.loop.run_until(instant_at(ms(20)));
  std::size_t drops = 0, max_queue_after_5ms = 0;
  for (const auto& e : events) {
    if (e.kind == LinkEvent::Kind::drop) {
      ++drops;
      EXPECT_EQ(e.time, Instant{});
    }
    if (e.time >= instant_at(ms(5))) max_queue_after_5ms = std::max(max_queue_after_5ms, e.queue_packets);
  }
  EXPECT_EQ(drops, 1u);
  // "No drop and queue below its limit during [5 ms, 20 ms]": the burst drained by 4 ms.
  EXPECT_EQ(max_queue_after_5ms, 0u);
  EXPECT_EQ(h.arrivals.size(), 5u);
}

TEST(LinkTest, RejectsMissingRng) {
  EventLoop loop;
  LinkConfig config;
  config.loss_probability = 0.01;
  EXPECT_THROW(Link(loop, config, nullptr, [](Packet) {}), std::invalid_argument);
}

}  // namespace
}  // namespace egw::sim
