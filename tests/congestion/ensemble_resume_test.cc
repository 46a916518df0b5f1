// Resuming from a cached PathState (TCP fast start, careful resume); the state
// machine is drawn in congestion/careful_resume.h.
#include <gtest/gtest.h>

#include "congestion/ensemble.h"
#include "congestion/pacer.h"
#include "congestion/window_law.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::kMss;
using testing::numbers;
using testing::test_config;

constexpr MemberId A = 1;

PathState cached() { return testing::cached_path(); }

// Sends the unvalidated window as fast as the pacer allows; checks marking.
int send_unvalidated_window(Harness& h) {
  int sent = 0;
  while (h.ensemble.low_priority()) {
    if (auto r = h.ensemble.next_pacing_release(h.now)) h.now = *r;
    EXPECT_TRUE(h.ensemble.can_send(A, h.now));
    h.send(A);
    ++sent;
    EXPECT_LE(h.flight(), 24000u);  // never more than half the saved cwnd
    if (sent > 100) break;
  }
  return sent;
}

TEST(EnsembleResume, StartsWithHalfTheCachedWindowMarkedLowPriority) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  const auto st = h.stats();
  EXPECT_TRUE(st.resumed);
  EXPECT_EQ(st.cwnd_bytes, 24000u);  // 48000 / 2
  EXPECT_EQ(st.srtt, ms(100));       // seeded: no 333 ms guess
  EXPECT_EQ(st.min_rtt, ms(90));
  EXPECT_TRUE(h.ensemble.low_priority());
}

TEST(EnsembleResume, UnvalidatedWindowIsPacedOverOneSrtt) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  const Instant start = h.now;
  EXPECT_EQ(h.fill(A), 2);  // one burst
  const auto release = h.ensemble.next_pacing_release(h.now);
  ASSERT_TRUE(release);
  // 20 packets in bursts of 2 over SRTT 100 ms: a burst every 10 ms.
  EXPECT_EQ(*release, h.now + burst_interval_for(24000, ms(100), 2, kMss));
  EXPECT_EQ(*release, h.now + ms(10));
  EXPECT_EQ(send_unvalidated_window(h), 18);  // 20 in all
  EXPECT_EQ(h.now, start + ms(90));           // the 10th burst at 90 ms < SRTT
  EXPECT_FALSE(h.ensemble.low_priority());    // the jump is used up
  EXPECT_FALSE(h.ensemble.can_send(A, h.now));  // and the window is full
}

TEST(EnsembleResume, ValidatedWhenTheJumpIsAckedWithoutLoss) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  ASSERT_EQ(send_unvalidated_window(h), 20);
  h.now += ms(100);
  h.ack_range(1, 10);
  EXPECT_EQ(h.cwnd(), 24000u);  // acks do not grow an unvalidated window
  h.ack_range(11, 20);
  const auto st = h.stats();
  EXPECT_EQ(st.cwnd_bytes, 24000u);       // max(jump 24000, acked 24000)
  EXPECT_EQ(st.ssthresh_bytes, 30000u);   // the saved ssthresh
  EXPECT_EQ(st.loss_rounds, 0u);
  EXPECT_FALSE(h.ensemble.low_priority());
  // Normal operation: slow start up to the saved ssthresh, then CA.
  EXPECT_EQ(h.fill(A), 20);
  h.now += ms(100);
  h.ack_range(21, 40);
  // 24000 + 6000 reaches ssthresh 30000; the other 18000 count towards CA,
  // which adds 1200 only once a full 30000 has been acked.
  EXPECT_EQ(h.cwnd(), 30000u);
  EXPECT_EQ(h.stats().ssthresh_bytes, 30000u);
}

TEST(EnsembleResume, LossFallsBackToSlowStartWithoutPenalty) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  ASSERT_EQ(send_unvalidated_window(h), 20);
  h.now += ms(100);
  const auto out = h.ack_range(5, 20);
  EXPECT_EQ(numbers(out.lost), (std::vector<PacketNumber>{1, 2, 3, 4}));
  const auto st = h.stats();
  EXPECT_EQ(st.cwnd_bytes, 12000u);                 // a fresh flow's initial window
  EXPECT_EQ(st.ssthresh_bytes, kInfiniteSsthresh);  // no decrease charged
  EXPECT_EQ(st.loss_rounds, 0u);
  EXPECT_EQ(st.packets_lost, 4u);
  EXPECT_GT(st.srtt, ms(0));
  EXPECT_LE(st.srtt, ms(110));  // RTT estimates kept (seeded 100 ms, samples ~10..100 ms)
  EXPECT_FALSE(h.ensemble.low_priority());
  // Slow start from there: a full window acked doubles it.
  EXPECT_EQ(h.fill(A), 10);
  h.now += ms(100);
  h.ack_range(21, 30);
  EXPECT_EQ(h.cwnd(), 24000u);
}

TEST(EnsembleResume, SmallCachedWindowOnlySeedsTheRtt) {
  PathState small = cached();
  small.cwnd_bytes = 20000;  // half is 10000 < initial window 12000
  Harness h(test_config(), small);
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  EXPECT_EQ(h.cwnd(), 12000u);
  EXPECT_FALSE(h.ensemble.low_priority());
  EXPECT_EQ(h.stats().srtt, ms(100));
  EXPECT_EQ(h.fill(A), 10);  // not paced
}

TEST(EnsembleResume, DisabledResumeIsAFreshStart) {
  auto config = test_config();
  config.resume.enabled = false;
  Harness h(config, cached());
  EXPECT_EQ(h.cwnd(), 12000u);
  EXPECT_FALSE(h.stats().resumed);
  EXPECT_EQ(h.stats().srtt, ms(333));
}

TEST(EnsembleResume, SnapshotDoesNotSaveAnUnvalidatedJump) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  EXPECT_EQ(h.ensemble.snapshot(h.now).cwnd_bytes, 48000u);  // what we resumed from
  send_unvalidated_window(h);
  h.now += ms(100);
  h.ack_range(1, 20);
  EXPECT_EQ(h.ensemble.snapshot(h.now).cwnd_bytes, 24000u);  // validated knowledge
}

}  // namespace
}  // namespace egw::congestion
