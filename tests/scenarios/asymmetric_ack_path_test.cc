// Scenario: full-links-asym in the simulator: 4 Mbit/s down, 1 Mbit/s up,
// 30 ms one way, 100-packet buffers, a download and an upload through one
// tunnel, both gateways on the model law. The download's ACKs cross the
// uplink's queue behind the upload, so that queue, the branch's own, sets
// the hub's round trip: it must stay near the law's target (model_law.h,
// the queue target's floor), and the hub measures that wait from the
// branch's ACK timestamps. Also the opt-in window over the ACK path
// (congestion/model_law_ack_path.cc), inferred towards an older peer. Queues are measured in bytes (the
// uplink's ACK-only packets are small). Deterministic (seeded); well under
// a second of CPU. EGW_TRACE=1 traces both laws every 250 ms
// (EGW_TRACE_STEP_MS=25 for finer steps).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/scenarios/asymmetric_line.h"
#include "tests/sim/scenario.h"

namespace egw::scenarios {
namespace {

using congestion::WindowLawKind;

struct AsymResult {
  double down = 0;  // goodput share of the downlink
  double up = 0;
  double down_queue_p99_ms = 0;  // the downlink's queue (bytes / rate) at each enqueue
  double up_queue_p99_ms = 0;
  Duration hub_ack_path{0};
  bool branch_decimating = false;  // at the end (ack_decimation_measured)
  bool hub_decimating = false;
};

double p99(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(0.99 * static_cast<double>(v.size() - 1))];
}

// EGW_TRACE=1: both gateways' law every 250 ms.
void trace(sim::Scenario& s, std::size_t pair, Duration t) {
  for (const bool hub : {true, false}) {
    const auto e = (hub ? s.server(pair) : s.client(pair)).connection().stats().ensemble;
    std::printf("%5.2f %s %-15s cwnd %6llu flight %6llu bw %5.2f pacing %5.2f Mbit/s min_rtt %3lld srtt %3lld "
                "ack path %3lld ms | ",
                to_seconds(t), hub ? "hub" : "branch", e.law.state, static_cast<unsigned long long>(e.cwnd_bytes),
                static_cast<unsigned long long>(e.bytes_in_flight), e.law.bottleneck_bytes_per_s * 8e-6,
                e.pacing_rate_bytes_per_s * 8e-6,
                static_cast<long long>(e.min_rtt.count() / 1000), static_cast<long long>(e.srtt.count() / 1000),
                static_cast<long long>(e.law.ack_path_delay.count() / 1000));
  }
  // The queues now, in time at each link's rate (the uplink's ACK-only
  // packets are small: counted in bytes, not packets).
  std::printf("queue down %3.0f up %3.0f ms\n", static_cast<double>(s.network().reverse().queue_bytes()) * 8 / 4e3,
              static_cast<double>(s.network().forward().queue_bytes()) * 8 / 1e3);
}

// `stamps`: both gateways stamp their ACKs (two current builds); false: a
// peer of session 33 or older.
// `measured`: the gateways' default `ack_decimation: auto` without max_rate.
AsymResult run_asym(double loss, std::uint64_t seed, bool ack_path_window, bool stamps = true,
                    bool measured = false) {
  sim::Scenario s(asymmetric_line(loss, seed, 1));
  sim::PairConfig pair_config;
  pair_config.law = WindowLawKind::model;
  pair_config.ack_timestamps = stamps;
  pair_config.customize = [ack_path_window, measured](tunnel::ConnectionConfig& c) {
    wide_receive_windows(c);
    c.ensemble.ack_path_window = ack_path_window;
    c.ack_decimation_measured = measured;
  };
  const std::size_t pair = s.add_pair(pair_config);
  const auto bulk = s.add_bulk_both_ways(pair, 64 << 20, instant_at(ms(10)));
  sim::BulkTransfer& download = bulk.download;
  sim::BulkTransfer& upload = bulk.upload;
  const Instant from = instant_at(ms(4'000));
  const Instant to = instant_at(ms(20'000));
  std::vector<double> down_queue_ms;
  std::vector<double> up_queue_ms;
  s.network().reverse().set_observer([&](const sim::LinkEvent& e) {
    if (e.kind == sim::LinkEvent::Kind::enqueue && e.time >= from) {
      down_queue_ms.push_back(static_cast<double>(e.queue_bytes) * 8 / 4e3);
    }
  });
  s.network().forward().set_observer([&](const sim::LinkEvent& e) {
    if (e.kind == sim::LinkEvent::Kind::enqueue && e.time >= from) {
      up_queue_ms.push_back(static_cast<double>(e.queue_bytes) * 8 / 1e3);
    }
  });
  if (std::getenv("EGW_TRACE")) {
    const char* step_env = std::getenv("EGW_TRACE_STEP_MS");
    const Duration step = ms(step_env ? std::atoi(step_env) : 250);
    for (Duration t = step; t < ms(20'000); t += step) {
      s.run_until(instant_at(t));
      trace(s, pair, t);
    }
  }
  s.run_until(to);
  s.network().reverse().set_observer({});
  s.network().forward().set_observer({});
  const auto share = [&](const sim::BulkTransfer& b, double bps) {
    const ByteCount bytes = b.bytes_delivered_by(to) - b.bytes_delivered_by(from);
    return static_cast<double>(bytes) * 8 / to_seconds(to - from) / bps;
  };
  AsymResult r{share(download, 4e6), share(upload, 1e6), p99(down_queue_ms), p99(up_queue_ms),
               s.server(pair).connection().stats().ensemble.law.ack_path_delay,
               s.client(pair).connection().stats().ack_decimating, s.server(pair).connection().stats().ack_decimating};
  std::printf("asymmetric, ack_path_window %d, stamps %d, measured decimation %d, %.1f %% loss, seed %llu: "
              "download %.0f %%, upload %.0f %%; queue p99 down %.0f ms, up %.0f ms; hub's ACK path %.0f ms; "
              "decimating: branch %d, hub %d\n",
              ack_path_window, stamps, measured, 100 * loss, static_cast<unsigned long long>(seed), 100 * r.down,
              100 * r.up, r.down_queue_p99_ms, r.up_queue_p99_ms, to_seconds(r.hub_ack_path) * 1e3,
              r.branch_decimating, r.hub_decimating);
  EXPECT_EQ(download.mismatches(), 0u);
  EXPECT_EQ(upload.mismatches(), 0u);
  return r;
}

const std::vector<std::pair<double, std::uint64_t>> kRuns{{0.0, 5}, {0.002, 5}, {0.002, 6}, {0.002, 7}, {0.002, 8}};

// The defaults between two current gateways: each stamps its ACKs, so the
// hub measures how long the download's ACKs wait behind the upload on the
// uplink (congestion/ack_path_meter.h): its window covers that wait, and
// its rate samples take the branch's receive clock. Before (the next test, an older peer): the
// window bw x min_rtt + target fell short of the stretched round trip, and
// the download got 80-88 % (83 % on average); the window over the measured
// wait alone (the sender's clock) read the downlink 12-19 % high from the
// bunched ACKs and kept 51-117 ms of queue on it, the upload 81-87 %.
// Both: download 92-93 %, upload 89 %, the downlink's p99 18 ms, the
// uplink's 38-39 ms, the hub's measured ACK path 21-33 ms.
TEST(ScenarioAsymmetricAckPath, StampedAcksKeepBothLinksFullAndTheQueuesShort) {
  double down = 0;
  const auto n = static_cast<double>(kRuns.size());
  for (const auto& [loss, seed] : kRuns) {
    const AsymResult r = run_asym(loss, seed, false);
    EXPECT_GT(r.hub_ack_path, ms(10)) << "loss " << loss << " seed " << seed;
    EXPECT_GE(r.down, 0.88) << "loss " << loss << " seed " << seed;
    EXPECT_GE(r.up, 0.86) << "loss " << loss << " seed " << seed;
    EXPECT_LE(r.up_queue_p99_ms, 45.0) << "loss " << loss << " seed " << seed;
    EXPECT_LE(r.down_queue_p99_ms, 25.0) << "loss " << loss << " seed " << seed;
    down += r.down / n;
  }
  EXPECT_GE(down, 0.90);
}

// Towards a peer that does not stamp ACKs (session 33 and older). The
// uplink's standing queue was the model law's own: the queue target's
// floor of 4 packets is 47 ms at 1 Mbit/s, and the branch's cwnd (bw x
// min_rtt + target) kept it in front of every ACK of the download (the
// queue's p99 51-62 ms, in bytes). The hub's window, bw x min_rtt + target,
// then fell short of its round trip, and its bw decayed cycle by cycle
// (cwnd-limited samples, UP probes that found no room): download 54-84 %,
// 65 % on average. With the floor at most 15 ms, at least the ACK clock's
// 2 packets (model_law.h): the uplink's p99 38-49 ms, the download 80-88 %
// (83 % on average), the upload 86-90 %. One packet gave the download
// 86-89 % here, but the WAN lab's upload lost 10-22 points.
TEST(ScenarioAsymmetricAckPath, WithoutStampsTheUplinksQueueStaysShort) {
  double down = 0;
  double up = 0;
  double up_queue_ms = 0;
  const auto n = static_cast<double>(kRuns.size());
  for (const auto& [loss, seed] : kRuns) {
    const AsymResult r = run_asym(loss, seed, false, /*stamps=*/false);
    EXPECT_EQ(r.hub_ack_path, Duration{0});
    EXPECT_GE(r.down, 0.78) << "loss " << loss << " seed " << seed;
    EXPECT_GE(r.up, 0.84) << "loss " << loss << " seed " << seed;
    EXPECT_LE(r.up_queue_p99_ms, 55.0) << "loss " << loss << " seed " << seed;
    EXPECT_LE(r.down_queue_p99_ms, 30.0) << "loss " << loss << " seed " << seed;
    down += r.down / n;
    up += r.up / n;
    up_queue_ms += r.up_queue_p99_ms / n;
  }
  EXPECT_GE(down, 0.82);
  EXPECT_GE(up, 0.86);
  EXPECT_LE(up_queue_ms, 45.0);
}

// The opt-in window over the ACK path (model_law_ack_path.cc). Before the
// floor's bound it lifted the download from 54-67 % to 75-90 % at the price
// of up to ~100 ms of queue on the downlink (ACK-compressed samples read
// bw above the link; seed 8 filled both buffers); with the uplink's queue
// shorter it gains little (80-84 %), and must cost nothing either. The
// bound catches a queue that fills the buffer (300 ms). A startup that ends on the upload's startup queue in
// its ACK path (startup's stretched-RTT rule) would show as a download
// near 30 %.
// Inferred only without stamps: measured, the option changes nothing.
TEST(ScenarioAsymmetricAckPath, AckPathWindowKeepsBothLinks) {
  for (const auto& [loss, seed] : kRuns) {
    const AsymResult on = run_asym(loss, seed, true, /*stamps=*/false);
    EXPECT_GE(on.down, 0.75) << "loss " << loss << " seed " << seed;
    EXPECT_GE(on.up, 0.82) << "loss " << loss << " seed " << seed;  // the upload keeps its link
    EXPECT_LE(on.down_queue_p99_ms, 120.0) << "loss " << loss << " seed " << seed;
  }
}

// `ack_decimation: auto` without max_rate (the gateways' default): the
// branch, whose ACKs for the download take ~11 % of its busy uplink,
// decimates them (AckShareMeter); the hub's ACKs for the upload are ~1 % of
// its downlink and it does not. In the simulator the undecimated upload
// already had 89 % (its ACK-only datagrams are smaller than the lab's); the
// WAN lab's gain is in BENCHMARKS.md "Session 40".
TEST(ScenarioAsymmetricAckPath, TheBranchDecimatesWhereItsAcksCostItsUplink) {
  for (const auto& [loss, seed] : kRuns) {
    const AsymResult off = run_asym(loss, seed, false);
    const AsymResult on = run_asym(loss, seed, false, true, /*measured=*/true);
    EXPECT_FALSE(off.branch_decimating);
    EXPECT_TRUE(on.branch_decimating) << "loss " << loss << " seed " << seed;
    EXPECT_FALSE(on.hub_decimating) << "loss " << loss << " seed " << seed;
    EXPECT_GE(on.up, off.up - 0.01) << "loss " << loss << " seed " << seed;
    EXPECT_GE(on.down, 0.86) << "loss " << loss << " seed " << seed;
  }
}

}  // namespace
}  // namespace egw::scenarios
