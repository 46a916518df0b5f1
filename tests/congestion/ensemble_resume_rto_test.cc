// A retransmission timeout while the resumed window is unvalidated (TCP fast
// start, seed 004 section 3.4.4, "slow start without penalty"): the cached
// state was stale, so the ensemble restarts like a fresh flow without the
// RTO's ssthresh cut; an RTO outside the resume phase keeps RFC 5681 3.1.
#include <gtest/gtest.h>

#include "congestion/ensemble.h"
#include "congestion/window_law.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion {
namespace {

using testing::Harness;
using testing::kMss;
using testing::pass_reconnaissance;
using testing::test_config;

constexpr MemberId A = 1;

PathState cached() { return testing::cached_path(); }

// Nothing answers: `probes_expected` tail probes go first (declaring nothing lost),
// then the RTO fires.
TimeoutOutcome fire_rto(Harness& h, std::uint32_t probes_expected) {
  for (std::uint32_t probes = 0;; ++probes) {
    const auto deadline = h.ensemble.next_timeout();
    EXPECT_TRUE(deadline);
    if (!deadline) return {};
    h.now = *deadline;
    TimeoutOutcome out = h.ensemble.on_timeout(h.now);
    if (out.rto_fired || probes == probes_expected) {
      EXPECT_EQ(probes, probes_expected);
      EXPECT_TRUE(out.rto_fired);
      return out;
    }
    EXPECT_TRUE(out.lost.empty());
    EXPECT_EQ(out.probes.size(), 1u);
  }
}

TEST(EnsembleResumeRto, TimeoutOfTheUnvalidatedWindowFallsBackWithoutPenalty) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  pass_reconnaissance(h, A);
  ASSERT_EQ(h.fill_paced(A), 40);  // 96000 / 2 / 1200: 20 clocked, 20 extra
  // Nothing comes back (every low-priority packet dropped, or a stale srtt):
  // no tail probe while unvalidated, the RTO's fallback at once.
  const auto out = fire_rto(h, 0);
  EXPECT_TRUE(out.rto_fired);
  EXPECT_EQ(out.lost.size(), 40u);
  const auto st = h.stats();
  EXPECT_EQ(st.rto_count, 1u);
  EXPECT_EQ(st.cwnd_bytes, 24000u);                 // what reconnaissance proved
  EXPECT_EQ(st.ssthresh_bytes, kInfiniteSsthresh);  // not FlightSize / 2 = 24000
  EXPECT_EQ(st.loss_rounds, 0u);
  EXPECT_FALSE(h.ensemble.low_priority());
  // Slow start from there: a full window acked doubles it.
  EXPECT_EQ(h.fill(A), 20);
  h.now += ms(100);
  h.ack_range(51, 70);
  EXPECT_EQ(h.cwnd(), 48000u);
}

TEST(EnsembleResumeRto, TimeoutAfterValidationIsAnOrdinaryRto) {
  Harness h(test_config(), cached());
  h.ensemble.add_member(A, ContentClass::bulk, h.now);
  pass_reconnaissance(h, A);
  ASSERT_EQ(h.fill_paced(A), 40);
  h.now += ms(100);
  h.ack_range(11, 50);  // validated: cwnd 48000, ssthresh 60000
  ASSERT_EQ(h.cwnd(), 48000u);
  ASSERT_EQ(h.fill(A), 40);
  const auto out = fire_rto(h, test_config().tail_probes);
  EXPECT_TRUE(out.rto_fired);
  // RFC 5681 3.1: ssthresh = max(FlightSize / 2, 2 MSS) = 48000 / 2, cwnd = 1 MSS.
  EXPECT_EQ(h.stats().ssthresh_bytes, 24000u);
  EXPECT_EQ(h.cwnd(), kMss);
}

}  // namespace
}  // namespace egw::congestion
