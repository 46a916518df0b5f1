// A request flow beside bulk both ways on the WAN lab's lossy full link
// (issue 20's goal: "a small request/response flow ... sees p99 latency
// within 15 ms of the idle link's"): 20 Mbit/s each way, 30 ms one way,
// 600-packet buffers, 0.2 % random loss, the model law, the gateway's
// buffers. A 60-byte request every 100 ms on one stream (class script, as
// application/json), a 300-byte answer; idle for 3 s, then a download and
// an upload; the loaded window is 3-16 s after they start (the lab's).
//
// What the slow requests waited on (EGW_TRACE=1 lists those over 90 ms): a
// request or answer packet lost to the random loss waits until later
// packets' ACKs reveal it, a round trip more (~140 ms where the others take
// 60-80). At 0.2 % per packet about one request in 250 loses one; the lab's
// p99 of ~130 requests is their 2nd-3rd worst, so two such losses decide
// it. With thin-stream copies (the gateway's default) each request and
// answer goes twice and a single loss costs nothing. The rest above idle is
// the law's own queue in the modem (UP probes; startup's, in the first
// 1.5 s of the bulk, which the window leaves out as the lab does).
#include <cstdlib>
#include <iostream>

#include <gtest/gtest.h>

#include "tests/sim/gateway_buffers.h"
#include "tests/sim/request_flow.h"
#include "tests/sim/scenario.h"
#include "tests/sim/wan_lab_paths.h"
#include "tests/support/quantile.h"

namespace egw::sim {
namespace {

struct FlowResult {
  std::vector<Duration> idle;    // sorted
  std::vector<Duration> loaded;  // sorted
  std::uint64_t copies = 0;      // both gateways' thin-stream copies
  std::uint64_t mismatches = 0;
  double down_share = 0;  // of the link, over the loaded window
  double up_share = 0;
};

FlowResult run(std::uint64_t seed, bool copies) {
  Scenario s(lossy_full_link(seed));
  PairConfig pair_config;
  pair_config.law = congestion::WindowLawKind::model;
  pair_config.customize = [copies](tunnel::ConnectionConfig& c) {
    gateway_buffers(c, /*grow=*/true);
    c.thin_stream_copy_loss_ppm = copies ? 1000 : 0;  // the gateway's: ensemble.thin_stream_copies
  };
  const std::size_t pair = s.add_pair(pair_config);
  RequestFlow flow({}, s.client(pair), s.server(pair));
  const Instant bulk_start = instant_at(ms(3'000));
  flow.run(s.loop(), instant_at(ms(0)), bulk_start + ms(16'000));
  const auto bulk = s.add_bulk_both_ways(pair, 256 << 20, bulk_start);
  s.run_until(bulk_start + ms(16'500));
  FlowResult r;
  r.idle = flow.latencies_between(instant_at(ms(500)), bulk_start);
  r.loaded = flow.latencies_between(bulk_start + ms(3'000), bulk_start + ms(16'000));
  r.copies = s.client(pair).connection().stats().thin_stream_copies +
             s.server(pair).connection().stats().thin_stream_copies;
  r.mismatches = flow.mismatches();
  const Instant from = bulk_start + ms(3'000);
  const Instant to = bulk_start + ms(16'000);
  auto share = [&](const BulkTransfer& b) {
    return static_cast<double>(b.bytes_delivered_by(to) - b.bytes_delivered_by(from)) * 8 / to_seconds(to - from) / 20e6;
  };
  r.down_share = share(bulk.download);
  r.up_share = share(bulk.upload);
  if (std::getenv("EGW_TRACE")) {
    for (const auto& [at, latency] : flow.latencies()) {
      if (latency > ms(90)) std::cout << "  seed " << seed << " request at " << to_seconds(at - instant_at(ms(0)))
                                      << " s: " << to_seconds(latency) * 1e3 << " ms\n";
    }
  }
  return r;
}

// Four seeds, with and without the copies. Without them one or two loaded
// requests wait for a loss to be found (123-142 ms against an idle p99 of
// 60 ms; which requests a loss hits moves with the law's startup); with them
// none, and no loaded request takes more than ~32 ms over the idle p99. What remains above idle is the law's queue in
// the modem (UP probes): loaded p99 +10 to +21 ms either way, so the goal's
// +15 is not met by the copies alone (docs/architecture.md).
TEST(RequestFlowFullLink, ALostRequestOrAnswerCostsNoRoundTrip) {
  int slow_with = 0;
  int slow_without = 0;
  Duration worst_with{0};     // the slowest loaded request over the idle p99
  Duration worst_without{0};
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    for (bool copies : {true, false}) {
      const FlowResult r = run(seed, copies);
      ASSERT_EQ(r.mismatches, 0u);
      ASSERT_GE(r.loaded.size(), 120u);
      ASSERT_GE(r.idle.size(), 20u);
      const Duration idle_p99 = test_support::quantile_sorted(r.idle, 0.99);
      const Duration loaded_p99 = test_support::quantile_sorted(r.loaded, 0.99);
      const auto slow = std::count_if(r.loaded.begin(), r.loaded.end(),
                                      [&](Duration d) { return d > idle_p99 + ms(60); });
      std::cout << "[ result   ] seed " << seed << (copies ? " copies" : " no copies") << ": idle p99 "
                << to_seconds(idle_p99) * 1e3 << " ms, loaded p99 " << to_seconds(loaded_p99) * 1e3
                << " ms, max " << to_seconds(r.loaded.back()) * 1e3 << " ms, " << slow
                << " requests a round trip late, " << r.copies << " copies; bulk down "
                << 100 * r.down_share << " %, up " << 100 * r.up_share << " %\n";
      (copies ? slow_with : slow_without) += static_cast<int>(slow);
      Duration& worst = copies ? worst_with : worst_without;
      worst = std::max(worst, r.loaded.back() - idle_p99);
      if (!copies) {
        EXPECT_EQ(r.copies, 0u);
      }
      // The copies cost the bulk nothing (BidirectionalModel's bound).
      EXPECT_GE(r.down_share, 0.85);
      EXPECT_GE(r.up_share, 0.85);
    }
  }
  EXPECT_EQ(slow_with, 0);
  EXPECT_LE(worst_with, ms(40));
  // The same seeds without the copies: the losses the test is about happen.
  EXPECT_GE(slow_without, 1);
  EXPECT_GT(worst_without, ms(60));
}

}  // namespace
}  // namespace egw::sim
