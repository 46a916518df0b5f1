#include "congestion/recent_max_rtt.h"

#include <gtest/gtest.h>

namespace egw::congestion {
namespace {

TEST(RecentMaxRtt, HoldsTheLargestSampleForOneToTwoRounds) {
  RecentMaxRtt m;
  EXPECT_EQ(m.get(), Duration{0});
  const Duration round = ms(100);
  m.on_sample(instant_at(ms(0)), ms(180), round);  // a queue
  m.on_sample(instant_at(ms(50)), ms(100), round);
  EXPECT_EQ(m.get(), ms(180));
  m.on_sample(instant_at(ms(120)), ms(101), round);  // next bucket: the last one still counts
  EXPECT_EQ(m.get(), ms(180));
  m.on_sample(instant_at(ms(230)), ms(102), round);  // two rounds on: the queue is forgotten
  EXPECT_EQ(m.get(), ms(102));
}

TEST(RecentMaxRtt, ASilenceForgetsWhatCameBefore) {
  RecentMaxRtt m;
  m.on_sample(instant_at(ms(0)), ms(300), ms(100));
  m.on_sample(instant_at(ms(10'000)), ms(100), ms(100));
  EXPECT_EQ(m.get(), ms(100));
}

}  // namespace
}  // namespace egw::congestion
