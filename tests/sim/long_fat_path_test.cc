// One stream over a long fat path (issue 20 item 5): with the gateway's
// buffers (config/gateway_config.cc apply_limits: a 256 KiB stream buffer
// that may grow to 16 MiB) the stream must fill the link, not stop at
// 256 KiB of credit per round trip (21 Mbit/s at 100 ms, 3.5 Mbit/s at a
// geostationary 600 ms). Before auto-tuned windows it did stop there.
#include <iostream>

#include <gtest/gtest.h>

#include "tests/sim/gateway_buffers.h"
#include "tests/sim/scenario.h"

namespace egw::sim {
namespace {

// Stream bytes per second delivered to the reader between `from` and `to`,
// as a fraction of the link's rate.
double link_share(std::uint64_t bits_per_second, Duration one_way, Duration from, Duration to,
                  ByteCount bytes, bool grow = true) {
  PathConfig path;
  path.bottleneck_bits_per_second = bits_per_second;
  path.one_way_delay = one_way;
  path.queue_limit_packets = 0;  // no loss: only credit or the link can limit
  path.seed = 3;
  path.max_pairs = 1;
  Scenario s(path);
  std::cout << "[ scenario ] " << s.describe() << "\n";
  PairConfig pair_config;
  pair_config.customize = [grow](tunnel::ConnectionConfig& c) { gateway_buffers(c, grow); };
  const std::size_t pair = s.add_pair(pair_config);
  BulkConfig bulk_config;
  bulk_config.bytes = bytes;
  auto& bulk = s.add_bulk(pair, bulk_config, instant_at(ms(10)));
  s.run_until(instant_at(to));
  const ByteCount delivered = bulk.bytes_delivered_by(instant_at(to)) - bulk.bytes_delivered_by(instant_at(from));
  const double share = static_cast<double>(delivered) * 8 / to_seconds(to - from) /
                       static_cast<double>(bits_per_second);
  const auto client = s.client(pair).connection().stats();
  const auto server = s.server(pair).connection().stats();
  std::cout << "[ result   ] " << (grow ? "windows grow: " : "windows fixed: ") << delivered << " B in "
            << to_seconds(to - from) << " s: " << 100 * share << " % of the link; receiver srtt "
            << client.ensemble.srtt.count() << " us; sender credit-blocked " << server.stream_credit_blocked
            << " times, cwnd " << server.ensemble.cwnd_bytes << " B\n";
  return share;
}

TEST(LongFatPath, OneStreamFillsA100MbitPathAt100ms) {
  // Stream payload is ~94 % of the wire's bytes (headers, tag, IP/UDP).
  EXPECT_GE(link_share(100'000'000, ms(50), ms(3'000), ms(5'000), 200 << 20), 0.85);
}

TEST(LongFatPath, OneStreamFillsAGeostationary10MbitPath) {
  EXPECT_GE(link_share(10'000'000, ms(300), ms(7'000), ms(11'000), 50 << 20), 0.85);
}

// What it was: 256 KiB per round trip, 3.5 Mbit/s over the 600 ms hop.
TEST(LongFatPath, FixedWindowsWereCreditLimited) {
  EXPECT_LE(link_share(10'000'000, ms(300), ms(7'000), ms(11'000), 50 << 20, false), 0.40);
}

}  // namespace
}  // namespace egw::sim
