// The model law's startup and its first answers to loss
// (congestion/model_law.h), on synthetic rate samples.
#include <gtest/gtest.h>

#include "congestion/delivery_rate.h"
#include "congestion/model_law.h"

namespace egw::congestion {
namespace {

constexpr ByteCount kMss = 1200;
const WindowLawParams kParams{kMss, 10 * kMss, 2 * kMss};
const Instant t0 = instant_at(Duration{0});

RateSample sample(double rate_bytes_per_s, Duration rtt, std::uint64_t round, ByteCount acked,
                  bool app_limited = false) {
  RateSample rs;
  rs.valid = true;
  rs.delivery_rate_bytes_per_s = rate_bytes_per_s;
  rs.rtt = rtt;
  rs.round_start = true;
  rs.round_count = round;
  rs.acked_bytes = acked;
  rs.is_app_limited = app_limited;
  return rs;
}

// A transfer's first sample is a request's few bytes, app-limited (1 KB/s
// here): startup must still pace at its gain over the initial window, as
// slow start would send it, not at 2.77 x 1 KB/s.
TEST(ModelLawStartup, PacesAtLeastTheInitialWindowPerRttGain) {
  ModelLaw law(kParams);
  law.on_rate_sample(sample(1000, ms(60), 1, 100, /*app_limited=*/true), t0 + ms(60));
  law.on_ack(100, RttInfo{ms(60), ms(60), ms(60)}, t0 + ms(60), 1);
  ASSERT_EQ(law.state(), ModelLaw::State::startup);
  const double by_window = ModelLaw::kStartupPacingGain * 10 * kMss / 0.060;
  ASSERT_TRUE(law.pacing_rate_bytes_per_s());
  EXPECT_GE(*law.pacing_rate_bytes_per_s(), 0.99 * by_window);
  // Nor does the tiny model stop the growth of a window the transfer fills
  // (Linux BBR: until the initial window is delivered).
  law.on_rate_sample(sample(1000, ms(60), 1, 6 * kMss), t0 + ms(70));
  EXPECT_GE(law.cwnd_bytes(), 16 * kMss);
}

// A sender that stays app-limited (one packet per RTT) grows no window it
// does not use (RFC 7661): a page after it would burst into it.
TEST(ModelLawStartup, AnAppLimitedSenderGrowsNoWindowItDoesNotUse) {
  ModelLaw law(kParams);
  for (std::uint64_t i = 1; i <= 12; ++i) {
    law.on_rate_sample(sample(kMss / 0.060, ms(60), i, kMss, /*app_limited=*/true),
                       t0 + ms(60) * static_cast<std::int64_t>(i));
  }
  EXPECT_LE(law.cwnd_bytes(), 10 * kMss);
}

// Too much loss in startup bounds the flight at 0.7 x the flight, but not
// below 0.7 x the model's BDP: an overflow burst detected over a few rounds,
// each with a small flight, must not cut the bound to a fraction of the path.
TEST(ModelLawStartup, TooMuchLossBoundsTheFlightAtNoLessThanBetaBdp) {
  ModelLaw law(kParams);
  Instant now = t0;
  std::uint64_t round = 0;
  for (int i = 0; i < 6; ++i) {
    now += ms(60);
    law.on_rate_sample(sample(2.5e6 * (i + 1) / 6, ms(60), ++round, 20 * kMss), now);
  }
  const ByteCount bdp = law.bdp_bytes();
  ASSERT_GT(bdp, 100 * kMss);
  // 10 of 20 packets lost with 20 packets in flight: far above 2 %.
  law.on_packets_lost(10 * kMss, 20 * kMss, 20 * kMss, now);
  EXPECT_NE(law.inflight_hi_bytes(), kInfiniteSsthresh);
  EXPECT_GE(law.inflight_hi_bytes(), static_cast<ByteCount>(ModelLaw::kBeta * 0.99 * bdp));
}

}  // namespace
}  // namespace egw::congestion
