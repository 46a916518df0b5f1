// A thin stream's tail goes twice on a lossy path (ConnectionConfig::
// thin_stream_copy_loss_ppm, issue 20: the request flow's p99 beside bulk).
//
// 30 ms one way. An upload of 300 KB first: on the "lossy" path every 40th
// client datagram of it is dropped (2.5 %), which is what the connection
// learns the path's loss rate from. Then, with nothing else in flight, a
// 200-byte request on a stream of its own; `drop_request` drops the first
// client datagram that carries it. A lone packet has no later packets whose
// ACKs would reveal its loss: without a copy it waits for the PTO (srtt +
// 4 rttvar + max_ack_delay, ~100 ms here) and arrives 130 ms or more after
// it was written; with the copy right behind it, one way and a packet later.
#include <gtest/gtest.h>

#include "tests/tunnel/connection_pair.h"
#include "tunnel/connection.h"

namespace egw::tunnel {
namespace {

using testing::ConnectionPair;
using testing::destination_at;
using testing::pattern;

struct ThinRun {
  Duration request_latency{0};  // written -> every byte and the FIN at the hub
  ConnectionStats client;
};

ThinRun run(std::uint32_t copy_loss_ppm, bool lossy_path, bool drop_request) {
  auto options = ConnectionPair::default_options();
  options.one_way_delay = ms(30);
  options.client.thin_stream_copy_loss_ppm = copy_loss_ppm;
  ConnectionPair pair(options);
  bool upload_phase = true;
  std::optional<std::size_t> request_from;  // the client's datagram index when the request was written
  bool request_dropped = false;
  pair.set_filter([&](bool from_client, std::size_t index, Duration*) {
    if (!from_client) return 1;
    if (upload_phase) return lossy_path && index % 40 == 39 ? 0 : 1;
    const bool carries_data = pair.datagrams_sent(true).back().bytes > 100;  // ACK-only: ~40 bytes
    if (drop_request && !request_dropped && request_from && index >= *request_from && carries_data) {
      request_dropped = true;
      return 0;
    }
    return 1;
  });
  const auto upload = pattern(300'000, 1);
  const auto up = *pair.client().open_stream(destination_at(3, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(up, upload, true);
  EXPECT_TRUE(pair.run_until([&] { return pair.hub_app().in[up].fin; }, ms(20'000)));
  EXPECT_TRUE(pair.run_until([&] { return pair.client().stats().ensemble.bytes_in_flight == 0; }, ms(5'000)));
  upload_phase = false;
  pair.run_until([] { return false; }, ms(200));

  request_from = pair.datagrams_sent(true).size();
  const Instant written = pair.now();
  const auto request = pattern(200, 2);
  const auto id = *pair.client().open_stream(destination_at(3, 80), ContentClass::script, pair.now());
  pair.client_app().send(id, request, true);
  EXPECT_TRUE(pair.run_until([&] { return pair.hub_app().in[id].fin; }, ms(5'000)));
  EXPECT_EQ(pair.hub_app().in[id].data, request);
  EXPECT_EQ(request_dropped, drop_request);
  ThinRun r;
  r.request_latency = pair.now() - written;
  r.client = pair.client().stats();
  return r;
}

TEST(ConnectionThinCopy, ALostRequestOnALossyPathArrivesByItsCopy) {
  const ThinRun with = run(1000, /*lossy_path=*/true, /*drop_request=*/true);
  const ThinRun without = run(0, true, true);
  EXPECT_GE(with.client.thin_stream_copies, 1u);
  EXPECT_EQ(without.client.thin_stream_copies, 0u);
  EXPECT_LE(with.request_latency, ms(30 + 5));
  // Without the copy the lone packet's loss waits for a probe timeout.
  EXPECT_GE(without.request_latency, ms(2 * 30 + 30));
  EXPECT_EQ(with.client.ensemble.rto_count, 0u);
}

TEST(ConnectionThinCopy, NoCopiesOnACleanPath) {
  const ThinRun clean = run(1000, /*lossy_path=*/false, /*drop_request=*/false);
  EXPECT_EQ(clean.client.thin_stream_copies, 0u);
  EXPECT_EQ(clean.client.stream_bytes_retransmitted, 0u);
  EXPECT_LE(clean.request_latency, ms(30 + 5));
}

TEST(ConnectionThinCopy, TheBulkTransferIsNotCopied) {
  // On the lossy path only the request goes twice: the upload's packets
  // each had more of the stream in flight or queued behind them.
  const ThinRun lossy = run(1000, /*lossy_path=*/true, /*drop_request=*/false);
  EXPECT_EQ(lossy.client.thin_stream_copies, 1u);
  EXPECT_LE(lossy.request_latency, ms(30 + 5));
}

}  // namespace
}  // namespace egw::tunnel
