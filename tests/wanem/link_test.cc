// The WAN link model (bench/wanem/link.h) on a virtual clock: exact
// serialisation and queue limits, seeded loss, jitter, reordering and the
// priority drop of DSCP LE packets.
#include "bench/wanem/link.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace egw::wanem {
namespace {

Time at_us(std::int64_t us) { return Time(std::chrono::microseconds(us)); }
Time at_ns(std::int64_t ns) { return Time(Nanos(ns)); }

Packet pkt(std::uint32_t slot, std::uint32_t len = 1500, bool le = false) { return {slot, len, le}; }

// Every packet due by `until`, as (slot, departure) in the order popped.
struct Out {
  std::uint32_t slot;
  Time at;
};
std::vector<Out> drain(Link& link, Time until) {
  std::vector<Out> out;
  while (auto t = link.next_departure()) {
    if (*t > until) break;
    while (auto p = link.pop_due(*t)) out.push_back({p->slot, *t});
  }
  return out;
}

LinkConfig slow(std::uint64_t rate_bps) {
  LinkConfig c;
  c.rate_bps = rate_bps;
  return c;
}

TEST(WanemLink, SerialisesBackToBackAtTheRateThenAddsTheDelay) {
  LinkConfig c = slow(10'000'000);
  c.delay = std::chrono::milliseconds(50);
  Link link(c);
  // 1500 B * 8 / 10 Mbit/s = 1.2 ms each; all three arrive at 0.
  for (std::uint32_t i = 0; i < 3; ++i) EXPECT_EQ(link.on_packet(at_us(0), pkt(i)).verdict, Verdict::queued);
  EXPECT_EQ(link.next_departure(), at_us(51'200));
  EXPECT_FALSE(link.pop_due(at_ns(51'199'999)));
  const auto out = drain(link, at_us(1'000'000));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].at, at_us(51'200));
  EXPECT_EQ(out[1].at, at_us(52'400));
  EXPECT_EQ(out[2].at, at_us(53'600));
  EXPECT_EQ(link.packets_inside(), 0u);
}

TEST(WanemLink, AnIdleWireStartsAtTheArrival) {
  Link link(slow(1'000'000));  // 1000 B: 8 ms
  link.on_packet(at_us(0), pkt(0, 1000));
  link.on_packet(at_us(20'000), pkt(1, 1000));  // the wire went idle at 8 ms
  link.on_packet(at_us(21'000), pkt(2, 500));   // waits for 1 until 28 ms, then 4 ms
  const auto out = drain(link, at_us(1'000'000));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].at, at_us(8'000));
  EXPECT_EQ(out[1].at, at_us(28'000));
  EXPECT_EQ(out[2].at, at_us(32'000));
}

TEST(WanemLink, SerialisationRoundsUpToTheNanosecond) {
  Link link(slow(3'000'000));  // 100 B = 800 bit: 266,666.67 ns -> 266,667
  link.on_packet(at_ns(0), pkt(0, 100));
  EXPECT_EQ(link.next_departure(), at_ns(266'667));
}

TEST(WanemLink, UnlimitedRateIsDelayOnly) {
  LinkConfig c;
  c.delay = std::chrono::microseconds(2'500);
  c.queue_packets = 1;  // no wire time: nothing ever waits
  Link link(c);
  for (std::uint32_t i = 0; i < 100; ++i) EXPECT_EQ(link.on_packet(at_us(0), pkt(i)).verdict, Verdict::queued);
  EXPECT_EQ(link.counters().max_queue_packets, 0u);
  const auto out = drain(link, at_us(10'000));
  ASSERT_EQ(out.size(), 100u);
  for (std::uint32_t i = 0; i < 100; ++i) {
    EXPECT_EQ(out[i].slot, i);
    EXPECT_EQ(out[i].at, at_us(2'500));
  }
}

// ns-2 semantics: queue=10p counts packets waiting, not the one on the wire.
TEST(WanemLink, PacketLimitHoldsTenWaitingPlusOneOnTheWire) {
  LinkConfig c = slow(1'000'000);
  c.queue_packets = 10;
  Link link(c);
  int queued = 0;
  for (std::uint32_t i = 0; i < 50; ++i) queued += link.on_packet(at_us(0), pkt(i, 1000)).verdict == Verdict::queued;
  EXPECT_EQ(queued, 11);
  EXPECT_EQ(link.queued_packets(), 10u);
  EXPECT_EQ(link.counters().dropped_queue, 39u);
  EXPECT_EQ(link.counters().max_queue_packets, 10u);
  EXPECT_EQ(link.counters().max_queue_bytes, 10'000u);
  // At 8 ms the first leaves the wire and the second starts: one place frees.
  EXPECT_EQ(link.on_packet(at_ns(7'999'999), pkt(50, 1000)).verdict, Verdict::dropped_queue);
  EXPECT_EQ(link.on_packet(at_us(8'000), pkt(51, 1000)).verdict, Verdict::queued);
  EXPECT_EQ(link.on_packet(at_us(8'000), pkt(52, 1000)).verdict, Verdict::dropped_queue);
  const auto out = drain(link, at_us(1'000'000));
  ASSERT_EQ(out.size(), 12u);
  EXPECT_EQ(out.back().slot, 51u);
  EXPECT_EQ(out.back().at, at_us(12 * 8'000));
}

TEST(WanemLink, ByteLimitCountsWaitingIpBytes) {
  LinkConfig c = slow(1'000'000);
  c.queue_bytes = 15'000;
  Link link(c);
  EXPECT_EQ(link.on_packet(at_us(0), pkt(0, 1500)).verdict, Verdict::queued);  // on the wire, not counted
  for (std::uint32_t i = 1; i <= 14; ++i) EXPECT_EQ(link.on_packet(at_us(0), pkt(i, 1000)).verdict, Verdict::queued);
  EXPECT_EQ(link.queued_bytes(), 14'000u);
  EXPECT_EQ(link.on_packet(at_us(0), pkt(15, 1001)).verdict, Verdict::dropped_queue);  // 15,001 > 15,000
  EXPECT_EQ(link.on_packet(at_us(0), pkt(16, 1000)).verdict, Verdict::queued);         // exactly 15,000
  EXPECT_EQ(link.on_packet(at_us(0), pkt(17, 40)).verdict, Verdict::dropped_queue);
  EXPECT_EQ(link.counters().max_queue_bytes, 15'000u);
  EXPECT_EQ(link.counters().max_queue_packets, 15u);
}

TEST(WanemLink, LossIsBernoulliAtTheConfiguredRateAndSeeded) {
  LinkConfig c;
  c.loss = 0.1;
  c.seed = 42;
  Link a(c), b(c);
  const int n = 100'000;
  std::vector<bool> lost_a, lost_b;
  for (int i = 0; i < n; ++i) {
    lost_a.push_back(a.on_packet(at_us(i), pkt(0)).verdict == Verdict::dropped_loss);
    lost_b.push_back(b.on_packet(at_us(i), pkt(0)).verdict == Verdict::dropped_loss);
  }
  EXPECT_EQ(lost_a, lost_b);  // same seed, same losses
  // sigma = sqrt(n p (1 - p)) = 94.9 packets; allow 5 sigma.
  const double lost = static_cast<double>(a.counters().dropped_loss);
  EXPECT_NEAR(lost, 10'000, 475);
  c.seed = 43;
  Link other(c);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) differ += (other.on_packet(at_us(i), pkt(0)).verdict == Verdict::dropped_loss) != lost_a[i];
  EXPECT_GT(differ, 50);  // another seed, other losses (~180 expected)
}

TEST(WanemLink, LossOneIsALinkDownAndTakesNoQueueSpace) {
  LinkConfig c = slow(1'000'000);
  c.queue_packets = 2;
  c.loss = 1;
  Link link(c);
  for (std::uint32_t i = 0; i < 10; ++i) EXPECT_EQ(link.on_packet(at_us(0), pkt(i)).verdict, Verdict::dropped_loss);
  EXPECT_EQ(link.counters().dropped_loss, 10u);
  EXPECT_EQ(link.counters().dropped_queue, 0u);
  c.loss = 0;  // the link comes back
  link.configure(c);
  EXPECT_EQ(link.on_packet(at_us(1), pkt(10)).verdict, Verdict::queued);
}

TEST(WanemLink, JitterWithoutReorderKeepsOrder) {
  LinkConfig c;
  c.delay = std::chrono::milliseconds(10);
  c.jitter = std::chrono::milliseconds(5);
  c.seed = 7;
  Link link(c);
  for (std::uint32_t i = 0; i < 1000; ++i) link.on_packet(at_us(i * 100), pkt(i));  // every 0.1 ms, 5 ms of jitter
  const auto out = drain(link, at_us(1'000'000));
  ASSERT_EQ(out.size(), 1000u);
  Nanos max_extra{0};
  for (std::uint32_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(out[i].slot, i);
    const Nanos extra = out[i].at - at_us(i * 100) - c.delay;
    EXPECT_GE(extra, Nanos(0));
    max_extra = std::max(max_extra, extra);
  }
  EXPECT_GT(max_extra, std::chrono::milliseconds(4));  // the jitter did apply
  EXPECT_LE(max_extra, std::chrono::milliseconds(5));
}

TEST(WanemLink, ReorderLetsJitteredPacketsOvertake) {
  LinkConfig c;
  c.delay = std::chrono::milliseconds(10);
  c.jitter = std::chrono::milliseconds(5);
  c.reorder = 1;
  c.seed = 7;
  Link link(c);
  for (std::uint32_t i = 0; i < 1000; ++i) link.on_packet(at_us(i * 100), pkt(i));
  const auto out = drain(link, at_us(1'000'000));
  ASSERT_EQ(out.size(), 1000u);
  int inversions = 0;
  for (std::size_t i = 1; i < out.size(); ++i) {
    inversions += out[i].slot < out[i - 1].slot;
    EXPECT_GE(out[i].at, out[i - 1].at);  // popped in departure order
  }
  for (const Out& o : out) {  // and each exactly delay + [0, jitter] after it arrived
    EXPECT_GE(o.at - at_us(o.slot * 100), c.delay);
    EXPECT_LE(o.at - at_us(o.slot * 100), c.delay + c.jitter);
  }
  EXPECT_GT(inversions, 100);
}

// TCP fast start's rule: when full, LE packets go first.
TEST(WanemLink, LeArrivalAtAFullQueueIsDropped) {
  LinkConfig c = slow(1'000'000);
  c.queue_packets = 2;
  Link link(c);
  link.on_packet(at_us(0), pkt(0));
  link.on_packet(at_us(0), pkt(1, 1500, true));
  link.on_packet(at_us(0), pkt(2));
  const Admission a = link.on_packet(at_us(0), pkt(3, 1500, true));
  EXPECT_EQ(a.verdict, Verdict::dropped_queue);
  EXPECT_TRUE(a.evicted.empty());
  EXPECT_EQ(link.counters().dropped_le, 0u);
}

TEST(WanemLink, NonLeArrivalEvictsTheNewestWaitingLePacket) {
  LinkConfig c = slow(1'000'000);
  c.queue_packets = 3;
  Link link(c);
  link.on_packet(at_us(0), pkt(0, 1500, true));  // on the wire: never evicted
  link.on_packet(at_us(0), pkt(1, 1500, true));
  link.on_packet(at_us(0), pkt(2, 1500, true));
  link.on_packet(at_us(0), pkt(3));
  Admission a = link.on_packet(at_us(0), pkt(4));
  EXPECT_EQ(a.verdict, Verdict::queued);
  ASSERT_EQ(a.evicted.size(), 1u);
  EXPECT_EQ(a.evicted[0].slot, 2u);
  a = link.on_packet(at_us(0), pkt(5));
  ASSERT_EQ(a.evicted.size(), 1u);
  EXPECT_EQ(a.evicted[0].slot, 1u);
  // Now 3, 4, 5 wait, none LE: the next arrival is dropped.
  EXPECT_EQ(link.on_packet(at_us(0), pkt(6)).verdict, Verdict::dropped_queue);
  EXPECT_EQ(link.counters().dropped_le, 2u);
  EXPECT_EQ(link.counters().dropped_queue, 1u);
  const auto out = drain(link, at_us(1'000'000));
  std::vector<std::uint32_t> slots;
  for (const Out& o : out) slots.push_back(o.slot);
  EXPECT_EQ(slots, (std::vector<std::uint32_t>{0, 3, 4, 5}));
  EXPECT_EQ(out[1].at, at_us(2 * 12'000));  // the evicted took no wire time
}

TEST(WanemLink, ByteLimitEvictsAsFewLePacketsAsMakeRoom) {
  LinkConfig c = slow(1'000'000);
  c.queue_bytes = 3000;
  Link link(c);
  link.on_packet(at_us(0), pkt(0));
  link.on_packet(at_us(0), pkt(1, 1000, true));
  link.on_packet(at_us(0), pkt(2, 1000));
  link.on_packet(at_us(0), pkt(3, 500, true));
  link.on_packet(at_us(0), pkt(4, 500, true));  // 3000 waiting
  const Admission a = link.on_packet(at_us(0), pkt(5, 1200));
  ASSERT_EQ(a.verdict, Verdict::queued);  // 500 + 500 + 1000 LE bytes go, newest first
  ASSERT_EQ(a.evicted.size(), 3u);
  EXPECT_EQ(a.evicted[0].slot, 4u);
  EXPECT_EQ(a.evicted[1].slot, 3u);
  EXPECT_EQ(a.evicted[2].slot, 1u);
  EXPECT_EQ(link.queued_bytes(), 2200u);
  // 800 free, no LE left: too big to fit even evicting everything it may.
  EXPECT_EQ(link.on_packet(at_us(0), pkt(6, 900)).verdict, Verdict::dropped_queue);
  link.on_packet(at_us(0), pkt(7, 100, true));
  const Admission b = link.on_packet(at_us(0), pkt(8, 1000));  // the 100 LE bytes would not suffice
  EXPECT_EQ(b.verdict, Verdict::dropped_queue);
  EXPECT_TRUE(b.evicted.empty());
  EXPECT_EQ(link.counters().dropped_le, 3u);
}

TEST(WanemLink, LeDropOffTreatsLeLikeAnyPacket) {
  LinkConfig c = slow(1'000'000);
  c.queue_packets = 1;
  c.le_drop = false;
  Link link(c);
  link.on_packet(at_us(0), pkt(0));
  link.on_packet(at_us(0), pkt(1, 1500, true));
  EXPECT_EQ(link.on_packet(at_us(0), pkt(2)).verdict, Verdict::dropped_queue);
  EXPECT_EQ(link.counters().dropped_le, 0u);
}

TEST(WanemLink, CountersAddUpAndReset) {
  LinkConfig c = slow(1'000'000);
  c.queue_packets = 1;
  c.loss = 0.5;
  Link link(c);
  for (std::uint32_t i = 0; i < 20; ++i) link.on_packet(at_us(i), pkt(i, 100 + i));
  drain(link, at_us(1'000'000));
  const LinkCounters& k = link.counters();
  EXPECT_EQ(k.in_packets, 20u);
  EXPECT_EQ(k.in_bytes, 20u * 100 + 190);
  EXPECT_EQ(k.out_packets + k.dropped_loss + k.dropped_queue + k.dropped_le, 20u);
  EXPECT_GT(k.dropped_loss, 0u);
  EXPECT_GT(k.dropped_queue, 0u);
  link.reset_counters();
  EXPECT_EQ(link.counters().in_packets, 0u);
  EXPECT_EQ(link.counters().out_bytes, 0u);
  EXPECT_EQ(link.counters().max_queue_packets, 0u);
}

TEST(WanemLink, ARateChangeAppliesToPacketsNotYetOnTheWire) {
  Link link(slow(1'000'000));
  link.on_packet(at_us(0), pkt(0, 1000));  // 8 ms at 1 Mbit/s
  link.on_packet(at_us(0), pkt(1, 1000));
  link.configure(slow(2'000'000));  // 1 starts at 8 ms and takes 4
  const auto out = drain(link, at_us(1'000'000));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].at, at_us(8'000));
  EXPECT_EQ(out[1].at, at_us(12'000));
}

}  // namespace
}  // namespace egw::wanem
