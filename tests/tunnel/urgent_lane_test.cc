// The urgent lane (issue 22; connection_send.cc "The urgent lane"): towards a
// peer that reads it, a request on an idle stream and the packets without
// stream data (ACKs, credit) go as PacketType::data_urgent, a bulk
// transfer's packets never; the receiver may take them ahead of the
// ordinary packets sent before them, and that reordering costs no spurious
// loss (congestion/sent_packets.h counts the lanes apart).
#include <gtest/gtest.h>

#include "tests/tunnel/connection_pair.h"

namespace egw::tunnel::testing {
namespace {

bool all_received(App& app, StreamId id, std::size_t bytes) {
  auto it = app.in.find(id);
  return it != app.in.end() && it->second.fin && it->second.data.size() == bytes;
}

struct LaneRun {
  std::size_t requests_urgent = 0, requests = 0;  // the client's small stream packets
  std::size_t bulk_urgent = 0, bulk = 0;          // the client's full-size stream packets
  std::size_t hub_urgent = 0, hub_sent = 0;       // the hub sends ACKs and credit only
  std::uint64_t retransmitted = 0;
  bool intact = false;
};

// A 20 MB upload and a 100-byte request every 60 ms on a second stream
// (each after the previous one was acknowledged: a new burst). The
// receiver's socket holds each ordinary datagram 5 ms longer than an urgent
// one (a busy hub's queue that the urgent lane skips) when `reorder`.
LaneRun run(bool lane, bool reorder) {
  auto options = ConnectionPair::default_options();
  options.client.peer_reads_urgent_lane = lane;
  options.hub.peer_reads_urgent_lane = lane;
  ConnectionPair pair(options);
  pair.set_filter([&](bool from_client, std::size_t index, Duration* extra) {
    if (reorder && from_client && !pair.datagrams_sent(true)[index].urgent) *extra = ms(5);
    return 1;
  });
  const auto bulk = *pair.client().open_stream(destination_at(3, 22), ContentClass::bulk, pair.now());
  const auto requests = *pair.client().open_stream(destination_at(3, 80), ContentClass::web, pair.now());
  const std::vector<std::byte> data = pattern(20'000'000, 7);
  pair.client_app().send(bulk, data, true);
  std::vector<std::byte> sent_requests;
  for (int i = 0; i < 15; ++i) {
    const std::vector<std::byte> request = pattern(100, static_cast<std::uint64_t>(i));
    sent_requests.insert(sent_requests.end(), request.begin(), request.end());
    pair.client_app().send(requests, request, i == 14);
    pair.run_for(ms(60));
  }
  LaneRun r;
  r.intact = pair.run_until([&] {
    return all_received(pair.hub_app(), bulk, data.size()) && all_received(pair.hub_app(), requests, sent_requests.size());
  });
  r.intact = r.intact && pair.hub_app().in[bulk].data == data && pair.hub_app().in[requests].data == sent_requests;
  for (const auto& d : pair.datagrams_sent(true)) {
    if (!d.stream_data) continue;
    const bool small = d.bytes < 300;
    (small ? r.requests : r.bulk) += 1;
    (small ? r.requests_urgent : r.bulk_urgent) += d.urgent ? 1 : 0;
  }
  for (const auto& d : pair.datagrams_sent(false)) {
    ++r.hub_sent;
    r.hub_urgent += d.urgent ? 1 : 0;
  }
  r.retransmitted = pair.client().stats().stream_bytes_retransmitted;
  EXPECT_EQ(r.retransmitted, 0u) << "lane " << lane << ", reorder " << reorder;
  return r;
}

TEST(UrgentLane, RequestsAndAcksGoUrgentBulkNeverAndTheReorderingCostsNoLoss) {
  const LaneRun r = run(/*lane=*/true, /*reorder=*/true);
  EXPECT_TRUE(r.intact);
  EXPECT_EQ(r.requests, 15u);
  EXPECT_EQ(r.requests_urgent, r.requests);
  EXPECT_GT(r.bulk, 10'000u);
  EXPECT_EQ(r.bulk_urgent, 0u);
  EXPECT_GT(r.hub_sent, 20u);
  EXPECT_EQ(r.hub_urgent, r.hub_sent);
  std::printf("requests %zu/%zu urgent, bulk %zu/%zu, hub %zu/%zu\n", r.requests_urgent, r.requests, r.bulk_urgent,
              r.bulk, r.hub_urgent, r.hub_sent);
}

// A peer that did not announce the lane (an older build) gets none.
TEST(UrgentLane, APeerWithoutTheLaneGetsOrdinaryPacketsOnly) {
  const LaneRun r = run(/*lane=*/false, /*reorder=*/false);
  EXPECT_TRUE(r.intact);
  EXPECT_EQ(r.requests_urgent + r.bulk_urgent + r.hub_urgent, 0u);
}

}  // namespace
}  // namespace egw::tunnel::testing
