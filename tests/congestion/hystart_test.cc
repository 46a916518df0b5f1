// HyStart++ (RFC 9406 4.2) arithmetic, then its wiring into the Ensemble
// (SlowStart::hystart_pp) and the RFC 9002 7.3.2 recovery packet.
#include "congestion/hystart.h"

#include <algorithm>
#include <deque>
#include <utility>

#include <gtest/gtest.h>

#include "congestion/window_law.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

constexpr ByteCount kMss = 1200;

// Drives one HyStart through rounds: `packets` packets sent, then each acked
// alone with the given RTT sample. Returns the bytes HyStart let grow.
struct Rounds {
  explicit Rounds(bool paced = false) : hs(paced) {}
  ByteCount round(int packets, Duration rtt) {
    const PacketNumber first = next;
    for (int i = 0; i < packets; ++i) hs.on_packet_sent(next++);
    ByteCount grown = 0;
    for (PacketNumber p = first; p < next; ++p) grown += hs.on_ack(kMss, p, rtt, kMss);
    return grown;
  }
  HyStart hs;
  PacketNumber next = 1;
};

TEST(HyStart, RttThreshIsAnEighthOfTheLastMinimumClampedTo4And16Ms) {
  // Two rounds each: the first ACK of the second ends the first.
  Rounds r;
  EXPECT_EQ(r.hs.rtt_thresh(), Duration{0});  // no last round yet
  r.round(10, ms(100));
  r.round(10, ms(100));
  EXPECT_EQ(r.hs.last_round_min_rtt(), ms(100));
  EXPECT_EQ(r.hs.rtt_thresh(), us(12'500));  // 100 ms / 8, inside [4, 16]
  Rounds fast;
  fast.round(10, ms(20));
  fast.round(10, ms(20));
  EXPECT_EQ(fast.hs.rtt_thresh(), ms(4));  // 20 / 8 = 2.5 ms -> MIN_RTT_THRESH
  Rounds slow;
  slow.round(10, ms(200));
  slow.round(10, ms(200));
  EXPECT_EQ(slow.hs.rtt_thresh(), ms(16));  // 200 / 8 = 25 ms -> MAX_RTT_THRESH
}

TEST(HyStart, ARoundEndsWhenItsFirstPacketIsAcked) {
  HyStart hs(false);
  for (PacketNumber p = 1; p <= 4; ++p) hs.on_packet_sent(p);  // windowEnd = 1
  hs.on_ack(kMss, 1, ms(50), kMss);  // ends the (empty) first round
  EXPECT_EQ(hs.rounds_ended(), 1u);
  EXPECT_FALSE(hs.last_round_min_rtt().has_value());  // it had no samples
  EXPECT_EQ(hs.current_round_min_rtt(), ms(50));      // the ACK counts in the new round
  hs.on_ack(kMss, 2, ms(40), kMss);
  hs.on_packet_sent(5);  // the first packet since the round began: windowEnd
  hs.on_ack(kMss, 3, ms(45), kMss);
  hs.on_ack(kMss, 4, ms(42), kMss);
  EXPECT_EQ(hs.rounds_ended(), 1u);
  EXPECT_EQ(hs.current_round_min_rtt(), ms(40));  // min(50, 40, 45, 42)
  hs.on_ack(kMss, 5, ms(60), kMss);               // windowEnd acked
  EXPECT_EQ(hs.rounds_ended(), 2u);
  EXPECT_EQ(hs.last_round_min_rtt(), ms(40));
  EXPECT_EQ(hs.current_round_min_rtt(), ms(60));
}

TEST(HyStart, StaysInSlowStartWhileTheRttIsFlat) {
  Rounds r;
  EXPECT_EQ(r.round(10, ms(100)), 10 * kMss);  // slow start: every acked byte grows
  EXPECT_EQ(r.round(20, ms(100)), 20 * kMss);
  EXPECT_EQ(r.round(40, us(112'400)), 40 * kMss);  // +12.4 ms < RttThresh 12.5 ms
  EXPECT_EQ(r.hs.phase(), HyStart::Phase::slow_start);
}

TEST(HyStart, EntersCssAfterEightSamplesOfARoundWhoseMinimumGrew) {
  Rounds r;
  r.round(10, ms(100));  // one round, minimum 100 ms
  // Next round, samples of 112.5 ms = 100 + RttThresh (12.5): the exit is
  // checked only from the 8th sample on (N_RTT_SAMPLE).
  for (int i = 0; i < 10; ++i) r.hs.on_packet_sent(r.next + i);  // 11..20
  for (PacketNumber p = 11; p <= 17; ++p) {
    EXPECT_EQ(r.hs.on_ack(kMss, p, us(112'500), kMss), kMss);
  }
  EXPECT_EQ(r.hs.phase(), HyStart::Phase::slow_start);  // 7 samples
  // The 8th ACK still grows in slow start, then moves to CSS.
  EXPECT_EQ(r.hs.on_ack(kMss, 18, us(112'500), kMss), kMss);
  EXPECT_EQ(r.hs.phase(), HyStart::Phase::css);
  // CSS: cwnd grows by min(N, L * SMSS) / CSS_GROWTH_DIVISOR = 1200 / 4 = 300.
  EXPECT_EQ(r.hs.on_ack(kMss, 19, us(112'500), kMss), 300u);
  EXPECT_EQ(r.hs.css_rounds(), 0u);
}

TEST(HyStart, CssEndsInCongestionAvoidanceAfterFiveRounds) {
  Rounds r;
  r.round(10, ms(100));
  // +20 ms >= 12.5 ms: CSS from the 8th ACK on, baseline 120 ms:
  // 8 * 1200 + 12 * 300 = 9600 + 3600.
  EXPECT_EQ(r.round(20, ms(120)), 13'200u);
  ASSERT_EQ(r.hs.phase(), HyStart::Phase::css);
  for (std::uint32_t k = 1; k < HyStart::kCssRounds; ++k) {
    EXPECT_EQ(r.round(20, ms(125)), 20 * kMss / 4);  // 20 ACKs of 300 bytes
    EXPECT_EQ(r.hs.css_rounds(), k);                 // its first ACK ended a CSS round
    EXPECT_EQ(r.hs.phase(), HyStart::Phase::css);
  }
  // The first ACK of the next round ends the 5th CSS round (CSS_ROUNDS):
  // it still grows by 300, then HyStart is done and bytes pass unchanged.
  EXPECT_EQ(r.round(20, ms(125)), 300 + 19 * kMss);
  EXPECT_EQ(r.hs.phase(), HyStart::Phase::done);
}

TEST(HyStart, ASpuriousCssExitGoesBackToSlowStart) {
  Rounds r;
  r.round(10, ms(100));
  r.round(20, ms(120));  // CSS, cssBaselineMinRtt = 120 ms
  ASSERT_EQ(r.hs.phase(), HyStart::Phase::css);
  // Next round's minimum 110 ms < baseline 120 ms (after 8 samples): the
  // delay was jitter, not a queue. The first 8 acks still grow at 1/4.
  EXPECT_EQ(r.round(20, ms(110)), 8 * kMss / 4 + 12 * kMss);  // 2400 + 14400
  EXPECT_EQ(r.hs.phase(), HyStart::Phase::slow_start);
}

TEST(HyStart, UnpacedGrowthPerAckIsCappedAtEightSegments) {
  HyStart unpaced(/*paced=*/false);
  unpaced.on_packet_sent(1);
  EXPECT_EQ(unpaced.on_ack(20 * kMss, 1, ms(100), kMss), 8 * kMss);  // L = 8
  HyStart paced(/*paced=*/true);
  paced.on_packet_sent(1);
  EXPECT_EQ(paced.on_ack(20 * kMss, 1, ms(100), kMss), 20 * kMss);  // L = infinity
}

TEST(HyStart, ALossEndsIt) {
  Rounds r;
  r.round(10, ms(100));
  r.hs.on_congestion();
  EXPECT_EQ(r.hs.phase(), HyStart::Phase::done);
  EXPECT_EQ(r.round(20, ms(200)), 20 * kMss);  // unchanged, no CSS
}

// --- Ensemble wiring --------------------------------------------------------

using testing::Harness;
using testing::test_config;

// One member behind a bottleneck without a queue limit: 1 packet per ms
// (9.6 Mbit/s), 100 ms base RTT, so BDP = 100 packets = 120000 bytes. Every
// packet is acked alone; each ack lets the window refill at once (ACK clock).
struct Bottleneck {
  static constexpr Duration kPerPacket = ms(1);
  static constexpr Duration kBaseRtt = ms(100);
  static constexpr ByteCount kBdpBytes = 100 * testing::kMss;

  // Runs until `packets` have been acked or `stop` holds after an ack.
  template <typename Stop>
  void run(Harness& h, MemberId member, int packets, Stop stop) {
    auto fill = [&] {
      while (h.ensemble.can_send(member, h.now)) {
        const PacketNumber p = h.send(member);
        busy_until = std::max(busy_until, h.now) + kPerPacket;
        max_queue_delay = std::max(max_queue_delay, busy_until - h.now - kPerPacket);
        acks.push_back({p, busy_until + kBaseRtt});
      }
    };
    fill();
    for (int i = 0; i < packets && !acks.empty(); ++i) {
      const auto [p, at] = acks.front();
      acks.pop_front();
      h.now = at;
      h.ack_range(p, p);
      if (stop()) return;
      fill();
    }
  }
  Instant busy_until{};
  Duration max_queue_delay{0};
  std::deque<std::pair<PacketNumber, Instant>> acks;
};

TEST(HyStartEnsemble, QueueGrowthEndsSlowStartWithoutALoss) {
  EnsembleConfig c = test_config();
  Harness standard(c);
  c.slow_start = SlowStart::hystart_pp;
  Harness hystart(c);
  Bottleneck b_standard;
  Bottleneck b_hystart;
  for (auto [h, b] : {std::pair{&standard, &b_standard}, std::pair{&hystart, &b_hystart}}) {
    h->ensemble.add_member(1, ContentClass::bulk, h->now);
    b->run(*h, 1, 4000, [] { return false; });
  }
  // Standard slow start: 4000 ACKs, each +1200 bytes, no loss to stop it:
  // 12000 + 4000 * 1200 = 4812000 bytes, nearly all of it queued.
  EXPECT_EQ(standard.stats().ssthresh_bytes, kInfiniteSsthresh);
  EXPECT_EQ(standard.cwnd(), 4'812'000u);
  // HyStart++: a round starts with a standing queue once the window passed
  // about twice the BDP (here the 320-packet round: the 160-packet round
  // still drained before it began, ACKs come back 1 per ms); CSS grows by a
  // quarter, five rounds later ssthresh = cwnd (~990 packets) and
  // congestion avoidance adds 1 MSS per window.
  const ByteCount ssthresh = hystart.stats().ssthresh_bytes;
  EXPECT_LT(ssthresh, kInfiniteSsthresh);
  EXPECT_GE(hystart.cwnd(), ssthresh);
  EXPECT_LE(hystart.cwnd(), ssthresh + 2 * testing::kMss);
  EXPECT_LT(hystart.cwnd(), standard.cwnd() / 4);
  EXPECT_LT(b_hystart.max_queue_delay, b_standard.max_queue_delay / 4);
  EXPECT_EQ(hystart.stats().packets_lost, 0u);
}

TEST(HyStartEnsemble, UncoupledMembersEachRunTheirOwn) {
  EnsembleConfig c = test_config(CouplingMode::none);
  c.slow_start = SlowStart::hystart_pp;
  Harness h(c);
  h.ensemble.add_member(1, ContentClass::bulk, h.now);
  h.ensemble.add_member(2, ContentClass::bulk, h.now);  // idle: stays at its IW
  Bottleneck b;
  b.run(h, 1, 4000, [] { return false; });
  // Member 1 alone behaves like the coupled domain above: out of slow start
  // well short of the 4812000 bytes standard slow start reaches.
  EXPECT_GT(h.ensemble.member_cwnd_bytes(1), Bottleneck::kBdpBytes);
  EXPECT_LT(h.ensemble.member_cwnd_bytes(1), 4'812'000u / 4);
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(2), 10 * testing::kMss);  // its IW, untouched
}

TEST(RecoverySend, OnePacketMayLeaveAtOnceWhenRecoveryStarts) {
  for (const bool enabled : {false, true}) {
    SCOPED_TRACE(enabled);
    EnsembleConfig c = test_config();
    c.send_one_on_recovery = enabled;
    Harness h(c);
    h.ensemble.add_member(1, ContentClass::bulk, h.now);
    ASSERT_EQ(h.fill(1), 10);  // packets 1..10
    h.now += ms(100);
    h.ack_range(1, 10);          // cwnd 12000 + 10 * 1200 = 24000
    ASSERT_EQ(h.fill(1), 20);  // packets 11..30
    h.now += ms(100);
    h.ack_range(12, 14);  // 11 lost (3 later packets acked)
    // Loss first (RFC 9002 A.7): 24000 halved: 12000; flight 16 * 1200 = 19200.
    EXPECT_EQ(h.cwnd(), 12'000u);
    EXPECT_EQ(h.flight(), 19'200u);
    EXPECT_EQ(h.ensemble.can_send(1, h.now), enabled);  // 19200 + 1200 > 12000
    if (enabled) {
      h.send(1);  // the retransmission of 11
      EXPECT_FALSE(h.ensemble.can_send(1, h.now));  // only one
      h.ack_range(15, 15);  // still in the same recovery: no second packet
      EXPECT_FALSE(h.ensemble.can_send(1, h.now));
    }
  }
}

}  // namespace
}  // namespace egw::congestion
