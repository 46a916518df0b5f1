#include "congestion/careful_resume.h"

#include <gtest/gtest.h>

#include "congestion/window_law.h"
#include "tests/congestion/path_state_builder.h"

namespace egw::congestion {
namespace {

PathState saved(ByteCount cwnd, ByteCount ssthresh) {
  return testing::path_state(cwnd, ssthresh);
}

TEST(CarefulResume, JumpIsHalfTheSavedWindow) {
  CarefulResume cr(saved(48000, 30000), 12000);
  EXPECT_TRUE(cr.active());
  EXPECT_EQ(cr.jump_bytes(), 24000u);  // 48000 / 2
  EXPECT_TRUE(cr.sending_unvalidated());
  EXPECT_EQ(cr.pacing_period(), ms(100));
}

TEST(CarefulResume, NoJumpWhenHalfIsNotAboveTheInitialWindow) {
  CarefulResume cr(saved(20000, 30000), 12000);  // 10000 <= 12000
  EXPECT_FALSE(cr.active());
  EXPECT_EQ(cr.phase(), CarefulResume::Phase::inactive);
}

TEST(CarefulResume, ValidatedWhenTheWholeJumpIsAcked) {
  CarefulResume cr(saved(48000, 30000), 12000);
  for (PacketNumber n = 1; n <= 20; ++n) cr.on_sent(n, 1200);  // 20 * 1200 = 24000
  EXPECT_FALSE(cr.sending_unvalidated());
  EXPECT_FALSE(cr.on_acked(12000, PacketNumber{11}));  // 11..20 outstanding
  auto done = cr.on_acked(12000, std::nullopt);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->cwnd_bytes, 24000u);  // max(jump 24000, acked 24000)
  EXPECT_EQ(done->ssthresh_bytes, 30000u);
  EXPECT_EQ(cr.phase(), CarefulResume::Phase::validated);
}

TEST(CarefulResume, LossFallsBackToAFreshFlow) {
  CarefulResume cr(saved(48000, 30000), 12000);
  cr.on_sent(1, 1200);
  auto back = cr.on_lost();
  ASSERT_TRUE(back);
  EXPECT_EQ(back->cwnd_bytes, 12000u);
  EXPECT_EQ(back->ssthresh_bytes, kInfiniteSsthresh);  // no penalty
  EXPECT_FALSE(cr.active());
  EXPECT_FALSE(cr.on_lost());  // only once
}

TEST(CarefulResume, AppLimitedValidatesOnlyWhatWasAcked) {
  CarefulResume cr(saved(48000, 30000), 12000);
  for (PacketNumber n = 1; n <= 15; ++n) cr.on_sent(n, 1200);  // 18000 of 24000
  auto done = cr.on_acked(18000, std::nullopt);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->cwnd_bytes, 18000u);  // max(initial 12000, acked 18000)
}

}  // namespace
}  // namespace egw::congestion
