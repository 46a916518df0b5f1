// One congestion domain alone, driven by explicit instants (no ensemble):
// the window grows on acks, one loss round cuts once, the RTO collapses the
// window, and a restart after idle starts from the initial window.
#include "congestion/congestion_domain.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::kMss;

struct DomainHarness {
  explicit DomainHarness(EnsembleConfig c = testing::test_config(), bool resume_after_idle = false)
      : config(c),
        now(instant_at(ms(1'000))),
        domain(config, DomainOptions{config.initial_window_packets, resume_after_idle}, now) {}

  // Sends full-size packets while the gate is open; returns how many.
  int fill() {
    int n = 0;
    while (domain.gate(now).open()) {
      domain.on_sent(SentPacket{next++, 1, kMss, now, true});
      ++n;
    }
    return n;
  }
  const AckOutcome& ack(PacketNumber smallest, PacketNumber largest) {
    out.acked.clear();
    out.lost.clear();
    const AckedRange r{smallest, largest};
    domain.on_ack(std::span<const AckedRange>(&r, 1), ms(0), now, out, scratch);
    return out;
  }

  EnsembleConfig config;
  Instant now;
  CongestionDomain domain;
  PacketNumber next = 1;
  AckOutcome out;
  SentPackets::AckResult scratch;
};

TEST(CongestionDomain, AcksOfAFullWindowDoubleItInSlowStart) {
  DomainHarness h;
  EXPECT_EQ(h.fill(), 10);
  h.now += ms(100);
  EXPECT_EQ(h.ack(1, 10).acked.size(), 10u);
  EXPECT_EQ(h.domain.cwnd_bytes(), 20 * kMss);
  EXPECT_EQ(h.domain.rtt().srtt(), ms(100));
  EXPECT_TRUE(h.domain.idle());
}

TEST(CongestionDomain, AnApplicationLimitedSenderDoesNotGrowTheWindow) {
  DomainHarness h;
  h.domain.on_sent(SentPacket{h.next++, 1, kMss, h.now, true});  // 1 of 10 packets used
  h.now += ms(100);
  h.ack(1, 1);
  EXPECT_EQ(h.domain.cwnd_bytes(), 10 * kMss);
}

TEST(CongestionDomain, OneLossRoundCutsOnce) {
  DomainHarness h;
  EXPECT_EQ(h.fill(), 10);
  h.now += ms(100);
  // 1 and 2 lost: 3..10 acked, both declared lost by the packet threshold.
  EXPECT_EQ(h.ack(3, 10).lost.size(), 2u);
  EXPECT_EQ(h.domain.cwnd_bytes(), 5 * kMss);  // NewReno halves once
  EXPECT_EQ(h.domain.counters().loss_rounds, 1u);
  EXPECT_EQ(h.domain.counters().packets_lost, 2u);
}

TEST(CongestionDomain, RtoCollapsesTheWindow) {
  EnsembleConfig c = testing::test_config();
  c.tail_probes = 0;
  DomainHarness h(c);
  EXPECT_EQ(h.fill(), 10);
  const auto deadline = h.domain.next_timeout();
  ASSERT_TRUE(deadline);
  h.now = *deadline;
  TimeoutOutcome out;
  h.domain.on_timeout(h.now, out);
  EXPECT_TRUE(out.rto_fired);
  EXPECT_EQ(out.lost.size(), 10u);
  EXPECT_EQ(h.domain.cwnd_bytes(), kMss);
  EXPECT_EQ(h.domain.counters().rto_count, 1u);
  EXPECT_FALSE(h.domain.next_timeout());  // nothing outstanding
}

TEST(CongestionDomain, TailProbeComesBeforeTheRto) {
  DomainHarness h;  // tail_probes = 2
  EXPECT_EQ(h.fill(), 10);
  h.now = *h.domain.next_timeout();
  TimeoutOutcome out;
  h.domain.on_timeout(h.now, out);
  EXPECT_FALSE(out.rto_fired);
  ASSERT_EQ(out.probes.size(), 1u);
  EXPECT_EQ(out.probes[0].number, 10u);
  EXPECT_TRUE(h.domain.gate(h.now).open());  // one packet beyond the window
  EXPECT_EQ(h.domain.cwnd_bytes(), 10 * kMss);
}

TEST(CongestionDomain, IdleLongerThanAnRtoRestartsFromTheInitialWindow) {
  DomainHarness h;  // resume_after_idle false: RFC 5681 4.1
  PacketNumber acked = 0;
  for (int round = 0; round < 3; ++round) {
    const int sent = h.fill();
    h.now += ms(100);
    h.ack(acked + 1, acked + static_cast<PacketNumber>(sent));
    acked += static_cast<PacketNumber>(sent);
  }
  ASSERT_EQ(h.domain.cwnd_bytes(), 80 * kMss);
  h.now += ms(150);  // shorter than an RTO: the window stays
  EXPECT_EQ(h.fill(), 80);
  h.now += ms(100);
  h.ack(acked + 1, acked + 80);
  const ByteCount grown = h.domain.cwnd_bytes();
  EXPECT_GT(grown, 80 * kMss);
  h.now += ms(2'000);  // longer than an RTO
  EXPECT_EQ(h.fill(), 10);
  EXPECT_EQ(h.domain.cwnd_bytes(), 10 * kMss);
  EXPECT_EQ(h.domain.law().ssthresh_bytes(), kInfiniteSsthresh);
}

}  // namespace
}  // namespace egw::congestion
