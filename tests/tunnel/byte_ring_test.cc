// ByteRing's zero-copy views and its refill from the pool.
#include "tunnel/byte_ring.h"

#include <gtest/gtest.h>

#include <vector>

namespace egw::tunnel {
namespace {

std::vector<std::byte> pattern(std::size_t n, std::size_t start = 0) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((start + i) % 251);
  return v;
}

std::vector<std::byte> joined(const ByteRing::ConstPieces& pieces) {
  std::vector<std::byte> v(pieces[0].begin(), pieces[0].end());
  v.insert(v.end(), pieces[1].begin(), pieces[1].end());
  return v;
}

// back_room + commit_back (a socket read into the ring) and front (a socket
// write from it) see the same bytes as append and read_at, across the wrap.
TEST(ByteRing, FrontAndBackRoomAreTheRingsBytesInPlaceAcrossTheWrap) {
  ByteRing r;
  r.append(pattern(3000));  // a 4 KB ring
  r.pop_front(2000);
  auto room = r.back_room(2500);  // bytes [3000, 5500) of the stream: past the 4 KB end
  ASSERT_GT(room[1].size(), 0u);
  const auto data = pattern(2500, 3000);
  std::size_t at = 0;
  for (auto piece : room) {
    for (auto& b : piece) b = data[at++];
  }
  r.commit_back(2500);
  EXPECT_EQ(r.size(), 3500u);
  EXPECT_EQ(joined(r.front(10'000)), pattern(3500, 2000));
  EXPECT_EQ(joined(r.front(100)), pattern(100, 2000));
}

// Room asked for and nothing put there (the socket had nothing): an empty
// ring hands its buffer back, as after a drain.
TEST(ByteRing, AnEmptyRingThatGotNothingHoldsNoBuffer) {
  BufferPool pool;
  ByteRing r(&pool);
  r.back_room(1000);
  EXPECT_GT(r.capacity(), 0u);
  r.commit_back(0);
  EXPECT_EQ(r.capacity(), 0u);
  EXPECT_EQ(pool.bytes_held(), BufferPool::kMinBlockBytes);
}

// A ring drained on every read (a relay that keeps up) refills into the
// largest block the pool keeps (up to 256 KB), not from 4 KB up again with a
// copy of its bytes at each doubling.
TEST(ByteRing, ARefillingRingStartsWithThePoolsLargestBlock) {
  BufferPool pool;
  ByteRing r(&pool);
  for (int i = 0; i < 70; ++i) r.append(pattern(1400));  // doubled up to 128 KB, packet by packet
  ASSERT_EQ(r.capacity(), 128u * 1024);
  r.pop_front(r.size());  // drained: its blocks (4 KB .. 128 KB) are in the pool
  EXPECT_EQ(r.capacity(), 0u);
  r.append(pattern(1400));
  EXPECT_EQ(r.capacity(), 128u * 1024);
  r.pop_front(1400);
  ByteRing unpooled;
  unpooled.append(pattern(1400));
  EXPECT_EQ(unpooled.capacity(), BufferPool::kMinBlockBytes);
}

// A full pool keeps its largest blocks: a big block given back frees small
// ones rather than being freed itself, so a ring that grew big refills big
// (the hub's receive ring grew again from 256 KB after every drain).
TEST(BufferPool, AFullPoolKeepsItsLargestBlocks) {
  BufferPool pool;
  for (std::size_t i = 0; i < BufferPool::kMaxBytes / BufferPool::kMinBlockBytes; ++i) {
    pool.give(std::vector<std::byte>(BufferPool::kMinBlockBytes));
  }
  ASSERT_EQ(pool.bytes_held(), BufferPool::kMaxBytes);
  pool.give(std::vector<std::byte>(512 * 1024));
  EXPECT_EQ(pool.bytes_held(), BufferPool::kMaxBytes);  // still bounded
  EXPECT_EQ(pool.largest_kept(BufferPool::kMaxBytes), 512u * 1024);
  pool.give(std::vector<std::byte>(BufferPool::kMinBlockBytes));  // no room, none smaller
  EXPECT_EQ(pool.bytes_held(), BufferPool::kMaxBytes);
  EXPECT_EQ(pool.take(512 * 1024).size(), 512u * 1024);
}

// A ring that grew to 1 MB and drained refills at 1 MB (half the pool), not
// at 256 KB with two more doublings and their copies.
TEST(ByteRing, ARingThatGrewToAMegabyteRefillsAtItsSize) {
  BufferPool pool;
  ByteRing r(&pool);
  for (int i = 0; i < 500; ++i) r.append(pattern(1400));  // doubled up to 1 MB, packet by packet
  ASSERT_EQ(r.capacity(), 1024u * 1024);
  r.pop_front(r.size());
  r.append(pattern(1400));
  EXPECT_EQ(r.capacity(), 1024u * 1024);
}

}  // namespace
}  // namespace egw::tunnel
