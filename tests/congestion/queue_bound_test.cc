// The delay-based bound on a domain's flight (congestion/queue_bound.h): a
// domain with the default loss-based law, always backlogged, sends into a
// FIFO that never drops (the peer gateway's 8 MB UDP receive buffer, drained
// by its CPU): without the bound the queue grows as long as the window does;
// with it the RTT stays near target at the full rate. Someone else's queue
// lifts the bound.
#include "congestion/queue_bound.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>

#include "congestion/congestion_domain.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::kMss;

// One sender, a FIFO bottleneck of `rate` without a drop limit, base RTT,
// and `extra_delay` added to every ack (someone else's standing queue).
struct LosslessPath {
  explicit LosslessPath(double rate_bytes_per_s, Duration base_rtt)
      : config([] {
          EnsembleConfig c = testing::test_config();
          c.queue_bound = true;  // the gateway's default
          return c;
        }()),
        now(instant_at(ms(1'000))),
        domain(config, DomainOptions{config.initial_window_packets, false}, now),
        service(std::chrono::duration_cast<Duration>(
            std::chrono::duration<double>(static_cast<double>(kMss) / rate_bytes_per_s))),
        base(base_rtt) {}

  struct InFlight {
    PacketNumber number;
    Instant ack_at;
  };

  // Runs for `d`: sends while the gate is open, acks each packet once it
  // has left the FIFO and a base RTT passed. Records RTT samples after `from`.
  void run(Duration d, Instant from) {
    const Instant until = now + d;
    while (now < until) {
      while (domain.gate(now).open()) {
        busy_until = std::max(busy_until, now) + service;
        flight.push_back({next, busy_until + base + extra_delay});
        domain.on_sent(SentPacket{next++, 1, kMss, now, true});
      }
      if (flight.empty()) break;
      now = std::max(now, flight.front().ack_at);
      const PacketNumber first = flight.front().number;
      PacketNumber last = first;
      while (!flight.empty() && flight.front().ack_at <= now) {
        last = flight.front().number;
        flight.pop_front();
      }
      out.acked.clear();
      out.lost.clear();
      const AckedRange r{first, last};
      domain.on_ack(std::span<const AckedRange>(&r, 1), ms(0), now, out, scratch);
      if (now >= from) {
        max_rtt = std::max(max_rtt, domain.rtt().latest_rtt());
        delivered += static_cast<ByteCount>(out.acked.size()) * kMss;
      }
    }
  }

  EnsembleConfig config;
  Instant now;
  CongestionDomain domain;
  Duration service;
  Duration base;
  Duration extra_delay{0};
  Instant busy_until{};
  std::deque<InFlight> flight;
  PacketNumber next = 1;
  AckOutcome out;
  SentPackets::AckResult scratch;
  Duration max_rtt{0};
  ByteCount delivered = 0;
};

// The bench's veth path: 0.25 ms without a queue, the peer's CPU the bottleneck.
TEST(QueueBound, KeepsTheStandingQueueOfALosslessPathNearOneMinRtt) {
  constexpr double kRate = 200e6;  // bytes/s
  LosslessPath p(kRate, us(250));
  const Instant measure_from = p.now + ms(500);
  p.run(ms(1'000), measure_from);
  // Without the bound NewReno's slow start never ends (nothing is lost)
  // and the queue reaches hundreds of ms.
  const Duration target = p.domain.queue_bound().target(p.domain.rtt().min_rtt());
  EXPECT_LE(p.max_rtt, target + target / 2) << "max RTT " << p.max_rtt.count() << " us";
  EXPECT_GE(static_cast<double>(p.delivered) / 0.5, 0.9 * kRate);
  EXPECT_TRUE(p.domain.queue_bound().limit().has_value());
  EXPECT_LT(p.domain.bytes_in_flight(), 3 * static_cast<ByteCount>(kRate * 250e-6));
}

// The same path without the bound (queue_bound: false): what the tests
// above guard against.
TEST(QueueBound, WithoutItTheQueueGrowsWithTheWindow) {
  LosslessPath p(200e6, us(250));
  p.config.queue_bound = false;
  p.run(ms(1'000), p.now + ms(500));
  EXPECT_GT(p.max_rtt, ms(100));
}

// A WAN bottleneck: the same, in tens of ms: the flight stays near 2 BDP.
TEST(QueueBound, BoundsAWanQueueAtOneMinRttToo) {
  constexpr double kRate = 2.5e6;  // 20 Mbit/s
  LosslessPath p(kRate, ms(60));
  const Instant measure_from = p.now + ms(10'000);
  p.run(ms(20'000), measure_from);
  EXPECT_LE(p.max_rtt, ms(180));
  EXPECT_GE(static_cast<double>(p.delivered) / 10.0, 0.9 * kRate);
}

// A delay no cut removes: someone else's standing queue (a buffer-filling
// flow at the bottleneck), or a loaded gateway's own loop. The cut is undone
// and the target includes that floor, so the law competes as before instead
// of starving (the Vegas problem).
TEST(QueueBound, TakesADelayNoCutRemovesAsTheFloor) {
  LosslessPath p(200e6, us(250));
  p.run(ms(200), p.now);
  ASSERT_TRUE(p.domain.queue_bound().limit().has_value());
  p.extra_delay = ms(5);  // 20 min RTTs of somebody else's queue
  p.run(ms(300), p.now + ms(100));
  EXPECT_GE(p.domain.queue_bound().floors_raised(), 1u);
  EXPECT_GE(p.domain.queue_bound().floor(), ms(5));
  // The flight fills the longer pipe: the full rate.
  EXPECT_GE(static_cast<double>(p.delivered) / 0.2, 0.9 * 200e6);
}

TEST(QueueBound, TargetIsOneMinRttOfQueueAndAtLeastTheFloor) {
  const QueueBound b;
  EXPECT_EQ(b.target(ms(60)), ms(120));
  EXPECT_EQ(b.target(us(30)), us(30) + QueueBound::kQueueFloor);
}

// Unit: a cut follows the round's RTT, is judged only by the round after
// next, and grows back with the room the RTT shows (1/8 per round at the
// target, doubling with no queue) until the law's window binds.
TEST(QueueBound, CutsToTheTargetAndGrowsBackToTheWindow) {
  QueueBound b;
  const ByteCount cwnd = 400 * kMss;  // the flight fills it: window-limited
  Instant t = instant_at(ms(1'000));
  const Duration min_rtt = ms(10);
  // Round 0 opens; round 1 (a packet sent after its start acked) at RTT 40 ms.
  b.on_ack(ms(40), t - ms(40), 400 * kMss, min_rtt, 400 * kMss, cwnd, kMss, t);
  t += ms(40);
  b.on_ack(ms(40), t - ms(1), 400 * kMss, min_rtt, 400 * kMss, cwnd, kMss, t);
  ASSERT_TRUE(b.limit().has_value());
  EXPECT_EQ(*b.limit(), 200 * kMss);  // 400 packets x 20 ms / 40 ms
  EXPECT_EQ(b.cuts(), 1u);
  // The next round still sees the old queue: not judged.
  t += ms(40);
  b.on_ack(ms(40), t - ms(1), 400 * kMss, min_rtt, 400 * kMss, cwnd, kMss, t);
  EXPECT_EQ(*b.limit(), 200 * kMss);
  // At the target from then on: + 1/8 per round, lifted at the window.
  int rounds = 0;
  while (b.limit() && rounds < 100) {
    t += ms(20);
    b.on_ack(ms(20), t - ms(1), *b.limit(), min_rtt, *b.limit(), cwnd, kMss, t);
    ++rounds;
  }
  EXPECT_FALSE(b.limit().has_value());
  EXPECT_EQ(rounds, 6);  // 200 x 1.125^6 > 400
  // Cut again, then a round at min_rtt (no queue): it doubles.
  t += ms(40);
  b.on_ack(ms(40), t - ms(1), 400 * kMss, min_rtt, 400 * kMss, cwnd, kMss, t);
  ASSERT_EQ(*b.limit(), 200 * kMss);
  for (int i = 0; i < 2; ++i) {
    t += ms(10);
    b.on_ack(ms(10), t - ms(1), 200 * kMss, min_rtt, 200 * kMss, cwnd, kMss, t);
  }
  EXPECT_EQ(*b.limit(), 400 * kMss);
}

// Delayed ACKs of a few packets, a request: an application-limited round
// says nothing about the window's queue, and a bound the flight no longer
// reaches is lifted, so a bulk transfer starting later is not held by it.
TEST(QueueBound, ApplicationLimitedRoundsNeitherCutNorKeepABound) {
  QueueBound b;
  const ByteCount cwnd = 400 * kMss;
  Instant t = instant_at(ms(1'000));
  const Duration min_rtt = ms(10);
  b.on_ack(ms(35), t - ms(35), 2 * kMss, min_rtt, 2 * kMss, cwnd, kMss, t);
  for (int i = 0; i < 5; ++i) {
    t += ms(35);
    b.on_ack(ms(35), t - ms(1), 2 * kMss, min_rtt, 2 * kMss, cwnd, kMss, t);
  }
  EXPECT_FALSE(b.limit().has_value());
  EXPECT_EQ(b.cuts(), 0u);
  // A window-limited round cuts; once the flight falls away, the bound goes.
  t += ms(40);
  b.on_ack(ms(40), t - ms(1), 400 * kMss, min_rtt, 400 * kMss, cwnd, kMss, t);
  ASSERT_TRUE(b.limit().has_value());
  for (int i = 0; i < 3; ++i) {
    t += ms(20);
    b.on_ack(ms(20), t - ms(1), 10 * kMss, min_rtt, 10 * kMss, cwnd, kMss, t);
  }
  EXPECT_FALSE(b.limit().has_value());
}

}  // namespace
}  // namespace egw::congestion
