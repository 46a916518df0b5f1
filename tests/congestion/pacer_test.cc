#include "congestion/pacer.h"

#include <gtest/gtest.h>

namespace egw::congestion {
namespace {

const Instant t0 = instant_at(ms(5'000));

TEST(Pacer, AlphaGrowsWithSrtt) {
  const PacingConfig config;  // alpha 1..2
  EXPECT_DOUBLE_EQ(efcm_alpha(config, ms(10)), 1.0);
  EXPECT_DOUBLE_EQ(efcm_alpha(config, ms(60)), 1.5);  // halfway from 20 to 100 ms
  EXPECT_DOUBLE_EQ(efcm_alpha(config, ms(300)), 2.0);
}

TEST(Pacer, EfcmIntervalIsAlphaSrttOverCwnd) {
  const PacingConfig config;
  // alpha(100 ms) = 2; cwnd = 24000 / 1200 = 20 segments: 2 * 100 ms / 20 = 10 ms
  EXPECT_EQ(efcm_burst_interval(config, ms(100), 24000, 1200), ms(10));
  // alpha(10 ms) = 1; 1 * 10 ms / 20 = 500 us
  EXPECT_EQ(efcm_burst_interval(config, ms(10), 24000, 1200), us(500));
}

TEST(Pacer, WindowOverAPeriod) {
  // 12000 bytes = 10 packets = 5 bursts of 2 over 100 ms: one burst per 20 ms
  EXPECT_EQ(burst_interval_for(12000, ms(100), 2, 1200), ms(20));
}

TEST(Pacer, AtMostTwoBackToBackThenSpaced) {
  Pacer pacer(2);
  const Duration dt = ms(10);
  EXPECT_TRUE(pacer.can_send(t0, dt));
  pacer.on_sent(t0, dt);
  EXPECT_TRUE(pacer.can_send(t0, dt));
  pacer.on_sent(t0, dt);
  EXPECT_FALSE(pacer.can_send(t0, dt));  // the burst of 2 is used
  EXPECT_EQ(pacer.next_release(t0, dt), t0 + ms(10));
  EXPECT_FALSE(pacer.can_send(t0 + ms(9), dt));
  EXPECT_TRUE(pacer.can_send(t0 + ms(10), dt));
}

TEST(Pacer, SendingAsFastAsAllowedNeverExceedsTheBurst) {
  Pacer pacer(2);
  const Duration dt = ms(10);
  Instant now = t0;
  std::vector<Instant> sends;
  while (sends.size() < 10) {
    now = pacer.next_release(now, dt);
    pacer.on_sent(now, dt);
    sends.push_back(now);
  }
  // 10 packets = 5 bursts at 0, 10, 20, 30, 40 ms.
  for (std::size_t i = 0; i < sends.size(); ++i) {
    EXPECT_EQ(sends[i], t0 + ms(10 * static_cast<std::int64_t>(i / 2))) << i;
  }
}

TEST(Pacer, IdleTimeIsNotBanked) {
  Pacer pacer(2);
  const Duration dt = ms(10);
  pacer.on_sent(t0, dt);
  pacer.on_sent(t0, dt);
  const Instant later = t0 + ms(1'000);  // long quiet: still only one burst
  pacer.on_sent(later, dt);
  pacer.on_sent(later, dt);
  EXPECT_FALSE(pacer.can_send(later, dt));
  pacer.reset();
  EXPECT_TRUE(pacer.can_send(later, dt));
}

}  // namespace
}  // namespace egw::congestion
