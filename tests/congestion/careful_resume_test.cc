// Careful resume's phases (congestion/careful_resume.h): reconnaissance with
// the RTT check, the unvalidated jump, validation and fallback.
#include "congestion/careful_resume.h"

#include <gtest/gtest.h>

#include "congestion/window_law.h"
#include "tests/congestion/path_state_builder.h"

namespace egw::congestion {
namespace {

// saved min_rtt is 90 ms: the RTT check passes for samples in [45, 900] ms.
PathState saved(ByteCount cwnd, ByteCount ssthresh) {
  return testing::path_state(cwnd, ssthresh);
}

// A resume that passed the RTT check (100 ms sample) with cwnd 12000.
CarefulResume jumped(ByteCount cwnd, ByteCount ssthresh) {
  CarefulResume cr(saved(cwnd, ssthresh), 12000);
  EXPECT_TRUE(cr.on_rtt_sample(ms(100), 12000));
  return cr;
}

TEST(CarefulResume, StartsInReconnaissanceAndJumpsAfterTheRttCheck) {
  CarefulResume cr(saved(48000, 30000), 12000);
  EXPECT_TRUE(cr.reconnaissance());
  EXPECT_FALSE(cr.is_extra(12000, 1200));  // nothing beyond the initial window yet
  const auto jump = cr.on_rtt_sample(ms(100), 12000);
  ASSERT_TRUE(jump);
  EXPECT_EQ(jump->cwnd_bytes, 24000u);  // 48000 / 2
  EXPECT_EQ(jump->ssthresh_bytes, kInfiniteSsthresh);
  EXPECT_TRUE(cr.unvalidated());
  // The clocked window is what reconnaissance reached; beyond it, the extra.
  EXPECT_EQ(cr.clocked_window_bytes(), 12000u);
  EXPECT_FALSE(cr.is_extra(10800, 1200));
  EXPECT_TRUE(cr.is_extra(12000, 1200));
  EXPECT_EQ(cr.pacing_period(), ms(100));  // paced over the sample that passed
}

TEST(CarefulResume, RttCheckRejectsAChangedPath) {
  // draft 4.3: below half or above ten times the saved RTT (90 ms here).
  CarefulResume faster(saved(48000, 30000), 12000);
  EXPECT_FALSE(faster.on_rtt_sample(ms(44), 12000));
  EXPECT_EQ(faster.phase(), CarefulResume::Phase::inactive);
  CarefulResume slower(saved(48000, 30000), 12000);
  EXPECT_FALSE(slower.on_rtt_sample(ms(901), 12000));
  EXPECT_EQ(slower.phase(), CarefulResume::Phase::inactive);
  CarefulResume edge(saved(48000, 30000), 12000);
  EXPECT_TRUE(edge.on_rtt_sample(ms(900), 12000));
}

TEST(CarefulResume, NoJumpWhenSlowStartAlreadyGotThere) {
  CarefulResume cr(saved(48000, 30000), 12000);
  EXPECT_FALSE(cr.on_rtt_sample(ms(100), 24000));  // jump 24000 is not above cwnd 24000
  EXPECT_EQ(cr.phase(), CarefulResume::Phase::inactive);
}

TEST(CarefulResume, NoResumeWhenHalfIsNotAboveTheInitialWindow) {
  CarefulResume cr(saved(20000, 30000), 12000);  // 10000 <= 12000
  EXPECT_EQ(cr.phase(), CarefulResume::Phase::inactive);
}

TEST(CarefulResume, ValidatedWhenTheWholeUnvalidatedPartIsAcked) {
  CarefulResume cr = jumped(48000, 30000);
  // 10 packets on the ACK clock, then the extra 24000 - 12000 = 10 packets.
  for (PacketNumber n = 1; n <= 10; ++n) cr.on_sent(n, 1200, false);
  for (PacketNumber n = 11; n <= 20; ++n) cr.on_sent(n, 1200, true);
  EXPECT_FALSE(cr.is_extra(24000, 1200));  // the extra is used up
  EXPECT_FALSE(cr.on_acked(6000, PacketNumber{6}));  // 6..20 outstanding
  EXPECT_EQ(cr.clocked_window_bytes(), 18000u);       // slow start's growth
  auto done = cr.on_acked(18000, std::nullopt);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->cwnd_bytes, 24000u);  // the jump
  EXPECT_EQ(done->ssthresh_bytes, 30000u);
  EXPECT_EQ(cr.phase(), CarefulResume::Phase::validated);
}

TEST(CarefulResume, LossInTheUnvalidatedPhaseFallsBackToAFreshFlow) {
  CarefulResume cr = jumped(48000, 30000);
  cr.on_sent(1, 1200, false);
  auto back = cr.on_lost();
  ASSERT_TRUE(back);
  EXPECT_EQ(back->cwnd_bytes, 12000u);
  EXPECT_EQ(back->ssthresh_bytes, kInfiniteSsthresh);  // no penalty
  EXPECT_EQ(cr.phase(), CarefulResume::Phase::fallback);
  EXPECT_FALSE(cr.on_lost());  // only once
}

TEST(CarefulResume, LossInReconnaissanceEndsTheResumeWithNothingToUndo) {
  CarefulResume cr(saved(48000, 30000), 12000);
  EXPECT_FALSE(cr.on_lost());
  EXPECT_EQ(cr.phase(), CarefulResume::Phase::inactive);
  EXPECT_FALSE(cr.on_rtt_sample(ms(100), 12000));
}

TEST(CarefulResume, AppLimitedValidatesOnlyWhatWasAcked) {
  CarefulResume cr = jumped(48000, 30000);
  for (PacketNumber n = 1; n <= 5; ++n) cr.on_sent(n, 1200, false);  // no extra used
  auto done = cr.on_acked(6000, std::nullopt);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->cwnd_bytes, 18000u);  // the clocked window: 12000 + 6000 acked
}

}  // namespace
}  // namespace egw::congestion
