// Restarting after idle inside a live ensemble: any idle period longer than
// one RTO makes the window unvalidated (careful resume from the ensemble's
// own state); older than resume.max_idle, the window is discarded.
//
//   t0        A grows the window to 80 packets (96000 bytes), all acked
//   idle      nothing in flight for 2 s (> RTO) ... or 1 h (> max_idle)
//   restart   reconnaissance: the initial window (10 packets), unmarked;
//             its acks pass the RTT check: jump to 48000, paced over one
//             RTT and marked low priority, validated one RTT later
#include <gtest/gtest.h>

#include "congestion/cubic.h"
#include "congestion/ensemble.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::kMss;
using testing::test_config;

constexpr MemberId A = 1;

// Slow start from 10 to 80 packets: three window-limited round trips.
void grow_to_80_packets(Harness& h) {
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  PacketNumber acked = 0;
  while (h.cwnd() < 96000) {
    const int sent = h.fill(A);
    h.now += ms(100);
    h.ack_range(acked + 1, acked + static_cast<PacketNumber>(sent));
    acked += static_cast<PacketNumber>(sent);
  }
  ASSERT_EQ(h.cwnd(), 96000u);
  ASSERT_EQ(h.flight(), 0u);
}

TEST(EnsembleIdle, RestartAfterMoreThanAnRtoIsACarefulResume) {
  Harness h(test_config());
  grow_to_80_packets(h);
  h.now += ms(2'000);  // idle far longer than one RTO (~300 ms)
  const PacketNumber first = h.next_number;
  EXPECT_EQ(h.fill(A), 10);  // the stale 80 packets do not go out: IW first
  EXPECT_FALSE(h.ensemble.low_priority());
  h.now += ms(100);
  h.ack_range(first, first + 9);  // RTT 100 ms passes the check
  EXPECT_EQ(h.cwnd(), 48000u);     // at most half the old window
  // Slow start's 20 on the ACK clock, unmarked; of the extra 20, marked and
  // paced, one burst of 2 now, then bursts 5 ms apart.
  EXPECT_EQ(h.fill(A), 20 + 2);
  EXPECT_EQ(h.marked, 2);
  EXPECT_TRUE(h.ensemble.low_priority());
  const auto release = h.ensemble.next_pacing_release(h.now);
  ASSERT_TRUE(release);
  EXPECT_EQ(*release - h.now, ms(5));
}

TEST(EnsembleIdle, WindowOlderThanMaxIdleIsDiscarded) {
  Harness h(test_config());
  grow_to_80_packets(h);
  h.now += ms(60 * 60 * 1000);  // one hour: beyond resume.max_idle (10 min)
  const PacketNumber first = h.next_number;
  EXPECT_EQ(h.fill(A), 10);
  h.now += ms(100);
  h.ack_range(first, first + 9);
  EXPECT_EQ(h.cwnd(), 24000u);  // plain slow start from the initial window
  EXPECT_FALSE(h.ensemble.low_priority());
}

TEST(EnsembleIdle, ShortPauseKeepsTheWindow) {
  Harness h(test_config());
  grow_to_80_packets(h);
  h.now += ms(50);  // shorter than one RTO
  EXPECT_EQ(h.fill(A), 80);
  EXPECT_FALSE(h.ensemble.low_priority());
}

TEST(EnsembleIdle, OneLiveMemberDoesNotHideAnotherMembersIdleWindow) {
  // The ensemble stays alive (member B exists, open but silent); the window
  // still restarts: what matters is that nothing was in flight for an RTO.
  Harness h(test_config());
  h.ensemble.add_member(2, ContentClass::bulk, h.now);
  grow_to_80_packets(h);
  h.now += ms(2'000);
  EXPECT_EQ(h.fill(A), 10);
}

TEST(EnsembleIdle, UncoupledMembersRestartFromTheRestartWindow) {
  Harness h(test_config(CouplingMode::none));
  grow_to_80_packets(h);
  h.now += ms(2'000);
  EXPECT_EQ(h.fill(A), 10);  // RFC 5681 4.1: min(IW, cwnd)
  h.now += ms(100);
  EXPECT_FALSE(h.ensemble.low_priority());
}

// Path MTU discovery raised the datagram size from 1200 to 1472 (or a black
// hole took it back). RFC 9002 7.2: the initial window, and with it the
// restart window after idle, is recalculated with the new size: 10 x 1472.
constexpr ByteCount kPmtu = 1472;

int fill_with(Harness& h, MemberId member, ByteCount bytes) {
  int sent = 0;
  while (h.ensemble.can_send(member, h.now)) {
    h.send(member, bytes);
    ++sent;
  }
  return sent;
}

TEST(EnsembleDatagramSize, RestartAfterIdleUsesTheNewSize) {
  Harness h(test_config());
  grow_to_80_packets(h);
  h.ensemble.set_max_datagram_bytes(kPmtu);
  EXPECT_EQ(h.cwnd(), 96000u);  // a window in use is not rescaled
  EXPECT_EQ(h.ensemble.config().max_datagram_bytes, kPmtu);
  h.now += ms(2'000);
  EXPECT_EQ(fill_with(h, A, kPmtu), 10);  // not 8: 8 x 1472 + 1200 > 12000
  EXPECT_EQ(h.cwnd(), 10 * kPmtu);
}

TEST(EnsembleDatagramSize, UnusedInitialWindowFollowsTheNewSize) {
  Harness h(test_config());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  h.ensemble.set_max_datagram_bytes(kPmtu);
  EXPECT_EQ(h.cwnd(), 10 * kPmtu);
  EXPECT_EQ(fill_with(h, A, kPmtu), 10);
}

TEST(EnsembleDatagramSize, BackToTheBaseRestoresTheBaseWindow) {
  Harness h(test_config());
  grow_to_80_packets(h);
  h.ensemble.set_max_datagram_bytes(kPmtu);
  h.ensemble.set_max_datagram_bytes(kMss);  // black hole: back to the base
  h.now += ms(2'000);
  EXPECT_EQ(fill_with(h, A, kMss), 10);
  EXPECT_EQ(h.cwnd(), 10 * kMss);
}

TEST(EnsembleDatagramSize, UncoupledDomainsOldAndNewUseTheNewSize) {
  Harness h(test_config(CouplingMode::none));
  grow_to_80_packets(h);
  h.ensemble.set_max_datagram_bytes(kPmtu);
  constexpr MemberId B = 2;
  h.ensemble.add_member(B, ContentClass::bulk, h.now);  // a new domain
  EXPECT_EQ(fill_with(h, B, kPmtu), 10);
  h.now += ms(2'000);
  EXPECT_EQ(fill_with(h, A, kPmtu), 10);  // A's restart window: 10 x 1472
}

TEST(CubicIdle, IdleTimeIsNotCountedInTheEpoch) {
  const WindowLawParams params{kMss, 10 * kMss, 2 * kMss};
  const Instant t0 = instant_at(ms(0));
  const RttInfo rtt{ms(100), ms(100), ms(100)};
  auto run = [&](bool idle) {
    Cubic c(params);
    c.set_state(100 * kMss, 50 * kMss);
    c.on_congestion_event(t0, 1);  // epoch memory: W_max = 100 packets
    c.on_ack(kMss, rtt, t0, 1);    // the epoch starts at t0
    if (idle) c.on_idle_ended(ms(10'000));
    c.on_ack(kMss, rtt, t0 + ms(10'100), 1);
    return c.cwnd_bytes();
  };
  // Without the shift, 10 s into the epoch W_cubic is far above W_max and
  // cwnd jumps by up to 50 %; with it, the epoch is 100 ms old.
  EXPECT_LT(run(true), run(false));
  EXPECT_LT(run(true), 71 * kMss);
}

}  // namespace
}  // namespace egw::congestion
