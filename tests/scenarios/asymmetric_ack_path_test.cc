// Scenario: the model law's window over the ACK path (congestion/
// model_law_ack_path.cc) on full-links-asym: 4 Mbit/s down, 1 Mbit/s up,
// 30 ms one way, 100-packet buffers, a download and an upload through one
// tunnel, both gateways on the model law. The download's ACKs wait in the
// uplink's queue behind the upload (40-50 ms, the branch's queue target of
// 4 packets at 1 Mbit/s); a window of bw x min_rtt + target left the hub
// window-limited at ~55 % of the downlink. Deterministic (seeded); well
// under a second of CPU. EGW_TRACE=1 traces both laws every 250 ms
// (EGW_TRACE_STEP_MS=25 for finer steps).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tests/sim/scenario.h"

namespace egw::scenarios {
namespace {

using congestion::WindowLawKind;

struct AsymResult {
  double down = 0;  // goodput share of the downlink
  double up = 0;
  double down_queue_p99_ms = 0;  // the downlink's queue at each enqueue
  double up_queue_p99_ms = 0;
  Duration hub_ack_path{0};
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
    std::printf("%5.2f %s %-15s cwnd %6llu flight %6llu bw %5.2f Mbit/s min_rtt %3lld srtt %3lld ack path %3lld ms | ",
                to_seconds(t), hub ? "hub" : "branch", e.law.state, static_cast<unsigned long long>(e.cwnd_bytes),
                static_cast<unsigned long long>(e.bytes_in_flight), e.law.bottleneck_bytes_per_s * 8e-6,
                static_cast<long long>(e.min_rtt.count() / 1000), static_cast<long long>(e.srtt.count() / 1000),
                static_cast<long long>(e.law.ack_path_delay.count() / 1000));
  }
  std::printf("\n");
}

AsymResult run_asym(double loss, std::uint64_t seed, bool ack_path_window) {
  sim::PathConfig path;
  path.bottleneck_bits_per_second = 1'000'000;  // forward: branch -> hub, the uplink
  path.reverse_bits_per_second = 4'000'000;     // reverse: hub -> branch, the downlink
  path.one_way_delay = ms(30);
  path.queue_limit_packets = 100;
  path.loss_probability = loss;
  path.packet_bytes = 1472;
  path.max_pairs = 1;
  path.seed = seed;
  sim::Scenario s(path);
  sim::PairConfig pair_config;
  pair_config.law = WindowLawKind::model;
  pair_config.customize = [ack_path_window](tunnel::ConnectionConfig& c) {
    c.stream_receive_window_bytes = 16 << 20;
    c.connection_receive_window_bytes = 16 << 20;
    c.ensemble.ack_path_window = ack_path_window;
  };
  const std::size_t pair = s.add_pair(pair_config);
  const auto bulk = s.add_bulk_both_ways(pair, 64 << 20, instant_at(ms(10)));
  sim::BulkTransfer& download = bulk.download;
  sim::BulkTransfer& upload = bulk.upload;
  const Instant from = instant_at(ms(4'000));
  const Instant to = instant_at(ms(20'000));
  const double wire_bits = static_cast<double>((path.packet_bytes + path.overhead_bytes) * 8);
  std::vector<double> down_queue_ms;
  std::vector<double> up_queue_ms;
  s.network().reverse().set_observer([&](const sim::LinkEvent& e) {
    if (e.kind == sim::LinkEvent::Kind::enqueue && e.time >= from) {
      down_queue_ms.push_back(static_cast<double>(e.queue_packets) * wire_bits / 4e3);
    }
  });
  s.network().forward().set_observer([&](const sim::LinkEvent& e) {
    if (e.kind == sim::LinkEvent::Kind::enqueue && e.time >= from) {
      up_queue_ms.push_back(static_cast<double>(e.queue_packets) * wire_bits / 1e3);
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
               s.server(pair).connection().stats().ensemble.law.ack_path_delay};
  std::printf("asymmetric, ack_path_window %d, %.1f %% loss, seed %llu: download %.0f %%, upload %.0f %%; "
              "queue p99 down %.0f ms, up %.0f ms; hub's ACK path %.0f ms\n",
              ack_path_window, 100 * loss, static_cast<unsigned long long>(seed), 100 * r.down, 100 * r.up,
              r.down_queue_p99_ms, r.up_queue_p99_ms, to_seconds(r.hub_ack_path) * 1e3);
  EXPECT_EQ(download.mismatches(), 0u);
  EXPECT_EQ(upload.mismatches(), 0u);
  return r;
}

// Without the allowance (the default): download 54-67 %. With it: 75-90 %,
// the upload >= 85 %; the downlink keeps up to ~100 ms of our queue at p99
// (off: 9-12 ms): the bw filter reads above the link from ACK-compressed
// samples, and the wider window no longer bounds that queue. Hence off by
// default; the bound below catches a queue that fills the buffer (300 ms).
// Since the upload joins at full speed (congestion/join.cc: the timer on the
// measured SRTT), its startup queue on the uplink (150-170 ms) sits in the
// download's ACK path during the download's startup: without startup's
// stretched-RTT rule (model_law_ack_path.cc) startup ended on that plateau
// at 1.4 of 4 Mbit/s and the download stayed at 29-33 % off, 36-43 % on.
// The gain is judged on the mean of the runs: a DOWN that cannot drain
// corrects an overestimated bw (model_law_down.cc, not with the option), which
// lifted one run without the option from 58 to 67 % (lossless, seed 5).
TEST(ScenarioAsymmetricAckPath, DownloadWindowCoversTheUplinksQueue) {
  const std::vector<std::pair<double, std::uint64_t>> runs{{0.0, 5}, {0.002, 5}, {0.002, 6}, {0.002, 7}};
  double gain = 0;
  for (const auto& [loss, seed] : runs) {
    const AsymResult off = run_asym(loss, seed, false);
    const AsymResult on = run_asym(loss, seed, true);
    EXPECT_EQ(off.hub_ack_path, Duration{0});
    EXPECT_GE(off.down, 0.45) << "loss " << loss << " seed " << seed;  // startup past the upload's queue
    EXPECT_GE(off.up, 0.85) << "loss " << loss << " seed " << seed;
    EXPECT_GE(on.down, 0.7) << "loss " << loss << " seed " << seed;
    gain += (on.down - off.down) / static_cast<double>(runs.size());
    EXPECT_GE(on.up, 0.85) << "loss " << loss << " seed " << seed;  // the upload keeps its link
    EXPECT_LE(on.down_queue_p99_ms, 120.0) << "loss " << loss << " seed " << seed;
  }
  EXPECT_GE(gain, 0.1);
}

}  // namespace
}  // namespace egw::scenarios
