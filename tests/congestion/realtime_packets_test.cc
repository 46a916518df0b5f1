// Smaller bulk packets while a call runs on a slow path (issue 21;
// congestion/realtime_packets.h, Ensemble::packet_bytes_limit).
#include <gtest/gtest.h>

#include <memory>

#include "congestion/realtime_packets.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

constexpr MemberId kBulk = 1, kCall = 2;

std::unique_ptr<testing::Harness> call_beside_bulk(std::uint64_t max_rate_bps,
                                                   WindowLawKind law = WindowLawKind::newreno) {
  EnsembleConfig c = testing::test_config();
  c.scheduler.policy = SchedulingPolicy::content;
  c.law = law;
  c.max_rate_bps = max_rate_bps;
  auto h = std::make_unique<testing::Harness>(c);
  h->ensemble.add_member(kBulk, ContentClass::bulk, h->now);
  h->ensemble.add_member(kCall, ContentClass::realtime, h->now);
  h->ensemble.set_backlogged(kBulk, true, h->now);
  return h;
}

TEST(RealtimePackets, SizeFollowsTheRateWithinFloorAndFullSize) {
  RealtimePackets r(RealtimePacketsConfig{});  // 4 ms, floor 576
  EXPECT_EQ(r.limit(250'000, 1472, Instant{}), 972u);     // 2 Mbit/s: 1,000 B on the wire in 4 ms
  EXPECT_EQ(r.limit(125'000, 1472, Instant{}), 576u);     // 1 Mbit/s: 472 would be below the floor
  EXPECT_EQ(r.limit(2'500'000, 1472, Instant{}), 1472u);  // 20 Mbit/s: a full packet is 0.6 ms
  EXPECT_EQ(r.limit(0, 1472, Instant{}), 1472u);          // no rate known: nothing to go by
  EXPECT_EQ(r.limit(125'000, 500, Instant{}), 500u);      // never above the size in use
}

// A 20 ms call on a 1 Mbit/s path: once its cadence is known, a packet built
// right after a call datagram may take the budget plus the time until the
// next is due (less the 2 ms margin); the shortest gap counts, so a second
// call, a silence or a burst only shrink the packets again.
TEST(RealtimePackets, SizeFollowsTheCallsCadence) {
  RealtimePackets r(RealtimePacketsConfig{});  // 4 ms, floor 576, margin 2 ms
  Instant t = instant_at(ms(1000));
  for (std::size_t i = 0; i < RealtimePackets::kGaps; ++i, t += ms(20)) r.on_realtime_sent(t);
  EXPECT_FALSE(r.cadence().has_value());  // 7 gaps: not yet
  r.on_realtime_sent(t);
  ASSERT_TRUE(r.cadence().has_value());
  EXPECT_EQ(*r.cadence(), ms(20));
  EXPECT_EQ(r.limit(125'000, 1472, t), 1472u);            // 22 ms of wire time: a full packet
  EXPECT_EQ(r.limit(125'000, 1472, t + ms(12)), 1222u);   // 10 ms: 1,250 B on the wire
  EXPECT_EQ(r.limit(125'000, 1472, t + ms(17)), 597u);    // 5 ms
  EXPECT_EQ(r.limit(125'000, 1472, t + ms(19)), 576u);    // past the due time: the budget alone
  EXPECT_EQ(r.limit(125'000, 1472, t + ms(40)), 576u);    // the call is late: the budget alone
  r.on_realtime_sent(t + ms(23));
  r.on_realtime_sent(t + ms(26));  // a second call 3 ms after the first
  EXPECT_EQ(*r.cadence(), ms(3));
  EXPECT_EQ(r.limit(125'000, 1472, t + ms(26)), 597u);  // 4 + 1 ms
}

TEST(RealtimePackets, ActiveFromTheFirstRealtimePacketUntilTheHoldEnds) {
  RealtimePacketsConfig c;
  const Instant t0 = instant_at(ms(1000));
  RealtimePackets r(c);
  EXPECT_FALSE(r.active(t0));
  r.on_realtime_sent(t0);
  EXPECT_TRUE(r.active(t0));
  EXPECT_TRUE(r.active(t0 + c.hold));
  EXPECT_FALSE(r.active(t0 + c.hold + us(1)));
  c.serialisation_budget = Duration{0};  // off
  RealtimePackets off(c);
  off.on_realtime_sent(t0);
  EXPECT_FALSE(off.active(t0));
}

TEST(EnsembleRealtimePackets, BulkPacketsShrinkWhileACallSendsOnASlowPath) {
  auto hp = call_beside_bulk(2'000'000);
  testing::Harness& h = *hp;
  EXPECT_EQ(h.ensemble.packet_bytes_limit(kBulk, h.now), testing::kMss);  // no call yet
  h.send(kBulk);
  EXPECT_EQ(h.ensemble.packet_bytes_limit(kBulk, h.now), testing::kMss);
  h.send(kCall, 250);
  EXPECT_EQ(h.ensemble.packet_bytes_limit(kBulk, h.now), 972u);  // 4 ms at 2 Mbit/s
  EXPECT_EQ(h.ensemble.packet_bytes_limit(kControlMember, h.now), 972u);
  EXPECT_EQ(h.ensemble.packet_bytes_limit(kCall, h.now), testing::kMss);  // the call's own
  // A pause in the call (a codec's silence) keeps it; the end of the hold ends it.
  h.now += ms(1900);
  EXPECT_EQ(h.ensemble.packet_bytes_limit(kBulk, h.now), 972u);
  h.now += ms(101);
  EXPECT_EQ(h.ensemble.packet_bytes_limit(kBulk, h.now), testing::kMss);
}

TEST(EnsembleRealtimePackets, FastPathsAndUnknownRatesKeepFullSize) {
  const auto fast = call_beside_bulk(20'000'000);
  fast->send(kCall, 250);
  EXPECT_EQ(fast->ensemble.packet_bytes_limit(kBulk, fast->now), testing::kMss);
  const auto unknown = call_beside_bulk(0);  // NewReno unpaced, no max_rate
  unknown->send(kCall, 250);
  EXPECT_EQ(unknown->ensemble.packet_bytes_limit(kBulk, unknown->now), testing::kMss);
  const auto slow = call_beside_bulk(500'000);
  slow->send(kCall, 250);
  EXPECT_EQ(slow->ensemble.packet_bytes_limit(kBulk, slow->now), 576u);  // the floor
}

// Without max_rate the model law's measured bottleneck rate decides: acks
// of 1,200-byte packets every 10 ms are 120 KB/s, so 4 ms is 480 B: the floor.
TEST(EnsembleRealtimePackets, TheModelLawsMeasuredRateWithoutMaxRate) {
  auto hp = call_beside_bulk(0, WindowLawKind::model);
  testing::Harness& h = *hp;
  h.send(kCall, 250);
  EXPECT_EQ(h.ensemble.packet_bytes_limit(kBulk, h.now), testing::kMss);  // nothing measured yet
  PacketNumber acked = 1;
  for (int i = 0; i < 60; ++i) {
    h.send(kBulk);
    h.now += ms(10);
    h.ack_range(acked, h.next_number - 1);
    acked = h.next_number;
  }
  h.send(kCall, 250);
  const double bw = h.stats().law.bottleneck_bytes_per_s;
  ASSERT_GT(bw, 60'000);
  ASSERT_LT(bw, 240'000);
  EXPECT_EQ(h.ensemble.packet_bytes_limit(kBulk, h.now), 576u);
}

}  // namespace
}  // namespace egw::congestion
