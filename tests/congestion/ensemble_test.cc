// The ensemble's shared window, loss rounds, cross-member loss detection, RTO
// and coupling modes. Joins and resume have their own files.
#include "congestion/ensemble.h"

#include <gtest/gtest.h>

#include "congestion/pacer.h"
#include "congestion/window_law.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::kMss;
using testing::numbers;
using testing::test_config;

constexpr MemberId A = 1;
constexpr MemberId B = 2;

TEST(Ensemble, SlowStartGrowsTheSharedWindow) {
  Harness h(test_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  EXPECT_EQ(h.fill(A), 10);  // initial window 10 * 1200
  EXPECT_EQ(h.flight(), 12000u);
  h.now += ms(100);
  const auto out = h.ack_range(1, 10);
  EXPECT_EQ(out.acked.size(), 10u);
  EXPECT_EQ(h.cwnd(), 24000u);  // 12000 + 12000 acked
  EXPECT_EQ(h.stats().srtt, ms(100));
  EXPECT_EQ(h.flight(), 0u);
  EXPECT_EQ(h.stats().packets_sent, 10u);
}

TEST(Ensemble, OneDecreasePerLossRound) {
  Harness h(test_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  for (int i = 0; i < 5; ++i) {
    h.send(A);
    h.send(B);
  }  // 1..10
  h.now += ms(100);
  auto first = h.ack_range(4, 6);
  // 1, 2, 3 are 3+ positions behind 6 (RFC 9002 6.1.1).
  EXPECT_EQ(numbers(first.lost), (std::vector<PacketNumber>{1, 2, 3}));
  // RFC 9002 A.7: the loss is handled before the acks, which were sent before
  // recovery began and so grow nothing: one halving, 12000 / 2 = 6000.
  EXPECT_EQ(h.cwnd(), 6000u);
  EXPECT_EQ(h.stats().loss_rounds, 1u);

  auto second = h.ack_range(8, 10);
  EXPECT_EQ(numbers(second.lost), (std::vector<PacketNumber>{7}));
  // 7 was sent before recovery began (RFC 6582): no second decrease, and acks
  // of pre-recovery packets do not grow the window either.
  EXPECT_EQ(h.cwnd(), 6000u);
  EXPECT_EQ(h.stats().loss_rounds, 1u);
  EXPECT_EQ(h.stats().packets_lost, 4u);

  EXPECT_EQ(h.fill(A), 5);  // 5 * 1200 = 6000
  h.now += ms(100);
  auto third = h.ack_range(12, 14);
  EXPECT_EQ(numbers(third.lost), (std::vector<PacketNumber>{11}));
  // A new round: 6000 / 2.
  EXPECT_EQ(h.cwnd(), 3000u);
  EXPECT_EQ(h.stats().loss_rounds, 2u);
}

TEST(Ensemble, LaterAcksOfOneMemberDeclareAnotherMembersPacketLost) {
  Harness h(test_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  h.send(A);  // 1
  h.send(B);  // 2
  h.send(B);  // 3
  h.send(B);  // 4
  h.now += ms(50);
  const auto out = h.ack_range(2, 4);
  ASSERT_EQ(out.lost.size(), 1u);
  EXPECT_EQ(out.lost[0].number, 1u);
  EXPECT_EQ(out.lost[0].member, A);
  EXPECT_EQ(h.stats().loss_rounds, 1u);
}

// A tail loss of A, invisible to loss detection (thresholds set out of reach):
// only an RTO could recover it, and the ensemble's RTO waits while B is acked.
void run_tail_loss(Harness& h, int rounds, std::uint64_t& rto_fired_while_b_acked) {
  h.send(A);
  for (int i = 0; i < rounds; ++i) {
    const PacketNumber b = h.send(B);
    h.now += ms(100);
    h.ack_range(b, b);
    if (auto t = h.ensemble.next_timeout(); t && *t <= h.now) {
      if (h.ensemble.on_timeout(h.now).rto_fired) ++rto_fired_while_b_acked;
    }
  }
}

TEST(Ensemble, NoRtoWhileAnotherMemberIsAcked) {
  auto config = test_config();
  config.packet_threshold = 1000;
  config.time_threshold = 1000.0;
  config.tail_probes = 0;  // the RTO alone (probes first: ensemble_tail_probe_test.cc)
  Harness h(config);
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  std::uint64_t fired = 0;
  run_tail_loss(h, 50, fired);  // 5 s, RTO = max(200, 100 + 4 * 50) = 300 ms
  EXPECT_EQ(fired, 0u);
  EXPECT_EQ(h.stats().rto_count, 0u);
  EXPECT_GE(h.cwnd(), 12000u);  // never back to one segment

  // Now nobody is acked: the RTO fires for the whole ensemble.
  const auto deadline = h.ensemble.next_timeout();
  ASSERT_TRUE(deadline);
  // Restarted by B's last ack: now + RTO, with 200 ms <= RTO <= 300 ms as
  // RTTVAR decays from 50 ms towards 0 on steady 100 ms samples.
  EXPECT_GE(*deadline, h.now + ms(200));
  EXPECT_LE(*deadline, h.now + ms(300));
  h.now = *deadline;
  const auto out = h.ensemble.on_timeout(h.now);
  EXPECT_TRUE(out.rto_fired);
  EXPECT_EQ(numbers(out.lost), (std::vector<PacketNumber>{1}));
  EXPECT_EQ(h.cwnd(), kMss);
}

TEST(Ensemble, UncoupledMembersTimeOutAlone) {
  auto config = test_config(CouplingMode::none);
  config.packet_threshold = 1000;
  config.time_threshold = 1000.0;
  Harness h(config);
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  std::uint64_t fired = 0;
  run_tail_loss(h, 50, fired);
  EXPECT_GE(fired, 1u);  // A's own timer: nothing of A's was acked (baseline)
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(A), kMss);
  // B never had more than one packet in flight: application-limited, its
  // window neither grew (RFC 7661) nor timed out.
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(B), 12000u);
}

TEST(Ensemble, RtoResponseAndBackoff) {
  auto config = test_config();
  config.tail_probes = 0;  // the RTO alone (probes first: ensemble_tail_probe_test.cc)
  Harness h(config);
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  const Instant start = h.now;
  h.fill(A);  // 10 packets, no RTT sample yet
  ASSERT_TRUE(h.ensemble.next_timeout());
  EXPECT_EQ(*h.ensemble.next_timeout(), start + ms(999));  // 333 + 4 * 166.5
  h.now = *h.ensemble.next_timeout();
  const auto out = h.ensemble.on_timeout(h.now);
  EXPECT_TRUE(out.rto_fired);
  EXPECT_EQ(out.lost.size(), 10u);
  EXPECT_EQ(h.cwnd(), kMss);                      // RFC 5681 LW
  EXPECT_EQ(h.stats().ssthresh_bytes, 6000u);     // max(12000 / 2, 2 * 1200)
  EXPECT_EQ(h.stats().rto_count, 1u);
  EXPECT_EQ(h.flight(), 0u);
  EXPECT_FALSE(h.ensemble.next_timeout());
  h.send(A);
  EXPECT_EQ(*h.ensemble.next_timeout(), h.now + ms(1998));  // backed off: 2 * 999
}

TEST(Ensemble, UncoupledLossShrinksOnlyItsMember) {
  Harness h(test_config(CouplingMode::none));
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  EXPECT_EQ(h.cwnd(), 24000u);  // each member has its own initial window
  h.send(A);                    // 1
  for (int i = 0; i < 4; ++i) h.send(B);  // 2..5
  h.now += ms(100);
  auto out = h.ack_range(2, 5);
  EXPECT_TRUE(out.lost.empty());  // B's acks say nothing about A's packets
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(A), 12000u);
  // 4 packets in a 10-packet window: application-limited, no growth.
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(B), 12000u);
  for (int i = 0; i < 3; ++i) h.send(A);  // 6..8
  h.now += ms(100);
  out = h.ack_range(6, 8);
  EXPECT_EQ(numbers(out.lost), (std::vector<PacketNumber>{1}));
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(A), 6000u);   // 12000 / 2
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(B), 12000u);  // untouched
  EXPECT_EQ(h.cwnd(), 6000u + 12000u);
}

