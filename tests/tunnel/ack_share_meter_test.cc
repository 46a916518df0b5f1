// AckShareMeter: decimate where this side's ACKs take a measured share of
// its own busy uplink, and nowhere else.
#include "tunnel/ack_share_meter.h"

#include <gtest/gtest.h>

#include <optional>

namespace egw::tunnel {
namespace {

// One interval (256 ack-eliciting packets received) of a side that sends
// `data_packets` data datagrams of 1,400 bytes and `acks` ACK-only ones of
// 60 bytes, held by its window (`held`) or not.
std::optional<bool> interval(AckShareMeter& m, int data_packets, int acks, bool held, bool decimating) {
  for (int i = 0; i < data_packets; ++i) m.on_sent(1400, false);
  for (int i = 0; i < acks; ++i) m.on_sent(60, true);
  for (int i = 0; held && i < data_packets; ++i) m.on_data_held();
  std::optional<bool> out;
  for (std::uint32_t i = 0; i < AckShareMeter::kIntervalPackets; ++i) {
    out = m.on_eliciting_received(2, decimating);
    if (i + 1 < AckShareMeter::kIntervalPackets) {
      EXPECT_FALSE(out.has_value());
    }
  }
  return out;
}

// 4 Mbit/s down, 1 up, both busy: over 256 packets of the download (0.7 s)
// the branch uploads ~64 packets and sends ~100 ACK-only datagrams (the
// rest ride on its data): 128 ACKs of 60 bytes against 90 KB, ~8 %.
TEST(AckShareMeter, DecimatesWhereAcksCostABusyUplink) {
  AckShareMeter m;
  EXPECT_EQ(interval(m, 64, 100, true, false), true);
  // Decimating, it sends ~30 ACKs; the estimate is of the ACKs it would send
  // without, so it stays on.
  EXPECT_EQ(interval(m, 64, 30, true, true), true);
}

// 20 Mbit/s both ways: as many packets up as down, 128 ACKs against 256
// data packets: ~2 %.
TEST(AckShareMeter, NotOnASymmetricLink) {
  AckShareMeter m;
  EXPECT_EQ(interval(m, 256, 60, true, false), false);
}

// A side that only receives (or sends less than its window allows) has
// nothing its ACKs could take the uplink from.
TEST(AckShareMeter, NotWhereNothingWaits) {
  AckShareMeter m;
  EXPECT_EQ(interval(m, 0, 128, false, false), false);
  EXPECT_EQ(interval(m, 64, 100, false, false), false);
  // And it stops when the upload ends.
  EXPECT_EQ(interval(m, 64, 100, true, false), true);
  EXPECT_EQ(interval(m, 2, 30, false, true), false);
}

// A client that sends a page's requests, each waiting a pacing slot now and
// then, is no busy uplink however large its ACKs' share: the simulator's
// page loads lost time when such clients decimated.
TEST(AckShareMeter, NotForAFewRequests) {
  AckShareMeter m;
  EXPECT_EQ(interval(m, 10, 128, true, false), false);
  // Small ones: 80 requests of 400 bytes, each held by its join.
  for (int i = 0; i < 80; ++i) {
    m.on_sent(400, false);
    m.on_data_held();
  }
  for (int i = 0; i < 100; ++i) m.on_sent(60, true);
  std::optional<bool> requests;
  for (std::uint32_t i = 0; i < AckShareMeter::kIntervalPackets; ++i) requests = m.on_eliciting_received(2, false);
  EXPECT_EQ(requests, false);
  // 64 packets, held once: not busy either.
  for (int i = 0; i < 64; ++i) m.on_sent(1400, false);
  for (int i = 0; i < 100; ++i) m.on_sent(60, true);
  m.on_data_held();
  std::optional<bool> out;
  for (std::uint32_t i = 0; i < AckShareMeter::kIntervalPackets; ++i) out = m.on_eliciting_received(2, false);
  EXPECT_EQ(out, false);
}

// Between kOffShare and kOnShare it keeps what it does: no flapping.
TEST(AckShareMeter, HysteresisBetweenFourAndFivePercent) {
  // 128 ACKs x 60 = 7,680 bytes; 4.5 % of the total: others = 163,000 bytes.
  AckShareMeter m;
  EXPECT_EQ(interval(m, 116, 10, true, false), false);
  EXPECT_EQ(interval(m, 116, 10, true, true), true);
}

}  // namespace
}  // namespace egw::tunnel
