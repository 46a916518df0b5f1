// Connection-level flow control (tunnel/flow_control.h): MAX_DATA timing,
// and no deadlock when part of the window is held by bytes nobody reads.
#include <gtest/gtest.h>

#include <algorithm>

#include "tunnel/flow_control.h"

namespace egw::tunnel {
namespace {

// Everything read at once: a MAX_DATA per half window, as before.
TEST(RecvCredit, WithEverythingReadUpdatesEveryHalfWindow) {
  RecvCredit credit(1000, 1000);
  ASSERT_TRUE(credit.on_received(499));
  credit.on_consumed(499);
  EXPECT_FALSE(credit.take_update());  // grant 499 < 500 and < remaining 501
  ASSERT_TRUE(credit.on_received(1));
  credit.on_consumed(1);
  EXPECT_EQ(credit.take_update(), 1500u);  // half a window read: 500 + 1000
}

// A stalled stream holds 700 of a 1000-byte window unread; another stream
// receives and reads. The sender sends whatever credit it has. Half a
// window of reads (500) never comes from 300 bytes of credit: the old rule
// deadlocked here; the active stream must get 100 KB through.
TEST(RecvCredit, BytesNobodyReadsDoNotDeadlockTheOtherStreams) {
  RecvCredit recv(1000, 1000);
  SendCredit send(recv.maximum());
  ASSERT_TRUE(recv.on_received(700));  // the stalled stream's bytes, never read
  send.on_new_bytes_sent(700);
  std::uint64_t delivered = 0;
  for (int round = 0; round < 10'000 && delivered < 100'000; ++round) {
    const std::uint64_t n = std::min<std::uint64_t>(send.available(), 100);
    if (n == 0) break;  // blocked: no MAX_DATA will come
    send.on_new_bytes_sent(n);
    ASSERT_TRUE(recv.on_received(n));
    recv.on_consumed(n);  // the active stream reads at once
    delivered += n;
    if (const auto update = recv.take_update()) send.on_max_data(*update);
  }
  EXPECT_GE(delivered, 100'000u);
  EXPECT_LE(send.available() + 700, 1000u) << "never more than the window outstanding";
}

}  // namespace
}  // namespace egw::tunnel
