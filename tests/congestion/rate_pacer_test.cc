// The domain's pacer alone: its rate, its burst allowance, the configured
// WAN rate's cap, and no banking of idle time.
#include "congestion/rate_pacer.h"

#include <gtest/gtest.h>

#include "congestion/congestion_domain.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::kMss;

constexpr double kRate = 1'200'000;  // bytes/s: one 1200-byte packet per ms

// Sends whenever the pacer allows from `start` for `span`; returns how many.
int send_for(RatePacer& p, Instant start, Duration span, double rate) {
  int sent = 0;
  Instant now = start;
  const Instant end = start + span;
  while (now < end) {
    if (p.can_send(now, rate, kMss, kMss)) {
      p.on_sent(now, rate, kMss, kMss);
      ++sent;
    } else {
      now = p.next_release(now, rate, kMss, kMss);
    }
  }
  return sent;
}

TEST(RatePacer, SendsAtTheRateAfterItsBurst) {
  RatePacer p;
  const Instant t0 = instant_at(ms(1'000));
  p.allow_burst(t0, 10 * kMss);  // nothing in flight: the initial window at once
  // 10 at once, then one per ms: 10 + 100 in 100 ms (the 100th lands at 99.x ms).
  const int sent = send_for(p, t0, ms(100), kRate);
  EXPECT_GE(sent, 109);
  EXPECT_LE(sent, 111);
}

TEST(RatePacer, BurstIsTwoPacketsOrAMillisecond) {
  EXPECT_EQ(RatePacer::burst_bytes(kRate, kMss), 2.0 * kMss);  // 1 ms = 1 packet < 2
  EXPECT_EQ(RatePacer::burst_bytes(100 * kRate, kMss), 100.0 * kMss);  // 1 ms = 100 packets
}

TEST(RatePacer, IdleTimeIsNotBanked) {
  RatePacer p;
  const Instant t0 = instant_at(ms(1'000));
  p.on_sent(t0, kRate, kMss, kMss);
  // A second of silence: only the bucket's depth (2 packets) may go at once.
  const Instant later = t0 + ms(1'000);
  int at_once = 0;
  while (p.can_send(later, kRate, kMss, kMss)) {
    p.on_sent(later, kRate, kMss, kMss);
    ++at_once;
  }
  EXPECT_EQ(at_once, 2);
  EXPECT_EQ(p.next_release(later, kRate, kMss, kMss) - later, ms(1));
}

TEST(RatePacer, NextReleaseIsSendable) {
  RatePacer p;
  const Instant t0 = instant_at(ms(1'000));
  const double rate = 777'777;  // not a round number of microseconds per packet
  Instant now = t0;
  for (int i = 0; i < 1000; ++i) {
    if (!p.can_send(now, rate, kMss, kMss)) {
      const Instant next = p.next_release(now, rate, kMss, kMss);
      ASSERT_GT(next, now);
      now = next;
      ASSERT_TRUE(p.can_send(now, rate, kMss, kMss)) << i;  // no spin at the release
    }
    p.on_sent(now, rate, kMss, kMss);
  }
}

// The domain's rate: 2 cwnd/srtt in slow start, 1.25 after, capped by max_rate_bps.
TEST(DomainPacing, RateFollowsCwndOverSrttAndTheCap) {
  EnsembleConfig c = testing::test_config();
  c.pacing.enabled = true;
  const Instant t0 = instant_at(ms(1'000));
  CongestionDomain d(c, DomainOptions{10, false}, t0);
  for (PacketNumber n = 1; n <= 10; ++n) d.on_sent(SentPacket{n, 1, kMss, t0, true});
  SentPackets::AckResult scratch;
  AckOutcome out;
  const AckedRange r{1, 10};
  d.on_ack(std::span<const AckedRange>(&r, 1), ms(0), t0 + ms(100), out, scratch);
  ASSERT_EQ(d.cwnd_bytes(), 20 * kMss);  // slow start: srtt 100 ms
  EXPECT_DOUBLE_EQ(d.pacing_rate_bytes_per_s(), 2.0 * 20 * kMss / 0.1);
  d.law().set_state(20 * kMss, 10 * kMss);  // congestion avoidance
  EXPECT_DOUBLE_EQ(d.pacing_rate_bytes_per_s(), 1.25 * 20 * kMss / 0.1);
  c.max_rate_bps = 800'000;  // 100 KB/s
  EXPECT_DOUBLE_EQ(d.pacing_rate_bytes_per_s(), 100'000.0);
  c.pacing.enabled = false;  // the cap still holds
  EXPECT_DOUBLE_EQ(d.pacing_rate_bytes_per_s(), 100'000.0);
  c.max_rate_bps = 0;
  EXPECT_EQ(d.pacing_rate_bytes_per_s(), 0.0);
}

// Slow start paced: after the initial window's burst the second round's 20
// packets leave spread over about half an RTT, never more than the burst
// allowance back to back; unpaced, all 20 leave at the ack's instant.
TEST(DomainPacing, SlowStartRoundIsSpreadNotBurst) {
  for (const bool paced : {true, false}) {
    EnsembleConfig c = testing::test_config();
    c.pacing.enabled = paced;
    Instant now = instant_at(ms(1'000));
    CongestionDomain d(c, DomainOptions{10, false}, now);
    PacketNumber next = 1;
    while (d.gate(now).open()) d.on_sent(SentPacket{next++, 1, kMss, now, true});
    ASSERT_EQ(next, 11u);
    now += ms(100);
    SentPackets::AckResult scratch;
    AckOutcome out;
    const AckedRange r{1, 10};
    d.on_ack(std::span<const AckedRange>(&r, 1), ms(0), now, out, scratch);
    int at_once = 0;
    while (d.gate(now).open()) {
      d.on_sent(SentPacket{next++, 1, kMss, now, true});
      ++at_once;
    }
    if (!paced) {
      EXPECT_EQ(at_once, 20);
      continue;
    }
    EXPECT_EQ(at_once, 10);  // nothing was in flight: the initial window's burst
    const SendGate g = d.gate(now);
    ASSERT_TRUE(g.window_open);
    ASSERT_TRUE(g.paced_until);
    // 2 x 24000 B / 100 ms = 480 KB/s: 2.5 ms per packet.
    EXPECT_EQ(*g.paced_until - now, us(2'500));
  }
}

}  // namespace
}  // namespace egw::congestion

namespace egw::congestion {
namespace {

// The hub learns its peer's download rate after the ensemble exists: the cap
// applies from then on, with pacing off as on.
TEST(EnsemblePacing, MaxRateSetLaterCapsTheSendRate) {
  testing::Harness h(testing::test_config());
  h.ensemble.add_member(1, ContentClass::bulk, h.now);
  h.ensemble.set_backlogged(1, true, h.now);
  // 120 KB/s: one 1200-byte packet (1228 B with IP and UDP) per 10.23 ms.
  h.ensemble.set_max_rate_bps(960'000);
  EXPECT_EQ(h.fill(1), 10);  // nothing in flight: the initial window at once
  h.now += ms(100);
  h.ack_range(1, 5);  // cwnd 15 packets, 5 in flight
  EXPECT_EQ(h.fill(1), 2);  // the bucket's depth, not 100 ms of banked rate
  const auto release = h.ensemble.next_pacing_release(h.now);
  ASSERT_TRUE(release);
  EXPECT_EQ(*release - h.now, us(10'234));
  const Instant paced_from = h.now;
  EXPECT_EQ(h.fill_paced(1, 5), 5);
  EXPECT_NEAR(to_seconds(h.now - paced_from), 5 * 1228 / 120e3, 1e-5);
  h.ensemble.set_max_rate_bps(0);  // no cap, pacing off: the window decides at once
  EXPECT_TRUE(h.ensemble.can_send(1, h.now));
}

// max_rate is the link's: the ACK-only packets that leave beside the data
// (a download's ACKs on an upload's link) take their bytes from it, so the
// data waits for them instead of queueing at the modem. The window and the
// law's own pacing never see them.
TEST(EnsemblePacing, MaxRateCountsUnscheduledDatagrams) {
  testing::Harness h(testing::test_config());
  h.ensemble.add_member(1, ContentClass::bulk, h.now);
  h.ensemble.set_backlogged(1, true, h.now);
  h.ensemble.set_max_rate_bps(960'000);  // 120 KB/s: 10 ms per 1200 bytes
  EXPECT_EQ(h.fill(1), 10);
  h.now += ms(100);
  h.ack_range(1, 5);
  EXPECT_EQ(h.fill(1), 2);
  h.now += us(10'234);  // one packet's worth of rate (1228 B with IP and UDP)...
  ASSERT_TRUE(h.ensemble.can_send(1, h.now));
  h.ensemble.on_unscheduled_sent(h.now, 586);  // ...half of it taken by ACKs (+28 B)
  EXPECT_FALSE(h.ensemble.can_send(1, h.now));
  const auto release = h.ensemble.next_pacing_release(h.now);
  ASSERT_TRUE(release);
  EXPECT_NEAR(to_seconds(*release - h.now), 614 / 120e3, 1e-5);
  // Without a cap they cost nothing.
  h.ensemble.set_max_rate_bps(0);
  h.ensemble.on_unscheduled_sent(h.now, 60'000);
  h.now += ms(1);
  EXPECT_TRUE(h.ensemble.can_send(1, h.now));
}

// A call's datagram does not wait for the pacer's next slot behind bulk
// (the WAN lab's 1 Mbit/s uplink: up to 10 ms per full packet): it leaves at
// once, the bucket goes into debt for it, and the bulk pays: over time the
// rate is the cap's. A second datagram waits until the debt is paid, so
// a flood of them is still paced at the cap.
TEST(EnsemblePacing, ACallsDatagramGoesPastThePacerAndTheBulkPays) {
  EnsembleConfig c = testing::test_config();
  c.scheduler.policy = SchedulingPolicy::content;
  testing::Harness h(c);
  constexpr MemberId kBulk = 1, kCall = 2;
  h.ensemble.add_member(kBulk, ContentClass::bulk, h.now);
  h.ensemble.add_member(kCall, ContentClass::realtime, h.now);
  h.ensemble.set_backlogged(kBulk, true, h.now);
  h.ensemble.set_max_rate_bps(960'000);  // 120 KB/s: 1228 B on the wire per 10.23 ms
  EXPECT_EQ(h.fill(kBulk), 10);
  h.now += ms(100);
  h.ack_range(1, 5);
  EXPECT_EQ(h.fill(kBulk), 2);  // the bucket is empty: the bulk waits 10 ms
  ASSERT_FALSE(h.ensemble.can_send(kBulk, h.now));
  h.ensemble.set_backlogged(kCall, true, h.now);
  EXPECT_EQ(h.ensemble.pick_sender(h.now), kCall);  // now, not at the next slot
  EXPECT_TRUE(h.ensemble.can_send(kCall, h.now));
  h.send(kCall, 250);
  // In debt: neither the bulk nor the next datagram goes until it is paid.
  EXPECT_FALSE(h.ensemble.pick_sender(h.now));
  EXPECT_FALSE(h.ensemble.can_send(kCall, h.now));
  const auto call_release = h.ensemble.next_pacing_release(h.now);
  ASSERT_TRUE(call_release);
  EXPECT_NEAR(to_seconds(*call_release - h.now), 278 / 120e3, 1e-5);
  // The bulk's next packet waits for the datagram's bytes too.
  h.ensemble.set_backlogged(kCall, false, h.now);
  const auto bulk_release = h.ensemble.next_pacing_release(h.now);
  ASSERT_TRUE(bulk_release);
  EXPECT_NEAR(to_seconds(*bulk_release - h.now), (278 + 1228) / 120e3, 1e-5);
}

}  // namespace
}  // namespace egw::congestion
