// Keep-alive PINGs while idle (kControlMember, every 15 s, each after more
// than an RTO of idle) are not data: they neither restart the window nor
// take the careful resume, nor move the idle clock. The first data after
// idle gets the restart it is entitled to (RFC 5681 4.1, careful resume).
//
//   grow      the window to > 4 x IW on a 100 ms RTT, all acked
//   idle      a 60-byte PING every 15 s, acked after 100 ms
//   data      reconnaissance at the initial window (10 packets, unmarked);
//             its acks pass the RTT check: the jump, half the saved window
//
// Both laws: NewReno (the core's default) and model (the gateway's).
#include <gtest/gtest.h>

#include "congestion/ensemble.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::kMss;
using testing::test_config;

constexpr MemberId A = 1;
constexpr ByteCount kPingBytes = 60;
constexpr ByteCount kInitialWindow = 10 * kMss;

class EnsembleIdlePing : public ::testing::TestWithParam<WindowLawKind> {
 protected:
  static EnsembleConfig config() {
    EnsembleConfig c = test_config();
    c.law = GetParam();
    return c;
  }

  // Window-limited rounds until the window is > 4 x IW; returns it.
  static ByteCount grow(Harness& h) {
    h.ensemble.add_member(A, ContentClass::bulk, h.now);
    PacketNumber acked = 0;
    for (int round = 0; round < 12 && h.cwnd() <= 4 * kInitialWindow; ++round) {
      const int sent = h.fill_paced(A);
      h.now += ms(100);
      h.ack_range(acked + 1, acked + static_cast<PacketNumber>(sent));
      acked += static_cast<PacketNumber>(sent);
    }
    EXPECT_GT(h.cwnd(), 4 * kInitialWindow);
    EXPECT_EQ(h.flight(), 0u);
    return h.cwnd();
  }

  static void pings(Harness& h, int count) {
    for (int i = 0; i < count; ++i) {
      h.now += ms(15'000);
      ASSERT_TRUE(h.ensemble.can_send(kControlMember, h.now));
      const PacketNumber n = h.send(kControlMember, kPingBytes);
      EXPECT_FALSE(h.last_marked);
      h.now += ms(100);
      h.ack_range(n, n);
    }
  }
};

TEST_P(EnsembleIdlePing, KeepAlivePingsLeaveTheCarefulResumeToTheData) {
  Harness h(config());
  const ByteCount saved = grow(h);
  pings(h, 4);  // one minute idle
  const PacketNumber first = h.next_number;
  EXPECT_EQ(h.fill(A), 10);  // reconnaissance: the initial window
  EXPECT_EQ(h.marked, 0);
  h.now += ms(100);
  h.ack_range(first, first + 9);  // the RTT check passes
  EXPECT_EQ(h.cwnd(), saved / 2);  // the jump: half the window before idle
  EXPECT_GT(h.fill_paced(A, 200), 10);
  EXPECT_GT(h.marked, 0);  // the extra beyond slow start is marked LE
}

TEST_P(EnsembleIdlePing, PingsDoNotResetTheIdleClock) {
  Harness h(config());
  grow(h);
  pings(h, 44);  // 11 min: beyond resume.max_idle, though never 15 s without a PING
  const PacketNumber first = h.next_number;
  EXPECT_EQ(h.fill(A), 10);
  h.now += ms(100);
  h.ack_range(first, first + 9);
  EXPECT_LE(h.cwnd(), 3 * kInitialWindow);  // the old window is discarded: slow start
  EXPECT_EQ(h.fill_paced(A, 200) > 0 ? h.marked : -1, 0);  // no resume, nothing marked
}

TEST_P(EnsembleIdlePing, DataBehindAnOutstandingPingStillRestarts) {
  Harness h(config());
  const ByteCount saved = grow(h);
  h.now += ms(15'000);
  const PacketNumber ping = h.send(kControlMember, kPingBytes);
  // The window restarts at the initial window, the PING's bytes in it.
  EXPECT_EQ(h.fill(A), 9);
  EXPECT_EQ(h.marked, 0);
  h.now += ms(100);
  h.ack_range(ping, ping + 9);
  EXPECT_EQ(h.cwnd(), saved / 2);  // the RTT check passed: the jump
  EXPECT_GT(h.fill_paced(A, 200), 9);
  EXPECT_GT(h.marked, 0);  // the careful resume's jump, marked LE
}

INSTANTIATE_TEST_SUITE_P(Laws, EnsembleIdlePing,
                         ::testing::Values(WindowLawKind::newreno, WindowLawKind::model),
                         [](const auto& info) {
                           return info.param == WindowLawKind::newreno ? "NewReno" : "Model";
                         });

}  // namespace
}  // namespace egw::congestion
