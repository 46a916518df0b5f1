// Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation).
#include "congestion/delivery_rate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
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

// An ACK-clocked sender (a window of 115 packets) through a bottleneck of
// one packet per ms; the peer acks each packet as it arrives, but the ACKs
// wait on the way back behind an upload and reach the sender in bunches of
// 10, every other bunch 8 ms late. The sender's clock times deliveries by
// when the bunches came; the peer's (its ACK timestamps) by when the data
// did. Returns the lowest and highest valid sample after the first 200.
std::pair<double, double> bunched_ack_rates(bool peer_clock) {
  DeliveryRateSampler s;
  std::vector<SentPacket> sent;
  std::vector<Duration> received;  // at the peer, its clock
  ByteCount in_flight = 0;
  Duration link_free{0};
  const auto send_one = [&](Instant now) {
    sent.push_back(send(s, sent.size(), in_flight, now));
    in_flight += kMss;
    link_free = std::max(link_free, now.time_since_epoch() + ms(25)) + ms(1);  // 25 ms there, 1 ms each
    received.push_back(link_free);
  };
  // The ACK of packet i leaves the peer at once and waits for the end of
  // its 10 ms, then 25 ms more, and every other bunch 8 ms in a queue.
  const auto arrives = [&](std::size_t i) {
    const auto bunch = received[i].count() / 10'000 + 1;
    return Instant{} + us(bunch * 10'000) + ms(25) + (bunch % 2 ? ms(8) : ms(0));
  };
  for (int i = 0; i < 115; ++i) send_one(t0);
  double lowest = 1e18, highest = 0;
  for (std::size_t next = 0; next < 1000; ++next) {
    const Instant now = arrives(next);
    const SentPacket acked[] = {sent[next]};
    std::optional<Duration> peer;
    if (peer_clock) peer = received[next];  // its stamp less its ack delay
    const RateSample rs = s.on_ack(acked, {}, in_flight, now, ms(50), peer);
    in_flight -= kMss;
    if (rs.valid && next > 200) {
      lowest = std::min(lowest, rs.delivery_rate_bytes_per_s);
      highest = std::max(highest, rs.delivery_rate_bytes_per_s);
    }
    send_one(now);
  }
  return {lowest, highest};
}

// The max filter takes the highest sample: on the peer's clock it is the
// bottleneck's rate; on the sender's the bunches misread it (here 4 % low;
// on the simulator's asymmetric line 12-19 % high, where the window then
// kept a queue on the downlink).
TEST(DeliveryRateTest, ThePeersClockTimesBunchedAcksAtTheBottlenecksRate) {
  const auto [low, high] = bunched_ack_rates(/*peer_clock=*/true);
  const auto [sender_low, sender_high] = bunched_ack_rates(/*peer_clock=*/false);
  std::printf("bunched ACKs: peer clock %.3f-%.3f MB/s, sender clock %.3f-%.3f MB/s\n", low / 1e6, high / 1e6,
              sender_low / 1e6, sender_high / 1e6);
  EXPECT_NEAR(high, 1.2e6, 1.2e6 * 0.01);
  EXPECT_GT(std::abs(sender_high - 1.2e6), 1.2e6 * 0.02);
}

}  // namespace
}  // namespace egw::congestion