TEST(Ensemble, NFlowsDecreaseIsOneEighthForFourMembers) {
  Harness h(test_config(CouplingMode::n_flows));
  for (MemberId m = 1; m <= 4; ++m) {
    h.ensemble.add_member(m, ContentClass::bulk, h.now);
    h.ensemble.set_backlogged(m, true, h.now);  // all four active: n = 4
  }
  h.fill(1);
  h.now += ms(100);
  h.ack_range(1, 10);
  ASSERT_EQ(h.cwnd(), 24000u);
  EXPECT_EQ(h.fill(2), 20);  // 11..30
  h.now += ms(100);
  const auto out = h.ack_range(12, 14);
  EXPECT_EQ(numbers(out.lost), (std::vector<PacketNumber>{11}));
  // Loss first (RFC 9002 A.7): 24000 * (1 - 1/(2*4)) = 24000 * 7 / 8 = 21000
  EXPECT_EQ(h.cwnd(), 21000u);
  EXPECT_EQ(h.ensemble.member_cwnd_bytes(3), 5250u);  // 21000 / 4 (fair tickets)
}

TEST(Ensemble, SingleCouplingHalvesWithFourMembers) {
  Harness h(test_config(CouplingMode::single));
  for (MemberId m = 1; m <= 4; ++m) h.ensemble.add_member(m, ContentClass::bulk, h.now);
  h.fill(1);
  h.now += ms(100);
  h.ack_range(1, 10);
  h.fill(2);
  h.now += ms(100);
  h.ack_range(12, 14);
  EXPECT_EQ(h.cwnd(), 12000u);  // 24000 / 2: as aggressive as one flow
}

