#include "tunnel/send_stream.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace egw::tunnel {
namespace {

std::vector<std::byte> pattern(std::size_t n, std::size_t start = 0) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((start + i) % 251);
  return v;
}

constexpr std::uint64_t kLots = 1u << 30;  // connection credit that never binds

// write_room/commit_write (a relay reading its socket straight into the
// buffer): room bounded like write(), in two pieces once the ring wraps, and
// only the committed bytes count; what goes out equals what was put there.
TEST(SendStream, WriteRoomIsFilledInPlaceAndOnlyCommittedBytesCount) {
  SendStream s(5000, kLots);
  auto data = pattern(10'000);
  auto fill = [&](std::size_t from, std::size_t want, std::size_t commit) {
    auto room = s.write_room(want);
    std::size_t at = from;
    for (auto piece : room) {
      for (auto& b : piece) b = data[at++];
    }
    s.commit_write(commit);
    return room;
  };
  auto room = fill(0, 9000, 5000);  // bounded by the capacity
  EXPECT_EQ(room[0].size() + room[1].size(), 5000u);
  EXPECT_EQ(s.buffer_room_bytes(), 0u);
  auto c = s.take_chunk(4000, kLots);
  ASSERT_TRUE(c);
  s.on_acked(c->offset, c->length, false);  // the ring's front moves: the next room wraps
  room = fill(5000, 4000, 3000);            // 3,000 of the 4,000 filled
  EXPECT_GT(room[1].size(), 0u);
  c = s.take_chunk(5000, kLots);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->offset, 4000u);
  ASSERT_EQ(c->length, 4000u);
  std::vector<std::byte> out(c->length);
  s.copy_out(*c, out);
  EXPECT_EQ(out, std::vector<std::byte>(data.begin() + 4000, data.begin() + 8000));
  fill(8000, 100, 0);  // nothing came: nothing counts
  EXPECT_EQ(s.next_send_offset(kLots), std::nullopt);
}

TEST(SendStream, WriteIsBoundedByBufferAndSignalsWritableAfterAck) {
  SendStream s(1000, kLots);
  auto data = pattern(1500);
  EXPECT_EQ(s.write(data), 1000u);  // capacity 1000 of 1500
  EXPECT_EQ(s.write(data), 0u);
  EXPECT_FALSE(s.take_writable_signal());

  auto c = s.take_chunk(400, kLots);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->offset, 0u);
  EXPECT_EQ(c->length, 400u);
  EXPECT_FALSE(c->retransmission);
  EXPECT_FALSE(s.take_writable_signal());  // sent is not acknowledged: no room yet
  s.on_acked(c->offset, c->length, c->fin);
  EXPECT_EQ(s.buffered_bytes(), 600u);  // 1000 - 400 freed
  EXPECT_TRUE(s.take_writable_signal());
  EXPECT_FALSE(s.take_writable_signal());  // once
  EXPECT_EQ(s.write(data), 400u);
}

