// RFC 6937 section 3 arithmetic (congestion/prr.h), with the RFC's own
// examples (3.1): cwnd = FlightSize = 20 segments, standard AIMD, so
// ssthresh = 10 at the start of recovery. Segments are 1200 bytes here.
#include "congestion/prr.h"

#include <gtest/gtest.h>

#include <vector>

namespace egw::congestion {
namespace {

constexpr ByteCount kMss = 1200;

// One ACK delivering `delivered` bytes; then send full packets while PRR
// allows. Returns how many packets left; `pipe` follows deliveries and sends.
int ack_and_send(Prr& prr, ByteCount& pipe, ByteCount delivered) {
  pipe -= delivered;
  prr.on_ack(delivered, pipe, kMss);
  int sent = 0;
  while (prr.may_send()) {
    prr.on_sent(kMss);
    pipe += kMss;
    ++sent;
  }
  return sent;
}

TEST(Prr, ProportionalPartSpreadsTheReductionOverTheRound) {
  // Single loss: 20 segments out, one lost, so pipe = 19 and the 19
  // survivors are acked one by one. RecoverFS = 20 * 1200 = 24000,
  // ssthresh = 10 * 1200 = 12000: one packet per two ACKs.
  Prr prr(10 * kMss, 20 * kMss);
  ByteCount pipe = 19 * kMss;
  std::vector<int> sends;
  for (int ack = 1; ack <= 19; ++ack) sends.push_back(ack_and_send(prr, pipe, kMss));

  // Ack 1: CEIL(1200 * 12000 / 24000) - 0 = 600 > 0: the retransmission goes
  // on the first ACK (the plain gate would hold it until pipe < 10 segments).
  EXPECT_EQ(sends[0], 1);
  // Ack 2: CEIL(2400 * 12000 / 24000) - 1200 = 0: nothing.
  EXPECT_EQ(sends[1], 0);
  // Ack 3: CEIL(3600 / 2) - 1200 = 600: one more. So on while pipe > ssthresh:
  // acks 1, 3, 5, ..., 15 send one packet each, the even ones none.
  for (int ack = 1; ack <= 16; ++ack) EXPECT_EQ(sends[ack - 1], ack % 2) << "ack " << ack;
  // Ack 17: pipe = 19 - 17 + 8 sent = 10 segments = ssthresh, so SSRB:
  // MIN(ssthresh - pipe = 0, ...) = 0. Acks 18 and 19: pipe = 9 segments,
  // MIN(12000 - 10800 = 1200, MAX(prr_delivered - prr_out, 1200) + 1200) = 1200.
  EXPECT_EQ(sends[16], 0);
  EXPECT_EQ(sends[17], 1);
  EXPECT_EQ(sends[18], 1);
  // In all CEIL(19 * 10 / 20) = 10 packets for 19 delivered, and the round
  // ends with pipe = 20 - 1 lost - 19 delivered + 10 sent = 10 = ssthresh.
  EXPECT_EQ(prr.prr_out_bytes(), 10 * kMss);
  EXPECT_EQ(prr.prr_delivered_bytes(), 19 * kMss);
  EXPECT_EQ(pipe, 10 * kMss);
}

TEST(Prr, SlowStartReductionBoundAfterABurstOfLosses) {
  // Burst: 15 of the 20 segments lost, pipe = 5 segments < ssthresh = 10.
  // PRR-SSRB sends MAX(prr_delivered - prr_out, DeliveredData) + MSS = 2
  // packets per ACK (slow start) until pipe reaches ssthresh.
  Prr prr(10 * kMss, 20 * kMss);
  ByteCount pipe = 5 * kMss;
  // Ack 1: pipe 4, MIN(12000 - 4800 = 7200, MAX(1200, 1200) + 1200 = 2400) -> 2 packets.
  EXPECT_EQ(ack_and_send(prr, pipe, kMss), 2);
  // Acks 2-4: pipe 5, 6, 7 before sending; MAX(2400 - 2400, 1200) + 1200 = 2400 each.
  EXPECT_EQ(ack_and_send(prr, pipe, kMss), 2);
  EXPECT_EQ(ack_and_send(prr, pipe, kMss), 2);
  EXPECT_EQ(ack_and_send(prr, pipe, kMss), 2);
  // Ack 5: pipe 8, MIN(12000 - 9600 = 2400, 2400) -> 2, pipe = 10 = ssthresh.
  EXPECT_EQ(ack_and_send(prr, pipe, kMss), 2);
  EXPECT_EQ(pipe, 10 * kMss);
  // Ack 6: pipe 9, MIN(ssthresh - pipe = 1200, 2400): the bound is ssthresh.
  EXPECT_EQ(ack_and_send(prr, pipe, kMss), 1);
  EXPECT_EQ(pipe, 10 * kMss);
}

TEST(Prr, SlowStartBoundSpendsWhatWasBanked) {
  // Application-limited for 3 ACKs (nothing to send): prr_delivered - prr_out
  // = 3600 is banked, so the next ACK may send MAX(4800 - 0, 1200) + 1200 =
  // 6000 = 5 packets, still capped by ssthresh - pipe.
  Prr prr(10 * kMss, 20 * kMss);
  ByteCount pipe = 4 * kMss;  // below ssthresh: SSRB throughout
  for (int i = 0; i < 3; ++i) {
    pipe -= kMss;
    prr.on_ack(kMss, pipe, kMss);
  }
  pipe -= kMss;  // pipe = 0
  prr.on_ack(kMss, pipe, kMss);
  EXPECT_EQ(prr.sndcnt_bytes(), 5 * kMss);  // MIN(12000 - 0, 6000)
}

TEST(Prr, SndcntNeverNegative) {
  // prr_out ahead of the proportional target (a forced send): sndcnt = 0,
  // not a negative count that would wrap.
  Prr prr(10 * kMss, 20 * kMss);
  prr.on_sent(3 * kMss);
  prr.on_ack(kMss, 15 * kMss, kMss);  // CEIL(1200 / 2) - 3600 < 0
  EXPECT_EQ(prr.sndcnt_bytes(), 0u);
  EXPECT_FALSE(prr.may_send());
}

}  // namespace
}  // namespace egw::congestion
