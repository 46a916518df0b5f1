// AckTracker: anti-replay, ranges to acknowledge, and when an ACK is due
// (RFC 9000 sections 13.2.1, 13.2.2, 13.2.4; RFC 6479).
#include "tunnel/ack_tracker.h"

#include <gtest/gtest.h>

#include "tunnel/frame_codec.h"

namespace egw::tunnel {
namespace {

const Instant t0 = instant_at(ms(1000));

AckTracker make_tracker(std::uint32_t every = 2, Duration delay = ms(25)) {
  return AckTracker(AckTrackerConfig{delay, every});
}

TEST(AckTracker, DuplicatesAreRefused) {
  auto t = make_tracker();
  EXPECT_TRUE(t.on_packet_received(0, true, t0));
  EXPECT_TRUE(t.on_packet_received(1, true, t0));
  EXPECT_FALSE(t.is_new(1));
  EXPECT_FALSE(t.on_packet_received(1, true, t0));
  EXPECT_FALSE(t.on_packet_received(0, true, t0));
  EXPECT_TRUE(t.is_new(2));
  EXPECT_EQ(t.largest_received(), 1u);
}

TEST(AckTracker, ReorderedPacketsInsideTheWindowAreAcceptedOnce) {
  auto t = make_tracker();
  EXPECT_TRUE(t.on_packet_received(20'000, true, t0));
  // 20000 - 8192 + 1 = 11809 is the oldest number still inside the window.
  EXPECT_TRUE(t.on_packet_received(20'000 - AckTracker::kReplayWindowPackets + 1, true, t0));
  EXPECT_FALSE(t.on_packet_received(20'000 - AckTracker::kReplayWindowPackets + 1, true, t0));
  EXPECT_FALSE(t.is_new(20'000 - AckTracker::kReplayWindowPackets));  // too old to tell
  EXPECT_TRUE(t.on_packet_received(19'999, false, t0));
}

// WireGuard's window: at least 8192 packet numbers below the largest.
TEST(AckTracker, ReplayWindowIsAtLeastWireGuards) {
  static_assert(AckTracker::kReplayWindowPackets >= 8192);
  auto t = make_tracker();
  EXPECT_TRUE(t.on_packet_received(10'000, true, t0));
  // The window: the largest and the 8191 numbers below it.
  EXPECT_TRUE(t.is_new(10'000 - 8191));
  EXPECT_TRUE(t.on_packet_received(10'000 - 8191, true, t0));
  EXPECT_FALSE(t.is_new(10'000 - 8191));
}

TEST(AckTracker, WindowSlidesWithoutForgettingRecentNumbers) {
  auto t = make_tracker();
  // Receive every even number up to 10'000: the ring wraps many times.
  for (PacketNumber n = 0; n <= 10'000; n += 2) ASSERT_TRUE(t.on_packet_received(n, false, t0));
  for (PacketNumber n = 10'000 - 1900; n <= 10'000; ++n) {
    EXPECT_EQ(t.is_new(n), n % 2 == 1) << n;  // evens seen, odds never seen
  }
}

TEST(AckTracker, BigJumpClearsTheWholeRing) {
  auto t = make_tracker();
  for (PacketNumber n = 0; n < 64 * 32; ++n) t.on_packet_received(n, false, t0);
  // Jump far ahead: every old bit must be cleared, so numbers inside the new
  // window that alias old ring positions are still new.
  ASSERT_TRUE(t.on_packet_received(1'000'000, false, t0));
  for (PacketNumber n = 1'000'000 - 100; n < 1'000'000; ++n) EXPECT_TRUE(t.is_new(n)) << n;
}

TEST(AckTracker, NumbersBeyond62BitsAreRefused) {
  auto t = make_tracker();
  EXPECT_FALSE(t.on_packet_received(PacketNumber{1} << 62, true, t0));
  EXPECT_FALSE(t.largest_received());
}

TEST(AckTracker, RangesMergeAndStayDescending) {
  auto t = make_tracker();
  for (PacketNumber n : {1, 2, 3, 7, 8, 5, 10}) t.on_packet_received(n, false, t0);
  // 1-3, 5, 7-8, 10, newest first.
  EXPECT_EQ(t.ranges(), (std::vector<AckRange>{{10, 10}, {7, 8}, {5, 5}, {1, 3}}));
  t.on_packet_received(4, false, t0);  // joins 1-3 and 5
  t.on_packet_received(6, false, t0);  // joins 1-5 and 7-8
  t.on_packet_received(9, false, t0);  // joins everything
  EXPECT_EQ(t.ranges(), (std::vector<AckRange>{{1, 10}}));
  t.on_packet_received(0, false, t0);
  EXPECT_EQ(t.ranges(), (std::vector<AckRange>{{0, 10}}));
}

TEST(AckTracker, KeepsOnlyTheNewestRanges) {
  auto t = make_tracker();
  // Every even number from 0 to 2 * 99: 100 separate ranges.
  for (PacketNumber n = 0; n < 200; n += 2) t.on_packet_received(n, false, t0);
  ASSERT_EQ(t.ranges().size(), kMaxAckRanges);
  EXPECT_EQ(t.ranges().front(), (AckRange{198, 198}));
  // 64 newest: 198 down to 198 - 2 * 63 = 72.
  EXPECT_EQ(t.ranges().back(), (AckRange{72, 72}));
}

TEST(AckTracker, AckFrameCarriesDelaySinceLargestArrived) {
  auto t = make_tracker();
  t.on_packet_received(3, true, t0);
  t.on_packet_received(4, true, t0 + ms(2));
  t.on_packet_received(1, true, t0 + ms(4));  // older: does not change the delay base
  auto ack = t.ack_frame(t0 + ms(10), 1000);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->ack_delay, ms(8));  // 10 - 2
  EXPECT_EQ(ack->ranges, (std::vector<AckRange>{{3, 4}, {1, 1}}));
  EXPECT_TRUE(is_valid_ack(*ack));
}

TEST(AckTracker, AckFrameRespectsTheBudget) {
  auto t = make_tracker();
  for (PacketNumber n = 0; n < 40; n += 2) t.on_packet_received(n, false, t0);
  // type 1 + largest 38 (1) + delay 0 (1) + count (1) + first (1) = 5, +2 per range.
  auto ack = t.ack_frame(t0, 5 + 2 * 3);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->ranges.size(), 4u);
  EXPECT_EQ(ack->ranges.front(), (AckRange{38, 38}));
  EXPECT_FALSE(t.ack_frame(t0, 4));
}

TEST(AckTracker, NothingToAckBeforeAnyPacket) {
  auto t = make_tracker();
  EXPECT_FALSE(t.ack_deadline());
  EXPECT_FALSE(t.has_unacked_packets());
  EXPECT_FALSE(t.ack_frame(t0, 1000));
}

TEST(AckTracker, NonElicitingPacketsDoNotArmTheTimer) {
  auto t = make_tracker();
  t.on_packet_received(0, false, t0);
  t.on_packet_received(1, false, t0);
  EXPECT_FALSE(t.ack_deadline());
  EXPECT_TRUE(t.has_unacked_packets());  // but an ACK may ride along
}

TEST(AckTracker, OneElicitingPacketWaitsMaxAckDelay) {
  auto t = make_tracker(2, ms(25));
  t.on_packet_received(0, true, t0);
  EXPECT_EQ(t.ack_deadline(), t0 + ms(25));
  // A second in-order packet later does not push the deadline back; it
  // reaches ack_every_packets = 2, so the ACK is due at its arrival.
  t.on_packet_received(1, true, t0 + ms(5));
  EXPECT_EQ(t.ack_deadline(), t0 + ms(5));
  EXPECT_EQ(t.ack_eliciting_since_ack(), 2u);
}

TEST(AckTracker, AckSentResetsTheDebt) {
  auto t = make_tracker(2, ms(25));
  t.on_packet_received(0, true, t0);
  t.on_packet_received(1, true, t0);
  t.on_ack_sent(t0 + ms(1));
  EXPECT_FALSE(t.ack_deadline());
  EXPECT_EQ(t.ack_eliciting_since_ack(), 0u);
  EXPECT_FALSE(t.has_unacked_packets());
  // Ranges are still reported until the peer has seen them.
  EXPECT_EQ(t.ranges(), (std::vector<AckRange>{{0, 1}}));
  t.on_packet_received(2, true, t0 + ms(3));
  EXPECT_EQ(t.ack_deadline(), t0 + ms(3) + ms(25));
}

TEST(AckTracker, AckEveryFourPackets) {
  auto t = make_tracker(4, ms(25));
  for (PacketNumber n = 0; n < 3; ++n) t.on_packet_received(n, true, t0 + ms(n));
  EXPECT_EQ(t.ack_deadline(), t0 + ms(25));  // first arrival + 25
  t.on_packet_received(3, true, t0 + ms(3));
  EXPECT_EQ(t.ack_deadline(), t0 + ms(3));
}

TEST(AckTracker, GapMakesTheAckImmediate) {
  auto t = make_tracker(10, ms(25));
  t.on_packet_received(0, true, t0);
  EXPECT_EQ(t.ack_deadline(), t0 + ms(25));
  t.on_packet_received(2, true, t0 + ms(1));  // 1 missing
  EXPECT_EQ(t.ack_deadline(), t0 + ms(1));
}

TEST(AckTracker, ReorderedPacketMakesTheAckImmediate) {
  auto t = make_tracker(10, ms(25));
  t.on_packet_received(5, true, t0);
  t.on_ack_sent(t0);  // (the gap below 5 was reported)
  t.on_packet_received(6, true, t0 + ms(1));
  EXPECT_EQ(t.ack_deadline(), t0 + ms(1) + ms(25));
  t.on_packet_received(3, true, t0 + ms(2));  // below the largest
  EXPECT_EQ(t.ack_deadline(), t0 + ms(2));
}

TEST(AckTracker, NonElicitingGapDoesNotForceAnAck) {
  auto t = make_tracker(10, ms(25));
  t.on_packet_received(0, true, t0);
  t.on_packet_received(5, false, t0 + ms(1));
  EXPECT_EQ(t.ack_deadline(), t0 + ms(25));
}

TEST(AckTracker, AcknowledgedAckLetsOldRangesGo) {
  auto t = make_tracker();
  for (PacketNumber n : {1, 2, 3, 5, 6, 9}) t.on_packet_received(n, false, t0);
  t.on_ack_acknowledged(5);  // our ACK with largest 5 reached the peer
  EXPECT_EQ(t.ranges(), (std::vector<AckRange>{{9, 9}, {6, 6}}));
  // Forgotten ranges do not reopen the replay window.
  EXPECT_FALSE(t.on_packet_received(2, true, t0));
  t.on_ack_acknowledged(9);
  EXPECT_TRUE(t.ranges().empty());
  EXPECT_FALSE(t.ack_frame(t0, 1000));
  // A late newcomer below the forgotten point is acknowledged again.
  EXPECT_TRUE(t.on_packet_received(7, true, t0 + ms(1)));
  auto ack = t.ack_frame(t0 + ms(4), 1000);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->ranges, (std::vector<AckRange>{{7, 7}}));
  EXPECT_EQ(ack->ack_delay, ms(3));  // 4 - 1: measured from 7's arrival
}

}  // namespace
}  // namespace egw::tunnel
