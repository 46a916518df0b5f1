#include "congestion/sent_packets.h"

#include <gtest/gtest.h>

namespace egw::congestion {
namespace {

const Instant t0 = instant_at(ms(10'000));

SentPacket packet(PacketNumber n, MemberId member, Instant sent, ByteCount bytes = 1200) {
  return SentPacket{n, member, bytes, sent, true};
}

std::vector<PacketNumber> numbers(const std::vector<SentPacket>& v) {
  std::vector<PacketNumber> out;
  for (const auto& p : v) out.push_back(p.number);
  return out;
}

TEST(SentPackets, PacketThresholdAcrossMembers) {
  SentPackets list;
  ASSERT_TRUE(list.on_sent(packet(1, /*A*/ 1, t0)));
  for (PacketNumber n = 2; n <= 5; ++n) ASSERT_TRUE(list.on_sent(packet(n, /*B*/ 2, t0)));
  EXPECT_EQ(list.bytes_in_flight(), 6000u);  // 5 * 1200
  const AckedRange r{4, 4};
  auto acked = list.on_ack({&r, 1}, t0 + ms(100));
  EXPECT_EQ(numbers(acked.acked), (std::vector<PacketNumber>{4}));
  ASSERT_TRUE(acked.rtt_sample);
  EXPECT_EQ(*acked.rtt_sample, ms(100));
  // 4 is 3 positions after 1: A's packet 1 is lost by B's ack (6.1.1);
  // 2 and 3 are only 2 and 1 positions behind.
  auto lost = list.detect_lost(t0 + ms(100), ms(100));
  EXPECT_EQ(numbers(lost), (std::vector<PacketNumber>{1}));
  EXPECT_EQ(lost[0].member, 1u);
  // The loss timer covers 2: sent at t0, 9/8 * 100 ms = 112.5 ms later.
  ASSERT_TRUE(list.loss_time());
  EXPECT_EQ(*list.loss_time(), t0 + us(112'500));
  EXPECT_EQ(list.bytes_in_flight(), 3600u);  // 2, 3, 5 remain
}

// The urgent lane (issue 22): the receiver takes an urgent packet ahead of
// the ordinary ones sent before it, so its ACK declares none of them lost,
// by count or by time; they are judged by their own lane's later packets.
// An urgent packet is overtaken by nothing: any later ACK counts against it.
TEST(SentPackets, AnUrgentPacketsAckSaysNothingOfTheOrdinaryOnesBeforeIt) {
  SentPackets list;
  for (PacketNumber n = 1; n <= 5; ++n) ASSERT_TRUE(list.on_sent(packet(n, 2, t0)));
  SentPacket urgent = packet(6, 3, t0 + ms(1));
  urgent.urgent = true;
  ASSERT_TRUE(list.on_sent(urgent));
  for (PacketNumber n = 7; n <= 10; ++n) ASSERT_TRUE(list.on_sent(packet(n, 2, t0 + ms(1))));
  // 6 acknowledged first, long after 1-5 were sent: none of them is lost,
  // and no loss timer runs for them (only the PTO would find them).
  const AckedRange six{6, 6};
  EXPECT_EQ(numbers(list.on_ack({&six, 1}, t0 + ms(300)).acked), (std::vector<PacketNumber>{6}));
  EXPECT_TRUE(list.detect_lost(t0 + ms(300), ms(100)).empty());
  EXPECT_FALSE(list.loss_time());
  // Then 1-4 and 7-9 arrive: 5 is three of its lane's packets behind 9.
  const AckedRange ordinary[] = {{7, 9}, {1, 4}};
  list.on_ack(ordinary, t0 + ms(301));
  EXPECT_EQ(numbers(list.detect_lost(t0 + ms(301), ms(100))), (std::vector<PacketNumber>{5}));

  // An urgent packet that is missing while three later packets (of any
  // lane) are acknowledged is lost.
  SentPackets other;
  SentPacket u = packet(1, 3, t0);
  u.urgent = true;
  ASSERT_TRUE(other.on_sent(u));
  for (PacketNumber n = 2; n <= 4; ++n) ASSERT_TRUE(other.on_sent(packet(n, 2, t0)));
  const AckedRange later{2, 4};
  other.on_ack({&later, 1}, t0 + ms(10));
  EXPECT_EQ(numbers(other.detect_lost(t0 + ms(10), ms(100))), (std::vector<PacketNumber>{1}));
}

TEST(SentPackets, TimeThresholdDeclaresOldPacketsLost) {
  SentPackets list;
  list.on_sent(packet(1, 1, t0));
  list.on_sent(packet(2, 1, t0 + ms(50)));
  const AckedRange r{2, 2};
  list.on_ack({&r, 1}, t0 + ms(100));
  // At t0 + 100: packet 1 is 100 ms old, the threshold 9/8 * 100 = 112.5 ms.
  EXPECT_TRUE(list.detect_lost(t0 + ms(100), ms(100)).empty());
  EXPECT_EQ(*list.loss_time(), t0 + us(112'500));
  EXPECT_EQ(numbers(list.detect_lost(t0 + us(112'500), ms(100))), (std::vector<PacketNumber>{1}));
  EXPECT_FALSE(list.loss_time());
}

TEST(SentPackets, IgnoresUnknownMalformedAndRepeatedAcks) {
  SentPackets list;
  list.on_sent(packet(10, 1, t0));
  list.on_sent(packet(11, 1, t0));
  EXPECT_FALSE(list.on_sent(packet(11, 1, t0)));  // numbers must increase
  const AckedRange ranges[] = {{100, 200}, {12, 5}, {11, 11}};
  auto r1 = list.on_ack(ranges, t0 + ms(10));
  EXPECT_EQ(numbers(r1.acked), (std::vector<PacketNumber>{11}));
  auto r2 = list.on_ack(ranges, t0 + ms(20));
  EXPECT_TRUE(r2.acked.empty());
  EXPECT_FALSE(r2.rtt_sample);
  // A late ack of an older packet gives no RTT sample (RFC 9002 5.1).
  const AckedRange old{10, 10};
  auto r3 = list.on_ack({&old, 1}, t0 + ms(30));
  EXPECT_EQ(numbers(r3.acked), (std::vector<PacketNumber>{10}));
  EXPECT_FALSE(r3.rtt_sample);
  EXPECT_TRUE(list.empty());
}

TEST(SentPackets, TakeAllEmptiesTheList) {
  SentPackets list;
  list.on_sent(packet(1, 1, t0));
  list.on_sent(packet(2, 2, t0));
  EXPECT_EQ(numbers(list.take_all()), (std::vector<PacketNumber>{1, 2}));
  EXPECT_EQ(list.bytes_in_flight(), 0u);
}

}  // namespace
}  // namespace egw::congestion
