// The model window law (congestion/model_law.h) on a packet-level path
// (model_path_sim.h) and on synthetic rate samples.
#include "congestion/model_law.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "congestion/cubic.h"
#include "congestion/delivery_rate.h"
#include "congestion/newreno.h"
#include "model_path_sim.h"
#include "tests/support/quantile.h"

namespace egw::congestion {
namespace {

using testing::PathConfig;
using testing::PathSim;

constexpr ByteCount kMss = 1200;
const WindowLawParams kParams{kMss, 10 * kMss, 2 * kMss};
const Instant t0 = instant_at(Duration{0});

ModelLaw& model_of(PathSim& sim, std::size_t i) { return static_cast<ModelLaw&>(*sim.flow(i).law); }

// 20 Mbit/s, 60 ms, 600-packet buffer (issue 20's link): startup finds the
// rate within a few round trips, drains, and the link then stays full with
// a queue of a few milliseconds.
TEST(ModelLawTest, StartupFindsTheRateThenKeepsTheLinkFullWithAShortQueue) {
  PathSim sim(PathConfig{});
  sim.add_flow(std::make_unique<ModelLaw>(kParams));
  sim.run(t0 + ms(2000));
  const ModelLaw& law = model_of(sim, 0);
  EXPECT_EQ(law.state(), ModelLaw::State::probe_bw);
  EXPECT_NEAR(law.bw_bytes_per_s(), 20e6 / 8, 20e6 / 8 * 0.1);
  ASSERT_TRUE(law.min_rtt());
  EXPECT_LT(*law.min_rtt(), ms(62));
  sim.reset_counters();
  sim.run(t0 + ms(12000), t0 + ms(2000));
  EXPECT_GE(sim.utilisation(0, ms(10000)), 0.9);
  EXPECT_LE(test_support::quantile(sim.queue_samples(), 0.99), ms(20));
  EXPECT_FALSE(law.competitive());
}

// Random loss of 1 % (and 0.2 %): no multiplicative cut, the link stays
// full, no inflight bound is set. NewReno on the same path for contrast.
TEST(ModelLawTest, RandomLossUpToOnePercentCostsNothing) {
  for (const double loss : {0.002, 0.01}) {
    PathConfig path;
    path.random_loss = loss;
    PathSim sim(path);
    sim.add_flow(std::make_unique<ModelLaw>(kParams));
    sim.run(t0 + ms(12000), t0 + ms(2000));
    EXPECT_GE(sim.utilisation(0, ms(10000)), 0.9) << loss;
    EXPECT_EQ(model_of(sim, 0).inflight_hi_bytes(), kInfiniteSsthresh) << loss;

    PathSim reno(path);
    reno.add_flow(std::make_unique<NewReno>(kParams), false);
    reno.run(t0 + ms(12000), t0 + ms(2000));
    EXPECT_LT(reno.utilisation(0, ms(10000)), 0.9) << loss;  // Mathis' ceiling
  }
}

// Synthetic: 1 % of each round lost leaves cwnd and the pacing rate alone;
// 10 % in a round bounds the flight at 0.7 of what it was.
TEST(ModelLawTest, OnlyLossAboveTwoPercentBoundsTheFlight) {
  // Warm up on the path: probe_bw at 2.5 MB/s.
  PathSim sim(PathConfig{});
  sim.add_flow(std::make_unique<ModelLaw>(kParams));
  sim.run(t0 + ms(3000));
  ModelLaw& m = model_of(sim, 0);
  ASSERT_EQ(m.state(), ModelLaw::State::probe_bw);
  const ByteCount cwnd = m.cwnd_bytes();
  const double pacing = *m.pacing_rate_bytes_per_s();
  const ByteCount flight = m.bdp_bytes();
  Instant now = sim.now();
  // One round of 125 packets with 1 lost (0.8 %), twice.
  for (int round = 0; round < 2; ++round) {
    m.on_packets_lost(kMss, flight, flight, now);
    EXPECT_EQ(m.inflight_hi_bytes(), kInfiniteSsthresh);
  }
  EXPECT_EQ(m.cwnd_bytes(), cwnd);
  EXPECT_EQ(*m.pacing_rate_bytes_per_s(), pacing);
  // 13 losses in the round (10 %): too many.
  for (int i = 0; i < 11; ++i) m.on_packets_lost(kMss, flight, flight, now);
  EXPECT_LE(m.inflight_hi_bytes(), static_cast<ByteCount>(0.7 * static_cast<double>(flight)) + 1);
  EXPECT_LE(m.cwnd_bytes(), m.inflight_hi_bytes());
}

// Too much loss found a round after an UP probe, when DOWN has already
// taken the flight back: the bound is beta times the flight the lost packets
// were sent into (BBRv3's tx_in_flight), not the smaller flight at detection.
TEST(ModelLawTest, TooMuchLossIsAnsweredFromTheFlightItWasSentInto) {
  PathSim sim(PathConfig{});
  sim.add_flow(std::make_unique<ModelLaw>(kParams));
  sim.run(t0 + ms(3000));
  ModelLaw& m = model_of(sim, 0);
  ASSERT_EQ(m.state(), ModelLaw::State::probe_bw);
  const ByteCount bdp = m.bdp_bytes();
  const ByteCount probed = bdp + bdp / 4;  // UP's flight
  const ByteCount now_in_flight = bdp * 9 / 10;  // after DOWN
  for (int i = 0; i < 13; ++i) m.on_packets_lost(kMss, now_in_flight, probed, sim.now());
  const auto expected = static_cast<ByteCount>(0.7 * static_cast<double>(probed));
  EXPECT_GE(m.inflight_hi_bytes(), expected - kMss);
  EXPECT_LE(m.inflight_hi_bytes(), expected + kMss);
}

// A shallow buffer (1/4 BDP) and a path that overflows: the law keeps the
// link busy without piling losses (the bound), and an RTO collapses cwnd.
TEST(ModelLawTest, RtoCollapsesTheWindow) {
  ModelLaw law(kParams);
  law.set_state(100 * kMss, kInfiniteSsthresh);
  law.on_rto(100 * kMss, 1);
  EXPECT_EQ(law.cwnd_bytes(), kMss);
}

// min_rtt is refreshed by the drained DOWN phases: no ProbeRTT in 15 s.
// When the path's RTT grows (a route change) no sample confirms it any
// more. By more than half of min_rtt (60 -> 100 or 200 ms; the standing
// threshold, half since a CUBIC flow in a one-BDP buffer keeps less than
// one min_rtt) it looks like someone else's standing queue (known limit,
// docs): the law competes
// (a CUBIC window) until the competitive window of min_rtt (60 s) ends, then
// takes the RTT as it is and returns to the model, whose loss bound (beta
// times the flight the lost packets were sent into) drains the queue CUBIC
// left within ~20 s more.
TEST(ModelLawTest, MinRttFollowsARouteChange) {
  struct Case {
    Duration rtt;
    bool competes;
    Duration settled;  // since the change
  };
  for (const Case c : {Case{ms(100), true, ms(90000)}, Case{ms(200), true, ms(90000)}}) {
    SCOPED_TRACE(c.rtt.count());
    PathSim sim(PathConfig{});
    sim.add_flow(std::make_unique<ModelLaw>(kParams));
    sim.run(t0 + ms(15000));
    ModelLaw& law = model_of(sim, 0);
    ASSERT_TRUE(law.min_rtt());
    EXPECT_LT(*law.min_rtt(), ms(62));
    EXPECT_FALSE(law.competitive());
    sim.set_base_rtt(c.rtt);
    bool competed = false;
    for (Instant t = t0 + ms(15500); t <= t0 + ms(15000) + c.settled; t += ms(500)) {
      sim.run(t);
      competed = competed || law.competitive();
    }
    EXPECT_EQ(competed, c.competes);
    ASSERT_TRUE(law.min_rtt());
    EXPECT_GE(*law.min_rtt(), c.rtt);
    EXPECT_LT(*law.min_rtt(), c.rtt + c.rtt / 10);
    EXPECT_FALSE(law.competitive());
    const Instant from = sim.now();
    sim.reset_counters();
    sim.run(from + ms(10000), from);
    EXPECT_GE(sim.utilisation(0, ms(10000)), 0.9);
  }
}

// Without competition, a steady path keeps its min_rtt without ProbeRTT;
// with nothing confirming it for 10 s (a sender that always keeps a queue
// cannot happen here, so: synthetic samples), ProbeRTT runs.
TEST(ModelLawTest, ProbeRttWhenNoSampleConfirmsMinRttFor10s) {
  PathSim sim(PathConfig{});
  sim.add_flow(std::make_unique<ModelLaw>(kParams));
  sim.run(t0 + ms(3000));
  ModelLaw& law = model_of(sim, 0);
  ASSERT_EQ(law.state(), ModelLaw::State::probe_bw);
  Instant now = sim.now();
  const Instant end = now + ms(10500);
  std::uint64_t round = 1000;
  bool probed = false;
  while (now < end && !probed) {
    // Rounds of 70 ms samples (10 ms above min_rtt): a 10 ms standing queue.
    RateSample rs;
    rs.valid = true;
    rs.delivery_rate_bytes_per_s = 2.5e6;
    rs.rtt = ms(70);
    rs.round_start = true;
    rs.round_count = ++round;
    rs.acked_bytes = kMss;
    rs.prior_in_flight = law.bdp_bytes();
    law.on_rate_sample(rs, now);
    probed = law.state() == ModelLaw::State::probe_rtt;
    now += ms(70);
  }
  EXPECT_TRUE(probed);
  EXPECT_GE(now - (end - ms(10500)), ms(9000));
}

// A 25-packet buffer with 0.5 % and 1 % random loss: startup's overshoot
// loses a burst, which bounds the flight once (0.7 x); the random losses of
// the next rounds must not cut it again and again on that old burst (the
// WAN lab's branch went 122 -> 17 KB, 0.7^5, and kept 16-42 % of the link).
TEST(ModelLawTest, AnOverflowBurstBoundsTheFlightOnce) {
  for (const double loss : {0.005, 0.01}) {
    PathConfig path;
    path.buffer_packets = 25;
    path.random_loss = loss;
    PathSim sim(path);
    sim.add_flow(std::make_unique<ModelLaw>(kParams));
    sim.run(t0 + ms(12000), t0 + ms(2000));
    EXPECT_GE(sim.utilisation(0, ms(10000)), 0.85) << loss;
  }
}

// The link's rate quadruples under a settled model (5 -> 20 Mbit/s: a
// reverse-path queue that had ended startup early, or someone else's
// traffic that ended): an UP probe that takes all it asked for probes again
// at once, and the link is full within a second or two, not after 20 % per
// 2-3 s cycle (~8 cycles, ~20 s), with a short queue meanwhile. The acks
// also come 6 ms later (the queue of a download in their path, as in the
// WAN lab): UP's flight then reaches 1.25 BDP in its first round, before
// its samples show the growth, which only the round after it sees.
TEST(ModelLawTest, AProbeThatFindsRoomProbesAgain) {
  PathConfig path;
  path.rate_bytes_per_s = 5e6 / 8;
  PathSim sim(path);
  sim.add_flow(std::make_unique<ModelLaw>(kParams));
  sim.run(t0 + ms(4000));
  const ModelLaw& law = model_of(sim, 0);
  ASSERT_EQ(law.state(), ModelLaw::State::probe_bw);
  ASSERT_EQ(law.probe_extensions(), 0u);
  sim.set_rate(20e6 / 8);
  sim.set_base_rtt(ms(66));
  sim.reset_counters();
  sim.run(t0 + ms(10000));
  EXPECT_GE(law.probe_extensions(), 3u);
  EXPECT_GE(law.bw_bytes_per_s(), 0.9 * 20e6 / 8);
  EXPECT_LE(test_support::quantile(sim.queue_samples(), 0.99), ms(20));
  sim.reset_counters();
  sim.run(t0 + ms(14000), t0 + ms(10000));
  EXPECT_GE(sim.utilisation(0, ms(4000)), 0.9);
  EXPECT_LE(test_support::quantile(sim.queue_samples(), 0.99), ms(20));
}

// bw above the link (here the link drops from 25 to 20 Mbit/s; in the
// simulator's loss sweep a startup read 24.3 on 20 Mbit/s from compressed
// acks): DOWN at 0.9 bw cannot drain the queue the wider window keeps, and
// the model takes what DOWN delivered, not after the max filter's two
// cycles (4-6 s of ~20 ms standing queue, in the other direction's ACK
// path).
TEST(ModelLawTest, ADownThatCannotDrainCorrectsAnOverestimatedBw) {
  PathConfig path;
  path.rate_bytes_per_s = 25e6 / 8;
  PathSim sim(path);
  sim.add_flow(std::make_unique<ModelLaw>(kParams));
  sim.run(t0 + ms(4000));
  const ModelLaw& law = model_of(sim, 0);
  ASSERT_EQ(law.state(), ModelLaw::State::probe_bw);
  ASSERT_GE(law.bw_bytes_per_s(), 0.95 * 25e6 / 8);
  sim.set_rate(20e6 / 8);
  sim.run(t0 + ms(7500));
  EXPECT_GE(law.bw_corrections(), 1u);
  EXPECT_LE(law.bw_bytes_per_s(), 1.1 * 20e6 / 8);
  EXPECT_FALSE(law.competitive());
  sim.reset_counters();
  sim.run(t0 + ms(9500), t0 + ms(7500));
  EXPECT_GE(sim.utilisation(0, ms(2000)), 0.9);
  EXPECT_LE(test_support::quantile(sim.queue_samples(), 0.99), ms(12));
}

// A sub-ms path (800 Mbit/s, 0.2 ms: the gateways on one LAN, or the peer
// gateway's CPU as the bottleneck): the queue target is 2 min RTTs, at
// least 0.25 ms, not 5 ms (= 25 round trips that a request beside a bulk
// transfer waits behind, issue 22), and the link stays full. A 60 ms path
// keeps the 5 ms.
TEST(ModelLawTest, TheQueueTargetIsAFewMinRttsOnASubMillisecondPath) {
  PathConfig path;
  path.rate_bytes_per_s = 100e6;
  path.base_rtt = us(200);
  path.buffer_packets = 10'000;
  PathSim sim(path);
  sim.add_flow(std::make_unique<ModelLaw>(kParams));
  sim.run(t0 + ms(1000));
  const ModelLaw& law = model_of(sim, 0);
  ASSERT_EQ(law.state(), ModelLaw::State::probe_bw);
  ASSERT_TRUE(law.min_rtt());
  EXPECT_EQ(law.queue_target_delay(), std::max<Duration>(2 * *law.min_rtt(), ModelLaw::kQueueTargetFloor));
  EXPECT_LE(static_cast<double>(law.queue_target_bytes()), 1.01 * law.bw_bytes_per_s() * 500e-6);
  sim.reset_counters();
  sim.run(t0 + ms(3000), t0 + ms(1000));
  EXPECT_GE(sim.utilisation(0, ms(2000)), 0.9);

  PathSim wan(PathConfig{});
  wan.add_flow(std::make_unique<ModelLaw>(kParams));
  wan.run(t0 + ms(2000));
  EXPECT_EQ(model_of(wan, 0).queue_target_delay(), ModelLaw::kQueueTarget);
}

// A peer that decimates its ACKs (tunnel/ack_tracker.h) holds up to a
// quarter RTT of packets. On a slow link the queue target is a few packets,
// so the window (BDP + target) must also hold the ACK's stride, or the
// sender stalls until each stretch ACK comes: 4 Mbit/s, 60 ms (the WAN lab's
// asymmetric downlink), an ACK per 8 packets, within 15 ms. Every packet
// acknowledged: utilisation 0.992; an ACK per 8: 0.990 (0.939 without
// the allowance, the window 5 KB smaller).
TEST(ModelLawTest, TheWindowHoldsThePeersAckStride) {
  for (const std::uint32_t every : {1u, 8u}) {
    PathConfig path;
    path.rate_bytes_per_s = 4e6 / 8;
    path.buffer_packets = 100;
    path.ack_every_packets = every;
    PathSim sim(path);
    sim.add_flow(std::make_unique<ModelLaw>(kParams));
    sim.run(t0 + ms(5000));
    sim.reset_counters();
    sim.run(t0 + ms(25'000), t0 + ms(5000));
    const ModelLaw& law = model_of(sim, 0);
    const double utilisation = sim.utilisation(0, ms(20'000));
    std::printf("an ACK per %u packets: utilisation %.3f, cwnd %llu B, BDP %llu B\n", every, utilisation,
                static_cast<unsigned long long>(law.cwnd_bytes()), static_cast<unsigned long long>(law.bdp_bytes()));
    EXPECT_GE(utilisation, 0.97) << every;  // 0.990; without the allowance 0.939
    if (every == 1) {
      EXPECT_LT(law.cwnd_bytes(), law.bdp_bytes() + 5 * kMss);  // no stride, no allowance
    }
  }
}

// Long fat paths: 100 Mbit/s at 100 ms, and a geostationary 10 Mbit/s at
// 600 ms, each filled by one sender.
TEST(ModelLawTest, FillsLongFatPaths) {
  struct Case {
    double rate;
    Duration rtt;
    std::size_t buffer;
  };
  for (const Case c : {Case{100e6 / 8, ms(100), 1000}, Case{10e6 / 8, ms(600), 700}}) {
    PathConfig path;
    path.rate_bytes_per_s = c.rate;
    path.base_rtt = c.rtt;
    path.buffer_packets = c.buffer;
    PathSim sim(path);
    sim.add_flow(std::make_unique<ModelLaw>(kParams));
    const Duration warmup = 15 * c.rtt;
    sim.run(t0 + warmup + ms(10000), t0 + warmup);
    EXPECT_GE(sim.utilisation(0, ms(10000)), 0.9) << c.rate;
  }
}

// Beside a CUBIC flow that fills a deep buffer the model sees a standing
// queue it did not make, competes as one CUBIC flow, and gets a fair share;
// when the CUBIC flow ends it goes back to the model. Unpaced: this toy
// path paces a flow at the law's rate in every state, the model's too,
// where the domain's pacing and jitter differ (paced here, 1.47x and a
// min_rtt of 90 ms; the competing window's own pacing is in
// CompetingPacesTheWindowAfterSlowStart). Without competing the model got
// 0.10x here. The goal's 0.5x-2x is asserted through the tunnel in
// ScenarioModelLaw.SharesWithCubicFlows; this toy path (no jitter, one ack
// per packet) gives 0.31x, so the bound here is looser.
TEST(ModelLawTest, CompetesWithACubicFlowThenReturnsToTheModel) {
  PathSim sim(PathConfig{});
  sim.add_flow(std::make_unique<ModelLaw>(kParams), false);
  sim.add_flow(std::make_unique<Cubic>(kParams), false);
  sim.run(t0 + ms(40000), t0 + ms(20000));
  ModelLaw& law = model_of(sim, 0);
  EXPECT_TRUE(law.competitive());
  ASSERT_TRUE(law.min_rtt());
  EXPECT_LT(*law.min_rtt(), ms(62));  // no ProbeRTT took the other queue for the path
  const double share = sim.utilisation(0, ms(20000)) / sim.utilisation(1, ms(20000));
  EXPECT_GE(share, 0.25);
  EXPECT_LE(share, 4.0);
  sim.flow(1).stopped = true;
  sim.run(t0 + ms(60000));
  EXPECT_FALSE(law.competitive());
}

// Competing, the embedded CUBIC's slow start goes by the ACK clock (a flow
// that joins a buffer CUBIC keeps full takes its share in that burst); after
// its first loss the window is paced at 1.25 x cwnd/srtt, so ACKs that come
// back in a burst (a queue in the ACK path that drains) no longer release
// the window at once (ModelLaw::competitive_pacing_rate).
TEST(ModelLawTest, CompetingPacesTheWindowAfterSlowStart) {
  PathSim sim(PathConfig{});
  sim.add_flow(std::make_unique<ModelLaw>(kParams), false);
  sim.add_flow(std::make_unique<Cubic>(kParams), false);
  const ModelLaw& law = model_of(sim, 0);
  int competing = 0;
  int paced = 0;
  int exact = 0;
  for (Instant t = t0 + ms(10); t < t0 + ms(40000); t += ms(10)) {
    sim.run(t);
    if (!law.competitive()) continue;
    const std::optional<double> rate = law.pacing_rate_bytes_per_s();
    if (++competing == 1) {
      EXPECT_FALSE(rate) << "slow start from the flight";
    }
    if (!rate) continue;
    ++paced;
    // The law's srtt is the one of its last on_ack (this path gives none in
    // recovery), so a few samples are off by the RTT's move since.
    const double window_rate = static_cast<double>(law.cwnd_bytes()) / to_seconds(sim.flow(0).srtt);
    if (std::abs(*rate - 1.25 * window_rate) <= 0.02 * window_rate) ++exact;
    EXPECT_GE(*rate, 1.0 * window_rate);
    EXPECT_LE(*rate, 1.5 * window_rate);
  }
  EXPECT_GT(competing, 100);
  EXPECT_GT(paced, competing / 2);  // CUBIC's slow start ends at its first loss
  EXPECT_GE(exact, paced * 9 / 10);
}

}  // namespace
}  // namespace egw::congestion
