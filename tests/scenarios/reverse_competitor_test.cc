// Scenario: the tunnel's download on the model law while a direct CUBIC
// upload outside the tunnel (another host's, with no stamps) fills the
// uplink of the 4 / 1 Mbit/s line (30 ms one way). With the modem's
// 100-packet uplink buffer (1.2 s at 1 Mbit/s) every ACK of the download
// waits 0.3-1 s behind that upload: the hub's round trip is mostly someone
// else's queue on the way back, which the branch's ACK stamps measure
// (congestion/ack_path_meter.h). The downlink itself has no competitor.
// Deterministic (seeded, 1 ms of jitter per packet); ~1 s of CPU. EGW_TRACE=1
// traces the hub's law every second.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

#include "tests/scenarios/asymmetric_line.h"
#include "tests/sim/scenario.h"

namespace egw::scenarios {
namespace {

using congestion::WindowLawKind;

struct Result {
  double download = 0;  // the tunnel's share of the downlink
  double upload = 0;    // the direct upload's share of the uplink
  double downlink_queue_p99_ms = 0;
};

double p99(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(0.99 * static_cast<double>(v.size() - 1))];
}

void trace(sim::Scenario& s, std::size_t tunnel, Duration t) {
  const auto e = s.server(tunnel).connection().stats().ensemble;
  std::printf("%5.1f hub %-16s cwnd %7llu flight %7llu bw %5.2f Mbit/s min_rtt %4lld srtt %5lld ack path %5lld ms, "
              "uplink queue %4.0f ms\n",
              to_seconds(t), e.law.state, static_cast<unsigned long long>(e.cwnd_bytes),
              static_cast<unsigned long long>(e.bytes_in_flight), e.law.bottleneck_bytes_per_s * 8e-6,
              static_cast<long long>(e.min_rtt.count() / 1000), static_cast<long long>(e.srtt.count() / 1000),
              static_cast<long long>(e.law.ack_path_delay.count() / 1000),
              static_cast<double>(s.network().forward().queue_bytes()) * 8 / 1e3);
}

Result run(std::size_t uplink_packets, double loss, std::uint64_t seed) {
  sim::PathConfig path = asymmetric_line(loss, seed, 2);
  path.queue_limit_packets = uplink_packets;
  path.reverse_queue_limit_packets = 100;
  path.max_jitter = ms(1);
  sim::Scenario s(path);
  sim::PairConfig tunnel_config;
  tunnel_config.law = WindowLawKind::model;
  tunnel_config.customize = wide_receive_windows;
  const std::size_t tunnel = s.add_pair(tunnel_config);
  sim::PairConfig direct_config;  // a TCP CUBIC flow: one controller per stream, no stamps
  direct_config.law = WindowLawKind::cubic;
  direct_config.coupling = congestion::CouplingMode::none;
  direct_config.ack_timestamps = false;
  direct_config.customize = tunnel_config.customize;
  const std::size_t direct = s.add_pair(direct_config);
  sim::BulkConfig download_config;
  download_config.bytes = 64 << 20;
  sim::BulkTransfer& download = s.add_bulk(tunnel, download_config, instant_at(ms(10)));
  sim::BulkConfig upload_config;
  upload_config.bytes = 64 << 20;
  upload_config.direction = sim::BulkConfig::Direction::client_to_server;
  upload_config.port = 5002;
  sim::BulkTransfer& upload = s.add_bulk(direct, upload_config, instant_at(ms(10)));
  const Instant from = instant_at(ms(5'000));
  const Instant to = instant_at(ms(30'000));
  std::vector<double> downlink_queue_ms;
  s.network().reverse().set_observer([&](const sim::LinkEvent& e) {
    if (e.kind == sim::LinkEvent::Kind::enqueue && e.time >= from) {
      downlink_queue_ms.push_back(static_cast<double>(e.queue_bytes) * 8 / 4e3);
    }
  });
  if (std::getenv("EGW_TRACE")) {
    for (Duration t = ms(1'000); t < ms(30'000); t += ms(1'000)) {
      s.run_until(instant_at(t));
      trace(s, tunnel, t);
    }
  }
  s.run_until(to);
  s.network().reverse().set_observer({});
  const auto share = [&](const sim::BulkTransfer& b, double bps) {
    return static_cast<double>(b.bytes_delivered_by(to) - b.bytes_delivered_by(from)) * 8 / to_seconds(to - from) / bps;
  };
  const Result r{share(download, 4e6), share(upload, 1e6), p99(downlink_queue_ms)};
  std::printf("direct upload on the uplink (%zu packets), %.1f %% loss, seed %llu: tunnel download %.0f %%, "
              "direct upload %.0f %%, downlink queue p99 %.0f ms\n",
              uplink_packets, 100 * loss, static_cast<unsigned long long>(seed), 100 * r.download, 100 * r.upload,
              r.downlink_queue_p99_ms);
  EXPECT_EQ(download.mismatches(), 0u);
  EXPECT_EQ(upload.mismatches(), 0u);
  return r;
}

// The modem's buffer (1.2 s). The hub takes the ACKs' wait for a queue on
// its own path: after kStandingWindow its standing-queue rule goes CUBIC
// (model_law.h, "competitive") and fills the downlink's buffer (p99 275-294
// ms in all 8 runs; the direct upload keeps 78-90 % of its link). When the
// upload's queue drains a little, the ACKs that waited behind it arrive at
// once; on the ACK clock alone they released the window in bursts at many
// times the downlink's rate: 45-59 % of the downlink (54 % on average).
// Paced at 1.25 x cwnd/srtt after CUBIC's slow start: 49-65 % (58 %). The
// WAN lab's asym-direct-upload gained more (44-65 % -> 74-80 %; why this
// path gains less was not traced). Tried and not kept (session 38):
// leaving such ACK waits out of the rule, so the model held the download;
// 61 % here but 42-47 % in the lab.
TEST(ScenarioReverseCompetitor, TheDownloadTakesTheDownlinkBesideAnotherHostsUpload) {
  double download = 0;
  int runs = 0;
  for (const double loss : {0.0, 0.002}) {
    for (const std::uint64_t seed : {1, 2, 3, 4}) {
      const Result r = run(100, loss, seed);
      EXPECT_GE(r.download, 0.48) << "loss " << loss << " seed " << seed;
      EXPECT_GE(r.upload, 0.78) << "loss " << loss << " seed " << seed;  // the direct upload keeps its link
      EXPECT_LE(r.downlink_queue_p99_ms, 300.0) << "loss " << loss << " seed " << seed;  // its buffer: 294 ms
      download += r.download;
      ++runs;
    }
  }
  EXPECT_GE(download / runs, 0.57);
}

// A short uplink buffer (20 packets, 240 ms): the ACK path stays under one
// min RTT, the law never competes, and the pacing above changes nothing:
// 84-87 % of the downlink, the direct upload 81-83 %, the downlink's p99
// 21-46 ms.
TEST(ScenarioReverseCompetitor, AShortUplinkBufferKeepsBothLinksFull) {
  for (const double loss : {0.0, 0.002}) {
    for (const std::uint64_t seed : {1, 2, 3, 4}) {
      const Result r = run(20, loss, seed);
      EXPECT_GE(r.download, 0.83) << "loss " << loss << " seed " << seed;
      EXPECT_GE(r.upload, 0.78) << "loss " << loss << " seed " << seed;
      EXPECT_LE(r.downlink_queue_p99_ms, 60.0) << "loss " << loss << " seed " << seed;
    }
  }
}

}  // namespace
}  // namespace egw::scenarios
