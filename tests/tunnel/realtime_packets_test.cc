// A call beside an upload on a slow path: while the realtime flow sends,
// the upload's packets are built small enough that the one in service at
// the bottleneck delays a call datagram by at most a few ms (issue 21;
// Ensemble::packet_bytes_limit); full size before the call, after its hold,
// and on a fast path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tests/tunnel/connection_pair.h"

namespace egw::tunnel {
namespace {

using testing::ConnectionPair;
using testing::destination_at;
using testing::pattern;

struct Phases {
  std::size_t before = 0;  // the largest datagram the branch sent before the call
  std::size_t during = 0;  // ... while it ran
  std::size_t after = 0;   // ... past its hold
  std::size_t upload_during_call = 0;  // stream bytes the hub received while it ran
  std::size_t call_delivered = 0;
  std::uint64_t small_packets = 0;
  Duration call_wait_max{0};  // at a FIFO of max_rate's rate replayed over what the branch sent
};

// The longest a call datagram waits at a FIFO bottleneck of `rate_bps`
// behind the packets before it, replaying the branch's datagrams from
// `from` on (IP and UDP headers added).
Duration longest_call_wait(const std::vector<ConnectionPair::Sent>& sent, std::size_t from, double rate_bps) {
  Instant free_at{};
  Duration longest{0};
  for (std::size_t i = from; i < sent.size(); ++i) {
    const Instant start = std::max(free_at, sent[i].at);
    if (sent[i].flow_datagram) longest = std::max(longest, start - sent[i].at);
    const double wire_s = static_cast<double>(sent[i].bytes + 28) * 8.0 / rate_bps;
    free_at = start + us(static_cast<std::int64_t>(wire_s * 1e6));
  }
  return longest;
}

std::size_t largest(const std::vector<ConnectionPair::Sent>& sent, std::size_t from, std::size_t to) {
  std::size_t m = 0;
  for (std::size_t i = from; i < to && i < sent.size(); ++i) m = std::max(m, sent[i].bytes);
  return m;
}

// The branch uploads; a realtime flow sends a 200-byte datagram every 20 ms
// for 1 s; the branch sends at most `max_rate_bps`.
Phases upload_beside_call(std::uint64_t max_rate_bps) {
  auto options = ConnectionPair::default_options();
  options.client.max_datagram_bytes = 1200;
  options.client.ensemble.max_rate_bps = max_rate_bps;
  options.client.ensemble.scheduler.policy = congestion::SchedulingPolicy::content;
  ConnectionPair pair(options);
  const StreamId upload = *pair.client().open_stream(destination_at(9, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(upload, pattern(8 << 20, 1), true);
  pair.run_for(ms(1000));
  Phases p;
  const auto& sent = pair.datagrams_sent(true);
  p.before = largest(sent, 0, sent.size());
  const auto flow = pair.client().open_flow(destination_at(7, 3478), ContentClass::realtime, pair.now());
  pair.client().send_datagram(*flow, pattern(200, 2), pair.now());
  pair.step();  // the call's first datagram leaves; what follows it is judged
  const std::size_t call_from = sent.size();
  const std::size_t upload_from = pair.hub_app().in[upload].data.size();
  for (int i = 1; i < 50; ++i) {
    pair.client().send_datagram(*flow, pattern(200, 2), pair.now());
    pair.run_for(ms(20));
  }
  const std::size_t call_to = sent.size();
  p.during = largest(sent, call_from, call_to);
  p.call_wait_max = longest_call_wait(sent, call_from, static_cast<double>(max_rate_bps));
  p.upload_during_call = pair.hub_app().in[upload].data.size() - upload_from;
  pair.run_for(ms(2100));  // the hold (2 s) ends
  const std::size_t after_from = sent.size();
  pair.run_for(ms(300));
  p.after = largest(sent, after_from, sent.size());
  for (const ConnectionEvent& e : pair.hub_app().events) p.call_delivered += std::holds_alternative<DatagramReceived>(e);
  p.small_packets = pair.client().stats().small_packets_sent;
  return p;
}

// A full packet is 9.8 ms at 1 Mbit/s; while the call runs, the packets
// before each call datagram are small enough that it waits at most the
// 4 ms budget (plus the pacer's rounding) at a 1 Mbit/s bottleneck, and
// once the call's cadence is known the packets right after a call datagram
// are full size again (RealtimePackets::cadence).
TEST(RealtimePackets, AnUploadOnASlowUplinkShrinksWhileACallRuns) {
  const Phases p = upload_beside_call(1'000'000);  // 1,228 B on the wire: 9.8 ms
  EXPECT_EQ(p.before, 1200u);
  EXPECT_EQ(p.during, 1200u);  // after a call datagram, with its cadence known
  EXPECT_EQ(p.after, 1200u);
  EXPECT_EQ(p.call_delivered, 50u);
  EXPECT_GT(p.small_packets, 50u);
  EXPECT_LE(p.call_wait_max, ms(5)) << "a call datagram waited " << to_seconds(p.call_wait_max) * 1e3 << " ms";
  // Inside max_rate the upload keeps what the call leaves, less the headers.
  EXPECT_GT(p.upload_during_call, 80'000u);
  std::printf("upload beside the call: %zu bytes in 1 s; a call datagram waited at most %.1f ms; %llu small packets\n",
              p.upload_during_call, to_seconds(p.call_wait_max) * 1e3,
              static_cast<unsigned long long>(p.small_packets));
}

TEST(RealtimePackets, AFastUplinkKeepsFullSizeBesideACall) {
  const Phases p = upload_beside_call(50'000'000);  // a full packet is 0.2 ms
  EXPECT_EQ(p.before, 1200u);
  EXPECT_EQ(p.during, 1200u);
  EXPECT_EQ(p.small_packets, 0u);
}

}  // namespace
}  // namespace egw::tunnel
