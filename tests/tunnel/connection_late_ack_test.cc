// A late ACK for packets already declared lost still settles their data, so
// it is not sent again (TCP fast start section 3.4.4, "capitalizing on
// successful transmission during a failed fast start"; RFC 9002 treats such
// losses as spurious).
#include <gtest/gtest.h>

#include "tests/tunnel/connection_pair.h"
#include "tunnel/connection.h"

namespace egw::tunnel {
namespace {

using testing::ConnectionPair;
using testing::destination_at;
using testing::pattern;

TEST(ConnectionLateAck, DataAckedAfterATimeoutIsNotResentAgain) {
  auto options = ConnectionPair::default_options();
  options.one_way_delay = ms(100);
  options.client.ensemble.tail_probes = 0;  // the RTO itself declares the flight lost
  ConnectionPair pair(options);
  // The hub's first ACKs (sent ~100 ms, when the first flight arrives) are
  // held up for 1.2 s: the client's RTO (1 s from the 333 ms initial RTT,
  // RFC 9002 6.2.2) fires first and declares the whole flight lost.
  pair.set_filter([&](bool from_client, std::size_t, Duration* extra) {
    if (!from_client && pair.now() < instant_at(ms(200))) *extra = ms(1'200);
    return 1;
  });
  auto id = *pair.client().open_stream(destination_at(3, 22), ContentClass::bulk, pair.now());
  const auto data = pattern(10'000, 7);  // ~9 packets: one initial window
  pair.client_app().send(id, data, true);
  pair.run_for(ms(3'000));  // everything settled: the last late ACK lands at ~1.3 s
  ASSERT_TRUE(pair.hub_app().in[id].fin);
  EXPECT_EQ(pair.hub_app().in[id].data, data);
  const auto st = pair.client().stats();
  EXPECT_EQ(st.ensemble.rto_count, 1u);
  // After the RTO, cwnd = 1 packet: it resends ~1 KB, then 2 packets when
  // that is acked (~1.2 s); the late ACKs (~1.3 s) cancel the rest. Without
  // them all 10000 bytes would go again.
  EXPECT_GT(st.stream_bytes_retransmitted, 0u);
  EXPECT_LT(st.stream_bytes_retransmitted, data.size() / 2);
}

}  // namespace
}  // namespace egw::tunnel
