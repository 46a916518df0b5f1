// The model law's startup (issue 20): a short transfer must not pay for it.
// Deterministic: fixed seeds. EGW_TRACE=1 prints both senders' law states
// every 100 ms (EGW_STEP=<ms> to change), EGW_ONLY="<loss> <queue> <seed>"
// runs one case of the loss sweep (tracing, seed sweeps).
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <iostream>

#include <gtest/gtest.h>

#include "tests/sim/gateway_buffers.h"
#include "tests/sim/scenario.h"

namespace egw::sim {
namespace {

void trace_line(Duration t, const char* who, Scenario& s, std::size_t pair, bool client,
                const BulkTransfer& b) {
  const auto st = (client ? s.client(pair) : s.server(pair)).connection().stats().ensemble;
  std::cout << to_seconds(t) << " " << who << " " << st.law.state << " bw "
            << st.law.bottleneck_bytes_per_s * 8e-6 << " Mbit/s cwnd " << st.cwnd_bytes
            << " pacing " << st.pacing_rate_bytes_per_s * 8e-6 << " inflight " << st.bytes_in_flight
            << " sent " << st.packets_sent << " lost " << st.packets_lost
            << " srtt " << to_seconds(st.srtt) * 1e3 << " delivered " << b.bytes_delivered()
            << "\n";
}

struct Shares {
  double down = 0;
  double up = 0;
};

// The WAN lab's loss sweep: a download and an upload at once for 7 s over
// 20 Mbit/s each way, 30 ms one way; goodput after 2 s / link rate.
Shares both_ways(double loss, std::size_t queue_packets, std::uint64_t seed) {
  PathConfig path;
  path.bottleneck_bits_per_second = 20'000'000;
  path.reverse_bits_per_second = 20'000'000;
  path.one_way_delay = ms(30);
  path.queue_limit_packets = queue_packets;
  path.loss_probability = loss;
  path.seed = seed;
  path.max_pairs = 1;
  Scenario s(path);
  PairConfig pair_config;
  pair_config.law = congestion::WindowLawKind::model;
  pair_config.customize = [](tunnel::ConnectionConfig& c) { gateway_buffers(c, /*grow=*/true); };
  const std::size_t pair = s.add_pair(pair_config);
  const auto bulk = s.add_bulk_both_ways(pair, 256 << 20, instant_at(ms(10)));
  BulkTransfer& download = bulk.download;
  BulkTransfer& upload = bulk.upload;
  const Duration from = ms(2'000);
  const Duration to = ms(7'000);
  const Duration step = ms(std::getenv("EGW_STEP") ? std::atoi(std::getenv("EGW_STEP")) : 100);
  for (Duration t = step; std::getenv("EGW_TRACE") && t <= to; t += step) {
    s.run_until(instant_at(t));
    trace_line(t, "hub ", s, pair, false, download);
    trace_line(t, "branch", s, pair, true, upload);
  }
  s.run_until(instant_at(to));
  auto share = [&](const BulkTransfer& b) {
    const ByteCount bytes =
        b.bytes_delivered_by(instant_at(to)) - b.bytes_delivered_by(instant_at(from));
    return static_cast<double>(bytes) * 8 / to_seconds(to - from) / 20e6;
  };
  const Shares r{share(download), share(upload)};
  std::cout << "[ result   ] loss " << 100 * loss << " %, queue " << queue_packets << ": download "
            << 100 * r.down << " %, upload " << 100 * r.up << " %\n";
  return r;
}

TEST(ModelStartup, LossyLinkBothWaysShort) {
  const char* only = std::getenv("EGW_ONLY");  // e.g. "0.01 25 3"
  if (only) {
    double loss = 0;
    std::size_t queue = 0;
    std::uint64_t seed = 1;
    std::sscanf(only, "%lf %zu %" SCNu64, &loss, &queue, &seed);
    both_ways(loss, queue, seed);
    return;
  }
  // One seed is one draw of a chaotic system (single seeds range 57-96 %
  // up): the mean of four. Main (485107e) had 63-93 % down but 50-66 % up
  // on average; now 80-94 % down and 74-92 % up.
  constexpr std::uint64_t kSeeds = 4;
  for (const double loss : {0.005, 0.01}) {
    for (const std::size_t queue : {std::size_t{25}, std::size_t{600}}) {
      Shares mean{0, 0};
      for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
        const Shares r = both_ways(loss, queue, seed);
        mean.down += r.down / kSeeds;
        mean.up += r.up / kSeeds;
      }
      EXPECT_GE(mean.down, 0.70) << loss << " " << queue;
      EXPECT_GE(mean.up, 0.70) << loss << " " << queue;
    }
  }
}

// The papers' TCP session at one pair (the WAN lab's `pairs`): a lone 40 KB
// fetch, four 10 KB objects at once, over 1.5 Mbit/s, 50 ms one way, 50
// packets of queue. Returns the last object's completion time.
Duration lone_fetch(congestion::WindowLawKind law) {
  PathConfig path;
  path.bottleneck_bits_per_second = 1'500'000;
  path.one_way_delay = ms(50);
  path.queue_limit_packets = 50;
  path.max_pairs = 1;
  Scenario s(path);
  PairConfig pair_config;
  pair_config.law = law;
  pair_config.customize = [](tunnel::ConnectionConfig& c) { gateway_buffers(c, /*grow=*/true); };
  const std::size_t pair = s.add_pair(pair_config);
  std::vector<BulkTransfer*> objects;
  for (std::uint16_t i = 0; i < 4; ++i) {
    BulkConfig object;
    object.bytes = 10'240;
    object.port = static_cast<std::uint16_t>(5001 + i);
    objects.push_back(&s.add_bulk(pair, object, instant_at(ms(10))));
  }
  for (Duration t = ms(20); std::getenv("EGW_TRACE") && t <= ms(1000); t += ms(20)) {
    s.run_until(instant_at(t));
    trace_line(t, "hub", s, pair, false, *objects[0]);
  }
  EXPECT_TRUE(s.run_until_done(instant_at(ms(10'000))));
  Duration last{0};
  for (const BulkTransfer* o : objects) {
    last = std::max(last, o->completion_time().value_or(ms(99'999)));
  }
  std::cout << "[ result   ] lone 40 KB fetch, law " << static_cast<int>(law) << ": "
            << to_seconds(last) * 1e3 << " ms\n";
  return last;
}

TEST(ModelStartup, LoneShortFetchAsQuickAsSlowStart) {
  const Duration newreno = lone_fetch(congestion::WindowLawKind::newreno);
  const Duration model = lone_fetch(congestion::WindowLawKind::model);
  EXPECT_LE(model, newreno + ms(20));
}

}  // namespace
}  // namespace egw::sim
