// Tail loss probes (RFC 9002 6.2, EnsembleConfig::tail_probes): when no ack
// comes for a PTO the ensemble lets one packet go beyond the window and
// declares nothing lost; the probe's ACK lets the ordinary thresholds find
// the tail loss, so it costs one window reduction, not an RTO.
#include <gtest/gtest.h>

#include "congestion/ensemble.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::kMss;
using testing::numbers;
using testing::test_config;

constexpr MemberId A = 1;
constexpr MemberId B = 2;

// Packets 1..10 sent, 1..5 acked 100 ms later (srtt 100 ms, rttvar 50 ms:
// PTO = 100 + 4 * 50 + 25 = 325 ms, RTO = 300 ms; the probe comes at the
// earlier), then the window filled (6..20): everything after 5 is the lost
// tail.
void lose_the_tail(Harness& h) {
  ASSERT_EQ(h.fill(A), 10);
  h.now += ms(100);
  h.ack_range(1, 5);
  ASSERT_EQ(h.cwnd(), 18000u);  // slow start: 12000 + 5 * 1200
  ASSERT_EQ(h.fill(A), 10);     // 11..20: 15 packets in flight, the window full
  ASSERT_FALSE(h.ensemble.can_send(A, h.now));
}

TEST(EnsembleTailProbe, ProbeAfterAPtoThenOneReductionInsteadOfAnRto) {
  Harness h(test_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  lose_the_tail(h);
  const Instant last_ack = h.now;
  ASSERT_TRUE(h.ensemble.next_timeout());
  EXPECT_EQ(*h.ensemble.next_timeout(), last_ack + ms(300));

  h.now = *h.ensemble.next_timeout();
  const auto out = h.ensemble.on_timeout(h.now);
  EXPECT_FALSE(out.rto_fired);
  EXPECT_TRUE(out.lost.empty());
  ASSERT_EQ(out.probes.size(), 1u);
  EXPECT_EQ(out.probes[0].number, 20u);  // the newest: its data goes again
  EXPECT_EQ(out.probes[0].member, A);
  EXPECT_EQ(h.cwnd(), 18000u);  // untouched
  EXPECT_EQ(h.stats().tail_probes, 1u);

  // One packet beyond the full window, then the gate closes again.
  EXPECT_TRUE(h.ensemble.can_send(A, h.now));
  const PacketNumber probe = h.send(A);
  EXPECT_FALSE(h.ensemble.can_send(A, h.now));

  // Its ACK: 6..20 were sent more than 9/8 RTT before, so they are lost,
  // in one loss round.
  h.now += ms(100);
  const auto acked = h.ack_range(probe, probe);
  EXPECT_EQ(acked.lost.size(), 15u);
  EXPECT_EQ(numbers(acked.lost).front(), 6u);
  EXPECT_EQ(h.stats().loss_rounds, 1u);
  EXPECT_EQ(h.stats().rto_count, 0u);
  EXPECT_EQ(h.cwnd(), 9000u);  // halved, not one packet
}

TEST(EnsembleTailProbe, UnansweredProbesBackOffThenTheRtoFires) {
  Harness h(test_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  lose_the_tail(h);
  Instant t = h.now + ms(300);
  for (std::uint32_t i = 0; i < test_config().tail_probes; ++i) {
    ASSERT_EQ(*h.ensemble.next_timeout(), t);
    h.now = t;
    const auto out = h.ensemble.on_timeout(h.now);
    ASSERT_EQ(out.probes.size(), 1u);
    EXPECT_FALSE(out.rto_fired);
    EXPECT_EQ(out.probes[0].number, h.send(A) - 1);  // the newest, then the probe goes
    t = h.now + ms(300) * (2 << i);                  // 600 ms after the first probe
    if (i + 1 == test_config().tail_probes) t = h.now + ms(300);  // then the RTO: 100 + 4 * 50
  }
  ASSERT_EQ(*h.ensemble.next_timeout(), t);
  h.now = t;
  const auto out = h.ensemble.on_timeout(h.now);
  EXPECT_TRUE(out.rto_fired);
  EXPECT_TRUE(out.probes.empty());
  EXPECT_EQ(out.lost.size(), 15u + test_config().tail_probes);  // everything in flight
  EXPECT_EQ(h.cwnd(), kMss);
  EXPECT_EQ(h.stats().rto_count, 1u);
  EXPECT_EQ(h.stats().tail_probes, test_config().tail_probes);
}

TEST(EnsembleTailProbe, AnAckOfNewDataResetsTheProbes) {
  Harness h(test_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  lose_the_tail(h);
  h.now += ms(300);
  ASSERT_EQ(h.ensemble.on_timeout(h.now).probes.size(), 1u);
  // A late ACK arrives before the probe went: no packet beyond the window,
  // and the next timer is a first PTO again, from this ack.
  h.ack_range(6, 6);
  const ByteCount room = h.cwnd() - h.flight();
  EXPECT_EQ(static_cast<ByteCount>(h.fill(A)) * kMss, room - room % kMss);
  const Duration base = h.stats().srtt + 4 * h.stats().rttvar;
  const Duration first_probe = std::min(base + ms(25), std::max(base, ms(200)));
  EXPECT_EQ(*h.ensemble.next_timeout(), h.now + first_probe);
}

TEST(EnsembleTailProbe, UncoupledProbesOnlyTheSilentMembersDomain) {
  Harness h(test_config(CouplingMode::none));
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  h.send(A);  // 1: its tail, never acked
  for (int i = 0; i < 4; ++i) {
    const PacketNumber b = h.send(B);
    h.now += ms(100);
    h.ack_range(b, b);
  }
  // A's own timer (nothing of A's acked): its probe, B's window untouched.
  h.now = *h.ensemble.next_timeout();
  const auto out = h.ensemble.on_timeout(h.now);
  ASSERT_EQ(out.probes.size(), 1u);
  EXPECT_EQ(out.probes[0].member, A);
  EXPECT_EQ(out.probes[0].number, 1u);
  EXPECT_FALSE(out.rto_fired);
}

TEST(EnsembleTailProbe, ZeroProbesIsTheRtoAlone) {
  auto config = test_config();
  config.tail_probes = 0;
  Harness h(config);
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  lose_the_tail(h);
  EXPECT_EQ(*h.ensemble.next_timeout(), h.now + ms(300));  // RTO = 100 + 4 * 50
  h.now = *h.ensemble.next_timeout();
  const auto out = h.ensemble.on_timeout(h.now);
  EXPECT_TRUE(out.rto_fired);
  EXPECT_TRUE(out.probes.empty());
  EXPECT_EQ(h.cwnd(), kMss);
}

}  // namespace
}  // namespace egw::congestion
