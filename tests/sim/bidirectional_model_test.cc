// The model law with a download and an upload at once (issue 20): 20 Mbit/s
// each way, 30 ms one way, 600-packet buffers, 0.2 % random loss; the WAN
// lab's full-links-lossy link. Deterministic: fixed seed.
//
// Both gateways start at once, so the hub's startup fills the downlink's
// queue while the branch's startup measures its rate: the branch's acks
// cross that queue, its delivery rate stops growing, and startup ends on
// a plateau at ~2 Mbit/s. UP then found 25 % more per 2-3 s cycle: the
// upload took 20 s to reach half the link (the lab: 23-42 % in 16 s). Now
// an UP round that takes its whole probe re-enters startup.
// EGW_TRACE=1 prints both rates each second.
#include <cstdlib>
#include <iostream>

#include <gtest/gtest.h>

#include "tests/sim/gateway_buffers.h"
#include "tests/sim/wan_lab_paths.h"

namespace egw::sim {
namespace {

TEST(BidirectionalModel, UploadBesideADownloadFindsTheLink) {
  Scenario s(lossy_full_link(3));
  PairConfig pair_config;
  pair_config.law = congestion::WindowLawKind::model;
  pair_config.customize = [](tunnel::ConnectionConfig& c) { gateway_buffers(c, /*grow=*/true); };
  const std::size_t pair = s.add_pair(pair_config);
  const auto bulk = s.add_bulk_both_ways(pair, 256 << 20, instant_at(ms(10)));
  BulkTransfer& download = bulk.download;
  BulkTransfer& upload = bulk.upload;
  const Duration from = ms(8'000);
  const Duration to = ms(14'000);
  for (Duration t = ms(1000); std::getenv("EGW_TRACE") && t <= to; t += ms(1000)) {
    s.run_until(instant_at(t));
    std::cout << "t " << to_seconds(t) << " down " << download.bytes_delivered() << " up "
              << upload.bytes_delivered() << "\n";
  }
  s.run_until(instant_at(to));
  auto share = [&](const BulkTransfer& b) {
    const ByteCount bytes = b.bytes_delivered_by(instant_at(to)) - b.bytes_delivered_by(instant_at(from));
    return static_cast<double>(bytes) * 8 / to_seconds(to - from) / 20e6;
  };
  std::cout << "[ result   ] download " << 100 * share(download) << " %, upload " << 100 * share(upload)
            << " % of 20 Mbit/s\n";
  // ~96 % is the ceiling after the tunnel's headers; before the fix the
  // upload had 34 % here.
  EXPECT_GE(share(download), 0.85);
  EXPECT_GE(share(upload), 0.85);
}

// The lab's shallow loss sweep (25-packet buffers, 1 % random loss), both
// ways, 4 seeds, 20 s after the first 7: UP's overshoot into the shallow
// buffer is found a round later, when DOWN has taken the flight back, and
// beta times that flight held the window a quarter under BDP until the next
// UP: 86 / 83 % (means; lowest 82 / 78 %) before the loss bound took the
// flight the lost packets were sent into, 90 / 90 % (87 / 87 %) after.
TEST(BidirectionalModel, ShallowLossyBuffersKeepTheLinkBothWays) {
  double down_sum = 0;
  double up_sum = 0;
  const int seeds = 4;
  for (int seed = 1; seed <= seeds; ++seed) {
    Scenario s(shallow_lossy_link(seed, 0.01));
    PairConfig pair_config;
    pair_config.law = congestion::WindowLawKind::model;
    pair_config.customize = [](tunnel::ConnectionConfig& c) { gateway_buffers(c, /*grow=*/true); };
    const std::size_t pair = s.add_pair(pair_config);
    const auto bulk = s.add_bulk_both_ways(pair, 256 << 20, instant_at(ms(10)));
    const Duration from = ms(7'000);
    const Duration to = ms(27'000);
    s.run_until(instant_at(to));
    auto share = [&](const BulkTransfer& b) {
      const ByteCount bytes = b.bytes_delivered_by(instant_at(to)) - b.bytes_delivered_by(instant_at(from));
      return static_cast<double>(bytes) * 8 / to_seconds(to - from) / 20e6;
    };
    std::cout << "[ result   ] seed " << seed << ": download " << 100 * share(bulk.download) << " %, upload "
              << 100 * share(bulk.upload) << " %\n";
    EXPECT_GE(share(bulk.download), 0.82) << "seed " << seed;
    EXPECT_GE(share(bulk.upload), 0.82) << "seed " << seed;
    down_sum += share(bulk.download);
    up_sum += share(bulk.upload);
  }
  EXPECT_GE(down_sum / seeds, 0.88);
  EXPECT_GE(up_sum / seeds, 0.88);
}

}  // namespace
}  // namespace egw::sim
