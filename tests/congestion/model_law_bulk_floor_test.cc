// The model law's queue target per bulk stream (issue 22): with two bulk
// streams or more, a sub-ms path's target is at least 64 KB per stream
// (capped at 5 ms of bw), so the peer gateway writes each stream in larger
// pieces; one bulk stream keeps the sub-ms target. And the ensemble's count
// of bulk streams, which the domain hands to the law.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "congestion/model_law.h"
#include "model_path_sim.h"
#include "tests/congestion/ensemble_test_helpers.h"

namespace egw::congestion::testing {
namespace {

const WindowLawParams kParams{kMss, 10 * kMss, 2 * kMss};
const Instant t0 = instant_at(Duration{0});

ModelLaw& model_of(PathSim& sim) { return static_cast<ModelLaw&>(*sim.flow(0).law); }

// 800 Mbit/s at 0.2 ms: the sub-ms target is 0.5 ms (~50 KB at bw).
PathSim sub_ms_path() {
  PathConfig path;
  path.rate_bytes_per_s = 100e6;
  path.base_rtt = us(200);
  path.buffer_packets = 10'000;
  return PathSim(path);
}

TEST(ModelLawBulkFloor, OneBulkStreamKeepsTheSubMillisecondTarget) {
  PathSim sim = sub_ms_path();
  sim.add_flow(std::make_unique<ModelLaw>(kParams));
  sim.run(t0 + ms(1000));
  ModelLaw& law = model_of(sim);
  ASSERT_EQ(law.state(), ModelLaw::State::probe_bw);
  const ByteCount before = law.queue_target_bytes();
  law.set_bulk_flows(1);
  EXPECT_EQ(law.queue_target_bytes(), before);
  EXPECT_LE(static_cast<double>(before), 1.01 * law.bw_bytes_per_s() * 500e-6);
}

TEST(ModelLawBulkFloor, SeveralBulkStreamsGetAFloorEachCappedAtFiveMs) {
  PathSim sim = sub_ms_path();
  sim.add_flow(std::make_unique<ModelLaw>(kParams));
  sim.run(t0 + ms(1000));
  ModelLaw& law = model_of(sim);
  ASSERT_EQ(law.state(), ModelLaw::State::probe_bw);
  const ByteCount sub_ms = law.queue_target_bytes();
  law.set_bulk_flows(4);
  EXPECT_EQ(law.queue_target_bytes(), 4 * ModelLaw::kQueueTargetPerBulkFlow);
  EXPECT_GT(law.queue_target_bytes(), 4 * sub_ms);
  law.set_bulk_flows(64);  // 4 MB: more than 5 ms at 100 MB/s
  const double five_ms = law.bw_bytes_per_s() * 5e-3;
  EXPECT_NEAR(static_cast<double>(law.queue_target_bytes()), five_ms, 1.0);
}

// The window follows: 8 bulk streams on the sub-ms path keep their 64 KB
// each in flight above the BDP while the link stays full.
TEST(ModelLawBulkFloor, TheWindowCarriesTheFloor) {
  PathSim sim = sub_ms_path();
  sim.add_flow(std::make_unique<ModelLaw>(kParams));
  sim.run(t0 + ms(1000));
  ModelLaw& law = model_of(sim);
  const ByteCount cwnd_one = law.cwnd_bytes();
  for (int i = 0; i < 1000; ++i) {  // one count per rate sample, as the domain calls it
    law.set_bulk_flows(8);
    sim.run(sim.now() + us(10));
  }
  ASSERT_EQ(law.bulk_flows(), 8u);
  EXPECT_GE(law.cwnd_bytes(), cwnd_one + 7 * ModelLaw::kQueueTargetPerBulkFlow / 2);
}

// A bulk stream has 4 packets or more in flight; a request's one packet
// does not count, and a stream whose flight is acked leaves the count.
TEST(EnsembleBulkMembers, CountsMembersWithSeveralPacketsInFlight) {
  EnsembleConfig config = test_config();
  config.law = WindowLawKind::model;
  Harness h(config);
  for (MemberId m : {1u, 2u, 3u}) h.ensemble.add_member(m, ContentClass::bulk, h.now);
  PacketNumber first = h.next_number;
  for (int i = 0; i < 4; ++i) h.send(1);
  for (int i = 0; i < 3; ++i) h.send(2);
  h.send(3, 100);
  EXPECT_EQ(h.stats().bulk_members, 1u);
  h.send(2);
  EXPECT_EQ(h.stats().bulk_members, 2u);
  h.now += us(200);
  h.ack_range(first, first);  // member 1 is down to 3 packets
  EXPECT_EQ(h.stats().bulk_members, 1u);
  h.ensemble.remove_member(2, h.now);
  EXPECT_EQ(h.stats().bulk_members, 0u);
}

// Through the ensemble: the domain hands the law the count before each rate
// sample. Rounds of 40 packets every 0.2 ms (240 MB/s): from one member the
// target stays sub-ms (2 min RTTs: 96 KB); from eight, 5 packets each, it
// is 64 KB per member.
ByteCount target_after_rounds(int members) {
  EnsembleConfig config = test_config();
  config.law = WindowLawKind::model;
  Harness h(config);
  for (MemberId m = 1; m <= 8; ++m) h.ensemble.add_member(m, ContentClass::bulk, h.now);
  for (int round = 0; round < 10; ++round) {
    const PacketNumber first = h.next_number;
    for (int i = 0; i < 40; ++i) h.send(static_cast<MemberId>(1 + i % members));
    h.now += us(200);
    h.ack_range(first, h.next_number - 1);
  }
  return h.stats().law.queue_target_bytes;
}

TEST(EnsembleBulkMembers, TheLawsTargetFollowsTheCount) {
  const ByteCount one = target_after_rounds(1);
  const ByteCount eight = target_after_rounds(8);
  EXPECT_LT(one, 128 * 1024u);
  EXPECT_EQ(eight, 8 * ModelLaw::kQueueTargetPerBulkFlow);
}

}  // namespace
}  // namespace egw::congestion::testing
