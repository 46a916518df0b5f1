// The asymmetric link of issue 20 (items 4 and 5): 4 Mbit/s down, 1 Mbit/s
// up, 100-packet drop-tail buffers each way, a download and an upload at
// once through one tunnel. The upload fills the uplink's buffer (a second
// of queue at 1 Mbit/s), and the download's ACKs and credit updates
// (MAX_STREAM_DATA) cross that queue: with a fixed 256 KiB stream window
// the download got 256 KiB per ~1.1 s round trip, about half the downlink
// (the WAN lab measured 38 %). With windows that grow with the path and
// credit sent past the window, the download is limited by its congestion
// window only. Deterministic: fixed seed, no random loss.
#include <iostream>

#include <gtest/gtest.h>

#include "tests/sim/scenario.h"

namespace egw::sim {
namespace {

struct Shares {
  double down = 0;
  double up = 0;
  std::uint64_t credit_packets = 0;
};

Shares run(bool grow_windows) {
  PathConfig path;
  path.bottleneck_bits_per_second = 1'000'000;  // forward: branch -> hub, the uplink
  path.reverse_bits_per_second = 4'000'000;     // reverse: hub -> branch, the downlink
  path.one_way_delay = ms(20);
  path.queue_limit_packets = 100;
  path.seed = 11;
  path.max_pairs = 1;
  Scenario s(path);
  std::cout << "[ scenario ] " << s.describe() << (grow_windows ? " windows grow" : " windows fixed") << "\n";
  PairConfig pair_config;
  pair_config.customize = [&](tunnel::ConnectionConfig& c) {
    // The gateway's buffers (config/gateway_config.cc apply_limits).
    c.stream_receive_window_bytes = 256 * 1024;
    c.stream_send_buffer_bytes = 256 * 1024;
    c.connection_receive_window_bytes = 64 << 20;
    c.connection_send_buffer_bytes = 64 << 20;
    c.stream_receive_window_max_bytes = grow_windows ? 16 << 20 : 0;
    c.stream_send_buffer_max_bytes = grow_windows ? 16 << 20 : 0;
  };
  const std::size_t pair = s.add_pair(pair_config);
  BulkConfig down;
  down.bytes = 64 << 20;
  auto& download = s.add_bulk(pair, down, instant_at(ms(10)));
  BulkConfig up = down;
  up.direction = BulkConfig::Direction::client_to_server;
  up.port = 5002;
  auto& upload = s.add_bulk(pair, up, instant_at(ms(10)));
  const Duration from = ms(10'000);
  const Duration to = ms(30'000);
  s.run_until(instant_at(to));
  auto share = [&](const BulkTransfer& b, std::uint64_t bps) {
    const ByteCount bytes = b.bytes_delivered_by(instant_at(to)) - b.bytes_delivered_by(instant_at(from));
    return static_cast<double>(bytes) * 8 / to_seconds(to - from) / static_cast<double>(bps);
  };
  Shares r{share(download, 4'000'000), share(upload, 1'000'000),
           s.client(pair).connection().stats().credit_packets_past_window};
  const auto hub = s.server(pair).connection().stats().ensemble;
  std::cout << "[ result   ] download " << 100 * r.down << " % of 4 Mbit/s, upload " << 100 * r.up
            << " % of 1 Mbit/s; hub cwnd " << hub.cwnd_bytes << " B, srtt " << hub.srtt.count()
            << " us; branch credit packets past its window " << r.credit_packets << "\n";
  return r;
}

TEST(AsymmetricLink, DownloadBesideAnUploadIsNotCreditLimited) {
  const Shares fixed = run(false);
  const Shares grown = run(true);
  EXPECT_GE(grown.down, 0.70);
  EXPECT_GE(grown.down, fixed.down + 0.15) << "the credit loop no longer limits the download";
  EXPECT_GE(grown.up, 0.80);  // the upload keeps its link
  EXPECT_GT(grown.credit_packets, 0u) << "credit went past the branch's full window";
}

}  // namespace
}  // namespace egw::sim
