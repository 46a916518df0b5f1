// Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation).
#include "congestion/delivery_rate.h"

#include <gtest/gtest.h>

#include <vector>

namespace egw::congestion {
namespace {

constexpr ByteCount kMss = 1200;
const Instant t0 = instant_at(ms(1000));

SentPacket send(DeliveryRateSampler& s, PacketNumber n, ByteCount in_flight, Instant at) {
  SentPacket p{n, 0, kMss, at, true};
  p.delivery = s.on_packet_sent(in_flight, at);
  return p;
}

// A sender pacing one packet per ms (1.2 MB/s) over a 50 ms path: every
// sample after the first round says 1.2 MB/s.
TEST(DeliveryRateTest, PacedFlowMeasuresItsRate) {
  DeliveryRateSampler s;
  std::vector<SentPacket> sent;
  ByteCount in_flight = 0;
  RateSample last;
  for (int i = 0; i < 200; ++i) {
    const Instant now = t0 + ms(i);
    // Acks of packets sent 50 ms ago arrive first.
    if (i >= 50) {
      const SentPacket acked[] = {sent[i - 50]};
      last = s.on_ack(acked, {}, in_flight, now, ms(50));
      in_flight -= kMss;
    }
    sent.push_back(send(s, i, in_flight, now));
    in_flight += kMss;
  }
  ASSERT_TRUE(last.valid);
  EXPECT_NEAR(last.delivery_rate_bytes_per_s, 1.2e6, 1.2e6 * 0.03);
  EXPECT_FALSE(last.is_app_limited);
  EXPECT_EQ(last.rtt, ms(50));
  EXPECT_EQ(last.acked_bytes, kMss);
  EXPECT_EQ(s.delivered_bytes(), 150 * kMss);
  // Rounds: one per 50 packets delivered (a round ends with the ack of the
  // first packet sent after the previous round ended).
  EXPECT_EQ(s.round_count(), 3u);
}

// A burst of acks (aggregation): the ack interval is tiny, but the send
// interval bounds the rate; an interval under min_rtt is not trusted.
TEST(DeliveryRateTest, CompressedAcksDoNotInflateTheRate) {
  DeliveryRateSampler s;
  std::vector<SentPacket> sent;
  for (int i = 0; i < 10; ++i) sent.push_back(send(s, i, i * kMss, t0 + ms(10 * i)));
  // All ten acknowledged at once 200 ms after the first send.
  const RateSample rs = s.on_ack(sent, {}, 10 * kMss, t0 + ms(200), ms(50));
  ASSERT_TRUE(rs.valid);
  // 10 packets over max(send 90 ms, ack 200 ms) = 200 ms.
  EXPECT_NEAR(rs.delivery_rate_bytes_per_s, 10.0 * kMss / 0.2, 1.0);
  EXPECT_EQ(rs.interval, ms(200));
  EXPECT_TRUE(rs.round_start);
  // The next ack comes 1 ms later for a packet sent just now: 1 ms < min_rtt.
  const SentPacket p = send(s, 10, 0, t0 + ms(200));
  const SentPacket acked[] = {p};
  const RateSample quick = s.on_ack(acked, {}, kMss, t0 + ms(201), ms(50));
  EXPECT_FALSE(quick.valid);
}

// Packets sent while the sender had nothing more to send carry the mark
// until the flight of that moment has been delivered.
TEST(DeliveryRateTest, AppLimitedMarkLastsOneFlight) {
  DeliveryRateSampler s;
  const SentPacket a = send(s, 1, 0, t0);
  s.on_app_limited(kMss);
  EXPECT_TRUE(s.app_limited());
  const SentPacket b = send(s, 2, kMss, t0 + ms(1));
  EXPECT_FALSE(a.delivery.is_app_limited);
  EXPECT_TRUE(b.delivery.is_app_limited);
  const SentPacket acked_a[] = {a};
  (void)s.on_ack(acked_a, {}, 2 * kMss, t0 + ms(60), Duration{0});
  EXPECT_TRUE(s.app_limited());  // delivered == the mark, not beyond it
  const SentPacket acked_b[] = {b};
  const RateSample rs = s.on_ack(acked_b, {}, kMss, t0 + ms(61), Duration{0});
  EXPECT_TRUE(rs.is_app_limited);
  EXPECT_FALSE(s.app_limited());
  EXPECT_FALSE(send(s, 3, 0, t0 + ms(62)).delivery.is_app_limited);
}

TEST(DeliveryRateTest, LossesAndFlightAreReported) {
  DeliveryRateSampler s;
  const SentPacket a = send(s, 1, 0, t0);
  const SentPacket b = send(s, 2, kMss, t0 + ms(1));
  const SentPacket c = send(s, 3, 2 * kMss, t0 + ms(2));
  EXPECT_EQ(s.delivered_at_send(c), 0u);
  EXPECT_EQ(c.delivery.first_sent_age_us, 2000u);  // a's send time, 2 ms before
  const SentPacket acked[] = {b, c};
  const SentPacket lost[] = {a};
  const RateSample rs = s.on_ack(acked, lost, 3 * kMss, t0 + ms(60), ms(50));
  EXPECT_EQ(rs.lost_bytes, kMss);
  EXPECT_EQ(rs.acked_bytes, 2 * kMss);
  EXPECT_EQ(rs.prior_in_flight, 3 * kMss);
  EXPECT_EQ(rs.rtt, ms(58));
  EXPECT_EQ(s.lost_bytes(), kMss);
  s.on_lost(kMss);
  EXPECT_EQ(s.lost_bytes(), 2 * kMss);
}

}  // namespace
}  // namespace egw::congestion