TEST(Ensemble, CubicLawDecreasesByBeta) {
  auto config = test_config();
  config.law = WindowLawKind::cubic;
  Harness h(config);
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.fill(A);
  h.now += ms(100);
  h.ack_range(1, 10);
  h.fill(A);
  h.now += ms(100);
  h.ack_range(12, 14);
  EXPECT_EQ(h.cwnd(), 16800u);  // 24000 * 0.7
}

TEST(Ensemble, SnapshotAndStats) {
  Harness h(test_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.fill(A);
  h.now += ms(80);
  h.ack_range(1, 10);
  const PathState s = h.ensemble.snapshot(h.now);
  EXPECT_EQ(s.cwnd_bytes, 24000u);
  EXPECT_EQ(s.ssthresh_bytes, kInfiniteSsthresh);
  EXPECT_EQ(s.srtt, ms(80));
  EXPECT_EQ(s.rttvar, ms(40));
  EXPECT_EQ(s.min_rtt, ms(80));
  EXPECT_EQ(s.max_datagram_bytes, kMss);
  EXPECT_EQ(s.saved_at, h.now);
  EXPECT_EQ(h.stats().members, 1u);
  EXPECT_FALSE(h.stats().resumed);
}

TEST(Ensemble, UncoupledSnapshotUsesTheLargestMember) {
  Harness h(test_config(CouplingMode::none));
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.ensemble.add_member(B, ContentClass::bulk, h.now);
  h.fill(B);
  h.now += ms(60);
  h.ack_range(1, 10);
  const PathState s = h.ensemble.snapshot(h.now);
  EXPECT_EQ(s.cwnd_bytes, 24000u);  // B's, not A's 12000
  EXPECT_EQ(s.srtt, ms(60));
}

TEST(Ensemble, RemovedMembersPacketsStayTracked) {
  Harness h(test_config(CouplingMode::none));
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.send(A);
  h.ensemble.remove_member(A, h.now);
  EXPECT_EQ(h.ensemble.member_count(), 0u);
  EXPECT_EQ(h.flight(), kMss);
  h.now += ms(10);
  EXPECT_EQ(h.ack_range(1, 1).acked.size(), 1u);
  EXPECT_EQ(h.flight(), 0u);
}

TEST(Ensemble, IgnoresUnknownAndNonIncreasingPacketNumbers) {
  Harness h(test_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.send(A);
  h.ensemble.on_packet_sent(SentPacket{1, A, kMss, h.now, true});  // reused number
  EXPECT_EQ(h.flight(), kMss);
  EXPECT_TRUE(h.ack_range(500, 600).acked.empty());
  EXPECT_EQ(h.cwnd(), 12000u);
}

}  // namespace
}  // namespace egw::congestion

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::test_config;

// Reordering, not congestion: a packet declared lost by three later acks
// arrives after all. Linux undoes such a decrease on DSACK; we on the ACK
// range that covers the "lost" packet.
TEST(EnsembleUndo, DecreaseIsUndoneWhenEveryLostPacketArrivesAfterAll) {
  Harness h(test_config());
  h.ensemble.add_member(1, ContentClass::bulk, h.now);
  ASSERT_EQ(h.fill(1), 10);  // 1..10
  h.now += ms(100);
  h.ack_range(2, 4);  // 1 lost (packet threshold): halved
  ASSERT_EQ(h.cwnd(), 6000u);
  h.now += ms(1);
  h.ack({{1, 1}, {2, 6}});  // 1 was only late
  EXPECT_EQ(h.cwnd(), 12000u);
  EXPECT_EQ(h.stats().ssthresh_bytes, kInfiniteSsthresh);
  EXPECT_EQ(h.stats().spurious_rounds, 1u);
}

TEST(EnsembleUndo, NoUndoWhileAnyLostPacketIsStillMissing) {
  Harness h(test_config());
  h.ensemble.add_member(1, ContentClass::bulk, h.now);
  ASSERT_EQ(h.fill(1), 10);
  h.now += ms(100);
  h.ack_range(3, 5);  // 1 and 2 lost: one round, halved
  ASSERT_EQ(h.cwnd(), 6000u);
  h.ack({{1, 1}, {3, 7}});  // 1 arrives, 2 does not: congestion after all
  EXPECT_EQ(h.cwnd(), 6000u);
  EXPECT_EQ(h.stats().spurious_rounds, 0u);
}

}  // namespace
}  // namespace egw::congestion
