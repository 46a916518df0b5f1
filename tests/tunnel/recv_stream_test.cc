#include "tunnel/recv_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tunnel/range_set.h"

namespace egw::tunnel {
namespace {

std::vector<std::byte> pattern(std::size_t n, std::size_t start = 0) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((start + i) % 251);
  return v;
}

std::span<const std::byte> slice(const std::vector<std::byte>& v, std::size_t off,
                                 std::size_t len) {
  return std::span<const std::byte>(v).subspan(off, len);
}

// peek/consume (a relay sending straight from the buffer): the in-order
// prefix in place, in two pieces once the ring wraps, only what was consumed
// leaves; the FIN reads with the last byte.
TEST(RecvStream, PeekShowsTheInOrderBytesInPlaceAndConsumeTakesPartOfThem) {
  auto data = pattern(6000);
  RecvStream r(10'000, 10'000);
  r.on_stream_frame(0, slice(data, 0, 3000), false);  // a 4 KB ring
  auto ready = r.peek();
  ASSERT_EQ(ready[0].size() + ready[1].size(), 3000u);
  EXPECT_TRUE(std::equal(ready[0].begin(), ready[0].end(), data.begin()));
  bool fin = true;
  r.consume(2500, &fin);  // the socket took 2,500
  EXPECT_FALSE(fin);
  EXPECT_EQ(r.read_offset(), 2500u);
  r.on_stream_frame(4000, slice(data, 4000, 1000), false);  // beyond a hole: not shown
  ready = r.peek();
  EXPECT_EQ(ready[0].size() + ready[1].size(), 500u);
  r.on_stream_frame(3000, slice(data, 3000, 1000), false);
  r.on_stream_frame(5000, slice(data, 5000, 1000), true);  // past the ring's end: it wraps
  ready = r.peek();
  EXPECT_GT(ready[1].size(), 0u);
  std::vector<std::byte> got(ready[0].begin(), ready[0].end());
  got.insert(got.end(), ready[1].begin(), ready[1].end());
  EXPECT_EQ(got, std::vector<std::byte>(data.begin() + 2500, data.end()));
  r.consume(got.size(), &fin);
  EXPECT_TRUE(fin);
  EXPECT_EQ(r.buffered_bytes(), 0u);
  EXPECT_EQ(r.peek()[0].size(), 0u);
}

TEST(RecvStream, ReassemblesOutOfOrderOverlappingAndDuplicateFrames) {
  auto data = pattern(3000);
  RecvStream r(10'000, 0);
  EXPECT_EQ(r.on_stream_frame(1000, slice(data, 1000, 1000), false).new_bytes, 2000u);
  EXPECT_FALSE(r.readable());  // hole at [0,1000)
  EXPECT_EQ(r.on_stream_frame(500, slice(data, 500, 1000), false).new_bytes, 0u);  // overlap
  EXPECT_EQ(r.on_stream_frame(2000, slice(data, 2000, 1000), true).new_bytes, 1000u);
  EXPECT_EQ(r.on_stream_frame(0, slice(data, 0, 600), false).status,
            RecvStream::Status::ok);
  EXPECT_EQ(r.on_stream_frame(1000, slice(data, 1000, 1000), false).new_bytes, 0u);  // dup
  ASSERT_TRUE(r.readable());
  std::vector<std::byte> out(5000);
  bool fin = false;
  EXPECT_EQ(r.read(out, &fin), 3000u);
  EXPECT_TRUE(fin);
  out.resize(3000);
  EXPECT_EQ(out, data);
  EXPECT_EQ(r.buffered_bytes(), 0u);
}

TEST(RecvStream, DataBeyondCreditIsAFlowControlError) {
  auto data = pattern(2000);
  RecvStream r(1000, 0);
  EXPECT_EQ(r.on_stream_frame(0, slice(data, 0, 1000), false).status,
            RecvStream::Status::ok);
  EXPECT_EQ(r.on_stream_frame(1000, slice(data, 1000, 1), false).status,
            RecvStream::Status::flow_control_error);  // 1001 > 1000
}

TEST(RecvStream, InitialCreditAppliesWhenLargerThanWindow) {
  RecvStream r(1000, 4000);
  EXPECT_EQ(r.max_stream_data(), 4000u);
}

TEST(RecvStream, FinalSizeViolations) {
  auto data = pattern(2000);
  {
    RecvStream r(10'000, 0);
    r.on_stream_frame(0, slice(data, 0, 1000), true);
    EXPECT_EQ(r.on_stream_frame(1000, slice(data, 1000, 1), false).status,
              RecvStream::Status::final_size_error);  // past the final size
    EXPECT_EQ(r.on_stream_frame(0, slice(data, 0, 900), true).status,
              RecvStream::Status::final_size_error);  // a different final size
    EXPECT_EQ(r.on_stream_frame(0, slice(data, 0, 1000), true).status,
              RecvStream::Status::ok);  // the same FIN again is fine
  }
  {
    RecvStream r(10'000, 0);
    r.on_stream_frame(1000, slice(data, 1000, 1000), false);
    EXPECT_EQ(r.on_stream_frame(0, slice(data, 0, 500), true).status,
              RecvStream::Status::final_size_error);  // FIN below bytes already received
  }
}

TEST(RecvStream, CreditUpdateAfterHalfTheWindowIsRead) {
  auto data = pattern(1000);
  RecvStream r(1000, 0);
  r.on_stream_frame(0, slice(data, 0, 1000), false);
  std::vector<std::byte> out(400);
  r.read(out, nullptr);
  EXPECT_FALSE(r.take_credit_update());  // consumed 400 < 1000 / 2
  out.resize(100);
  r.read(out, nullptr);
  auto update = r.take_credit_update();  // consumed 500 >= 500
  ASSERT_TRUE(update);
  EXPECT_EQ(*update, 1500u);  // read 500 + window 1000
  EXPECT_FALSE(r.take_credit_update());
}

TEST(RecvStream, EmptyFinIsReadable) {
  RecvStream r(1000, 0);
  r.on_stream_frame(0, {}, true);
  EXPECT_TRUE(r.readable());
  bool fin = false;
  std::vector<std::byte> out(10);
  EXPECT_EQ(r.read(out, &fin), 0u);
  EXPECT_TRUE(fin);
  EXPECT_FALSE(r.readable());
}

TEST(RecvStream, HostileFragmentationIsCapped) {
  RecvStream r(1 << 20, 0);
  std::vector<std::byte> one(1);
  RecvStream::Status last = RecvStream::Status::ok;
  // Every other byte: each frame opens a new hole.
  for (std::size_t i = 0; i <= RecvStream::kMaxIntervals && last == RecvStream::Status::ok; ++i) {
    last = r.on_stream_frame(1 + 2 * i, one, false).status;
  }
  EXPECT_EQ(last, RecvStream::Status::too_fragmented);
}

TEST(RangeSet, InsertMergesAndEraseSplits) {
  RangeSet s;
  s.insert(10, 20);
  s.insert(30, 40);
  s.insert(20, 30);  // bridges both
  EXPECT_EQ(s.interval_count(), 1u);
  EXPECT_EQ(*s.first(), (Interval{10, 40}));
  s.erase(15, 25);
  EXPECT_EQ(s.interval_count(), 2u);
  EXPECT_TRUE(s.contains(14));
  EXPECT_FALSE(s.contains(15));
  EXPECT_TRUE(s.contains(25));
  auto gaps = s.gaps(0, 50);
  ASSERT_EQ(gaps.size(), 3u);
  EXPECT_EQ(gaps[0], (Interval{0, 10}));
  EXPECT_EQ(gaps[1], (Interval{15, 25}));
  EXPECT_EQ(gaps[2], (Interval{40, 50}));
  s.erase_below(30);
  EXPECT_EQ(*s.first(), (Interval{30, 40}));
}

}  // namespace
}  // namespace egw::tunnel
