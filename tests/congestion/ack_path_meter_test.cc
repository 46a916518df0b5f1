// The ACK path's wait from the peer's ACK timestamps (congestion/ack_path_meter.h).
#include "congestion/ack_path_meter.h"

#include <gtest/gtest.h>

namespace egw::congestion {
namespace {

const Instant t0 = instant_at(std::chrono::seconds(100));
// The peer's clock runs 7 s behind ours: only differences count.
Duration stamp(Instant sent) { return sent.time_since_epoch() - std::chrono::seconds(7); }

// An ACK that left the peer at `sent` and waited `queue` on a 30 ms path.
std::optional<Duration> ack(AckPathMeter& m, Instant sent, Duration queue, std::optional<Duration> rtt_excess) {
  return m.on_ack(sent + ms(30) + queue, stamp(sent), rtt_excess);
}

TEST(AckPathMeterTest, TheWaitAboveTheEmptyPathIsTheExcess) {
  AckPathMeter m;
  EXPECT_EQ(ack(m, t0, ms(0), ms(50)), ms(0));
  EXPECT_EQ(ack(m, t0 + ms(10), ms(40), ms(50)), ms(40));
  EXPECT_EQ(ack(m, t0 + ms(20), ms(12), ms(50)), ms(12));
  // Bounded by the round trip's own excess over min RTT.
  EXPECT_EQ(ack(m, t0 + ms(30), ms(40), ms(25)), ms(25));
  // No RTT sample, no wait to report; the minimum still learns.
  EXPECT_EQ(ack(m, t0 + ms(40), ms(40), std::nullopt), std::nullopt);
}

TEST(AckPathMeterTest, TheMinimumSpansTwoBuckets) {
  AckPathMeter m;
  EXPECT_EQ(ack(m, t0, ms(0), ms(100)), ms(0));
  // A queue that never drains after it: read against the empty path for
  // 5-10 s, then it is the new minimum (the conservative error).
  Instant at = t0;
  std::optional<Duration> last;
  for (int i = 1; i <= 120; ++i) {
    at = t0 + ms(100 * i);
    last = ack(m, at, ms(40), ms(100));
    if (i == 90) {
      EXPECT_EQ(last, ms(40));  // 9 s: the empty path's bucket is the previous one
    }
  }
  EXPECT_EQ(last, ms(0));  // 12 s: both buckets saw only the queue
}

TEST(AckPathMeterTest, ANewEpochClaimsNoMoreThanTheRoundTripsExcess) {
  AckPathMeter m;
  EXPECT_EQ(ack(m, t0, ms(0), ms(10)), ms(0));
  // The peer restarted its clock 20 minutes earlier: every stamp is far
  // lower, the one-way delay far higher.
  const Instant later = t0 + ms(500);
  const auto restarted = m.on_ack(later + ms(30), stamp(later) - std::chrono::minutes(20), ms(8));
  EXPECT_EQ(restarted, ms(8));
  // A clock stepped forward only lowers the minimum: no wait at all.
  const Instant next = t0 + ms(600);
  EXPECT_EQ(m.on_ack(next + ms(30), stamp(next) + std::chrono::seconds(3), ms(8)), ms(0));
}

}  // namespace
}  // namespace egw::congestion