// A peer acknowledging every other 1-byte chunk makes a range per byte in
// the acked set (before: 5,000 ranges = 80 KB from 10,000 bytes, without
// bound); beyond kMaxIntervals the stream says so and the connection closes.
TEST(SendStream, AckingEveryOtherChunkIsCapped) {
  SendStream s(1 << 20, kLots);
  const auto data = pattern(10'000);
  ASSERT_EQ(s.write(data), data.size());
  bool flagged_at_cap = false;
  for (std::size_t i = 0; i < data.size(); ++i) {
    auto c = s.take_chunk(1, kLots);
    ASSERT_TRUE(c);
    if (i % 2 == 1) s.on_acked(c->offset, c->length, c->fin);
    if (s.acked_interval_count() == SendStream::kMaxIntervals) {
      EXPECT_FALSE(s.too_fragmented());
    }
    if (s.acked_interval_count() == SendStream::kMaxIntervals + 1) {
      flagged_at_cap = s.too_fragmented();
      break;
    }
  }
  EXPECT_TRUE(flagged_at_cap);
}

TEST(SendStream, ChunksFollowPeerCreditAndConnectionAllowance) {
  SendStream s(10'000, 500);
  s.write(pattern(2000));
  auto c1 = s.take_chunk(1200, kLots);
  ASSERT_TRUE(c1);
  EXPECT_EQ(c1->length, 500u);  // peer credit 500
  EXPECT_FALSE(s.has_new_data(kLots));
  EXPECT_FALSE(s.take_chunk(1200, kLots));
  s.on_max_stream_data(1500);
  auto c2 = s.take_chunk(1200, 300);
  ASSERT_TRUE(c2);
  EXPECT_EQ(c2->offset, 500u);
  EXPECT_EQ(c2->length, 300u);  // connection allowance 300
  EXPECT_FALSE(s.has_new_data(0));
  s.on_max_stream_data(100);  // credit never shrinks
  EXPECT_EQ(s.peer_credit(), 1500u);
}

TEST(SendStream, LostRangesGoFirstAndSkipAckedParts) {
  SendStream s(10'000, kLots);
  auto data = pattern(3000);
  s.write(data);
  auto a = *s.take_chunk(1000, kLots);  // [0,1000)
  auto b = *s.take_chunk(1000, kLots);  // [1000,2000)
  s.on_acked(500, 200, false);          // part of a was acked by another packet
  s.on_lost(a.offset, a.length, a.fin);  // lost: [0,500) and [700,1000) remain
  EXPECT_TRUE(s.has_retransmission());
  EXPECT_EQ(s.next_send_offset(kLots), 0u);
  auto r1 = *s.take_chunk(1000, kLots);
  EXPECT_TRUE(r1.retransmission);
  EXPECT_EQ(r1.offset, 0u);
  EXPECT_EQ(r1.length, 500u);
  auto r2 = *s.take_chunk(100, kLots);
  EXPECT_EQ(r2.offset, 700u);
  EXPECT_EQ(r2.length, 100u);  // limited by max_length
  std::vector<std::byte> out(r2.length);
  s.copy_out(r2, out);
  EXPECT_EQ(out, std::vector<std::byte>(data.begin() + 700, data.begin() + 800));
  auto r3 = *s.take_chunk(1000, kLots);
  EXPECT_EQ(r3.offset, 800u);
  EXPECT_EQ(r3.length, 200u);
  // Then new data resumes where it left off.
  auto n = *s.take_chunk(1000, kLots);
  EXPECT_FALSE(n.retransmission);
  EXPECT_EQ(n.offset, 2000u);
  (void)b;
}

TEST(SendStream, SpuriousLossIsNotResent) {
  SendStream s(10'000, kLots);
  s.write(pattern(1000));
  auto a = *s.take_chunk(1000, kLots);
  s.on_lost(a.offset, a.length, false);
  s.on_acked(a.offset, a.length, false);  // the original arrived after all
  EXPECT_FALSE(s.has_retransmission());
  EXPECT_EQ(s.acked_prefix(), 1000u);
  EXPECT_EQ(s.buffered_bytes(), 0u);
}

TEST(SendStream, FinLifecycle) {
  SendStream s(10'000, kLots);
  s.write(pattern(100));
  s.finish();
  EXPECT_EQ(s.write(pattern(10)), 0u);  // no writes after FIN
  auto c = *s.take_chunk(1000, kLots);
  EXPECT_TRUE(c.fin);
  EXPECT_EQ(c.length, 100u);
  EXPECT_FALSE(s.next_send_offset(kLots));
  s.on_lost(c.offset, c.length, c.fin);
  auto r = *s.take_chunk(1000, kLots);
  EXPECT_TRUE(r.fin);  // the FIN rides with the last lost range
  EXPECT_TRUE(r.retransmission);
  EXPECT_FALSE(s.all_acked());
  s.on_acked(r.offset, r.length, r.fin);
  EXPECT_TRUE(s.all_acked());
}

TEST(SendStream, BareFinNeedsNoCredit) {
  SendStream s(10'000, 100);
  s.write(pattern(100));
  auto c = *s.take_chunk(1000, kLots);
  EXPECT_FALSE(c.fin);
  s.finish();
  EXPECT_TRUE(s.has_new_data(0));
  auto f = *s.take_chunk(0, 0);
  EXPECT_TRUE(f.fin);
  EXPECT_EQ(f.offset, 100u);
  EXPECT_EQ(f.length, 0u);
  s.on_lost(f.offset, 0, true);
  auto f2 = *s.take_chunk(0, 0);
  EXPECT_TRUE(f2.fin);
  EXPECT_TRUE(f2.retransmission);
}

}  // namespace
}  // namespace egw::tunnel
