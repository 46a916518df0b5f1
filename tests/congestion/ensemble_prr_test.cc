// Recovery::prr in the Ensemble: PRR (RFC 6937) governs sending from the
// decrease until recovery ends; Recovery::gate holds every packet until the
// flight is below the reduced window.
#include <gtest/gtest.h>

#include "congestion/ensemble.h"
#include "ensemble_test_helpers.h"

namespace egw::congestion::testing {
namespace {

constexpr MemberId kA = 1;

EnsembleConfig config_with(Recovery recovery) {
  EnsembleConfig c = test_config();
  c.initial_window_packets = 20;  // 24000 bytes
  c.recovery = recovery;
  return c;
}

// Send packets 1..20, then ack 2, 3, 4: packet 1 is lost (packet threshold
// 3). The loss is handled before the acks (RFC 9002 A.7), so NewReno halves
// 24000 to ssthresh = cwnd = 12000; RecoverFS = 20 * 1200 = 24000 (flight
// before the ack); pipe = 16 * 1200 = 19200 > ssthresh.
struct LossRound {
  explicit LossRound(Recovery recovery) : h(config_with(recovery)) {
    EXPECT_EQ(h.fill(kA), 20);
    const auto out = h.ack_range(2, 4);
    EXPECT_EQ(numbers(out.lost), std::vector<PacketNumber>{1});
    EXPECT_EQ(h.cwnd(), 12000u);
  }
  Harness h;
};

TEST(EnsemblePrr, FirstRetransmissionLeavesOnTheAckThatFoundTheLoss) {
  LossRound prr(Recovery::prr);
  // CEIL(3600 * 12000 / 24000) = 1800 bytes: two packets (prr_out = 2400
  // overshoots by less than one packet, as the RFC's segment CEIL(1.5) = 2).
  EXPECT_EQ(prr.h.fill(kA), 2);

  LossRound gate(Recovery::gate);
  // 19200 + 1200 > 12000: nothing until the flight drains below the window.
  EXPECT_EQ(gate.h.fill(kA), 0);
}

TEST(EnsemblePrr, SpreadsTheRoundAndEndsAtSsthresh) {
  for (Recovery recovery : {Recovery::prr, Recovery::gate}) {
    LossRound r(recovery);
    int sent = r.h.fill(kA);
    int first_send_ack = sent > 0 ? 4 : 0;  // number of the packet whose ack released it
    for (PacketNumber n = 5; n <= 20; ++n) {
      r.h.ack_range(n, n);
      const int now_sent = r.h.fill(kA);
      if (now_sent > 0 && first_send_ack == 0) first_send_ack = static_cast<int>(n);
      sent += now_sent;
    }
    // Both send 10 packets for the 19 delivered ones, ending at a flight of
    // 10 * 1200 = 12000 = ssthresh (PRR: CEIL(22800 * 12000 / 24000) = 11400
    // -> 10 packets; gate: 12000 + 1200 > 12000).
    EXPECT_EQ(sent, 10) << static_cast<int>(recovery);
    EXPECT_EQ(r.h.flight(), 10u * kMss);
    if (recovery == Recovery::prr) {
      EXPECT_EQ(first_send_ack, 4);
    } else {
      // The gate waits until 9 originals are left: 9 * 1200 + 1200 <=
      // 12000, i.e. after the ack of packet 4 + 7 = 11.
      EXPECT_EQ(first_send_ack, 11);
    }
  }
}

TEST(EnsemblePrr, AckOfARecoveryPacketHandsBackToTheWindow) {
  LossRound r(Recovery::prr);
  EXPECT_EQ(r.h.fill(kA), 2);  // packets 21, 22
  // Ack 21, sent after recovery began: it declares originals 5..18 lost (3
  // or more sent after them, same loss round: no new decrease) and ends
  // recovery. Flight = 19, 20, 22 = 3600. The window decides again:
  // (12000 - 3600) / 1200 = 7 packets. PRR-SSRB would have allowed
  // MAX(4800 - 2400, 1200) + 1200 = 3600 -> 3.
  const auto out = r.h.ack_range(21, 21);
  EXPECT_EQ(out.lost.size(), 14u);  // 5..18
  EXPECT_EQ(r.h.cwnd(), 12000u);
  EXPECT_EQ(r.h.fill(kA), 7);
}

TEST(EnsemblePrr, RecoveryEndsWhenNothingFromBeforeItIsOutstanding) {
  LossRound r(Recovery::prr);
  EXPECT_EQ(r.h.fill(kA), 2);
  // Everything from before recovery is acked, packets 21 and 22 are still
  // out: 2400 + 1200 <= 12000 under the gate, so the window is open even
  // though the last ack's PRR sndcnt was used up.
  r.h.ack_range(5, 20);
  EXPECT_TRUE(r.h.ensemble.can_send(kA, r.h.now));
  EXPECT_EQ(r.h.fill(kA), 8);  // (12000 - 2400) / 1200 = 8
}

}  // namespace
}  // namespace egw::congestion::testing
