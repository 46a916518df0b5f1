#include "tunnel/connection.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/tunnel/connection_pair.h"
#include "tunnel/flow_control.h"

namespace egw::tunnel {
namespace {

using testing::App;
using testing::ConnectionPair;
using testing::destination_at;
using testing::kKey;
using testing::pattern;

bool all_received(App& app, StreamId id, std::size_t bytes) {
  auto it = app.in.find(id);
  return it != app.in.end() && it->second.fin && it->second.data.size() == bytes;
}

// An authentic datagram carrying `frames`, as a misbehaving peer would send it.
std::vector<std::byte> craft(const std::vector<Frame>& frames, PacketNumber number) {
  std::vector<std::byte> payload;
  WireWriter w(payload);
  for (const Frame& f : frames) encode_frame(w, f);
  TestProtection p(kKey);
  return seal_packet(p, PacketHeader{PacketType::data, 0, number}, payload);
}

TEST(Connection, StreamCarriesDestinationClassAndDataBothWays) {
  ConnectionPair pair;
  const Destination dest = destination_at(7, 443);
  auto id = pair.client().open_stream(dest, ContentClass::html, pair.now());
  ASSERT_TRUE(id);
  EXPECT_EQ(*id % 2, 0u);  // the client opens even ids
  const auto request = pattern(50'000, 1);
  pair.client_app().send(*id, request, true);
  ASSERT_TRUE(pair.run_until([&] { return !pair.hub_app().opened.empty(); }));
  const StreamOpened opened = pair.hub_app().opened.front();
  EXPECT_EQ(opened.id, *id);
  EXPECT_EQ(opened.destination, dest);
  EXPECT_EQ(opened.content_class, ContentClass::html);

  const auto response = pattern(300'000, 2);
  pair.hub_app().send(*id, response, true);
  ASSERT_TRUE(pair.run_until([&] {
    return all_received(pair.hub_app(), *id, request.size()) &&
           all_received(pair.client_app(), *id, response.size());
  }));
  EXPECT_EQ(pair.hub_app().in[*id].data, request);
  EXPECT_EQ(pair.client_app().in[*id].data, response);
  // Both sides see the stream close once every byte and FIN is acknowledged.
  ASSERT_TRUE(pair.run_until([&] {
    return !pair.client().stream_exists(*id) && !pair.hub().stream_exists(*id);
  }));
  EXPECT_EQ(pair.client_app().closed_streams, std::vector<StreamId>{*id});
  EXPECT_EQ(pair.hub_app().closed_streams, std::vector<StreamId>{*id});
  EXPECT_EQ(pair.client().stats().datagrams_dropped, 0u);
  EXPECT_EQ(pair.hub().stats().datagrams_dropped, 0u);
  EXPECT_EQ(pair.client().stats().stream_bytes_retransmitted, 0u);
}

TEST(Connection, ManyStreamsBothDirections) {
  ConnectionPair pair;
  std::vector<StreamId> client_ids;
  for (int i = 0; i < 20; ++i) {
    auto id = pair.client().open_stream(destination_at(1, static_cast<std::uint16_t>(1000 + i)),
                                        static_cast<ContentClass>(i % 4), pair.now());
    ASSERT_TRUE(id);
    client_ids.push_back(*id);
    pair.client_app().send(*id, pattern(1000 + 3000 * i, i), true);
  }
  std::vector<StreamId> hub_ids;
  for (int i = 0; i < 5; ++i) {
    auto id = pair.hub().open_stream(destination_at(2, 80), ContentClass::bulk, pair.now());
    ASSERT_TRUE(id);
    EXPECT_EQ(*id % 2, 1u);  // the hub opens odd ids
    hub_ids.push_back(*id);
    pair.hub_app().send(*id, pattern(70'000, 100 + i), true);
  }
  // Answers to the client's streams once they are announced.
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().opened.size() == 20; }));
  for (int i = 0; i < 20; ++i) pair.hub_app().send(client_ids[i], pattern(20'000, 200 + i), true);
  for (StreamId id : hub_ids) pair.client_app().send(id, {}, true);
  ASSERT_TRUE(pair.run_until([&] {
    for (int i = 0; i < 20; ++i) {
      if (!all_received(pair.hub_app(), client_ids[i], 1000 + 3000 * i)) return false;
      if (!all_received(pair.client_app(), client_ids[i], 20'000)) return false;
    }
    for (StreamId id : hub_ids) {
      if (!all_received(pair.client_app(), id, 70'000)) return false;
    }
    return true;
  }));
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(pair.hub_app().in[client_ids[i]].data, pattern(1000 + 3000 * i, i));
    EXPECT_EQ(pair.client_app().in[client_ids[i]].data, pattern(20'000, 200 + i));
  }
  ASSERT_TRUE(pair.run_until([&] { return pair.client_app().closed_streams.size() == 25; }));
  EXPECT_EQ(pair.client().stats().ensemble.members, 0u);
}

TEST(Connection, LostDatagramsAreRepaired) {
  ConnectionPair pair;
  std::size_t dropped = 0;
  // Drop a first-flight packet, a mid-transfer run and the hub's early ACKs.
  pair.set_filter([&](bool from_client, std::size_t index, Duration*) {
    const bool drop = from_client ? (index == 1 || (index >= 20 && index < 24) || index == 40)
                                  : (index == 0 || index == 3);
    dropped += drop;
    return drop ? 0 : 1;
  });
  auto id = *pair.client().open_stream(destination_at(3, 22), ContentClass::bulk, pair.now());
  const auto data = pattern(200'000, 3);
  pair.client_app().send(id, data, true);
  ASSERT_TRUE(pair.run_until([&] { return all_received(pair.hub_app(), id, data.size()); }));
  EXPECT_EQ(pair.hub_app().in[id].data, data);
  EXPECT_EQ(dropped, 8u);  // 1 + 4 + 1 from the client, 2 from the hub
  EXPECT_GT(pair.client().stats().stream_bytes_retransmitted, 0u);
  EXPECT_GT(pair.client().stats().ensemble.packets_lost, 0u);
}

TEST(Connection, LostTailIsRepairedByTimeout) {
  ConnectionPair pair;
  auto id = *pair.client().open_stream(destination_at(3, 22), ContentClass::bulk, pair.now());
  const auto data = pattern(3000, 4);  // three packets
  pair.client_app().send(id, data, true);
  // Drop every client datagram for the first 5 ms: the whole flight and its
  // FIN are lost and only a timer can notice.
  pair.set_filter([&](bool from_client, std::size_t, Duration*) {
    return (from_client && pair.now() < instant_at(ms(5))) ? 0 : 1;
  });
  ASSERT_TRUE(pair.run_until([&] { return all_received(pair.hub_app(), id, data.size()); }));
  EXPECT_EQ(pair.hub_app().in[id].data, data);
  EXPECT_GE(pair.client().stats().stream_bytes_retransmitted, data.size());
}

TEST(Connection, ReorderedDatagramsAreReassembled) {
  ConnectionPair pair;
  pair.set_filter([](bool from_client, std::size_t index, Duration* extra) {
    if (from_client && index % 5 == 2) *extra = ms(7);  // overtaken by later ones
    return 1;
  });
  auto id = *pair.client().open_stream(destination_at(4, 80), ContentClass::image, pair.now());
  const auto data = pattern(150'000, 5);
  pair.client_app().send(id, data, true);
  ASSERT_TRUE(pair.run_until([&] { return all_received(pair.hub_app(), id, data.size()); }));
  EXPECT_EQ(pair.hub_app().in[id].data, data);
}

TEST(Connection, DuplicatesAreDroppedAndCounted) {
  ConnectionPair pair;
  std::size_t duplicated = 0;
  pair.set_filter([&](bool from_client, std::size_t index, Duration*) {
    if (from_client && index % 3 == 0) {
      ++duplicated;
      return 2;
    }
    return 1;
  });
  auto id = *pair.client().open_stream(destination_at(5, 80), ContentClass::bulk, pair.now());
  const auto data = pattern(80'000, 6);
  pair.client_app().send(id, data, true);
  ASSERT_TRUE(pair.run_until([&] { return all_received(pair.hub_app(), id, data.size()); }));
  pair.run_for(ms(100));  // let every copy land
  EXPECT_EQ(pair.hub_app().in[id].data, data);
  const ConnectionStats s = pair.hub().stats();
  EXPECT_GT(duplicated, 0u);
  EXPECT_EQ(s.datagrams_duplicate, duplicated);  // every second copy, no more
  EXPECT_EQ(s.datagrams_dropped, duplicated);
  EXPECT_EQ(s.datagrams_received, pair.sent_from_client() + duplicated);
}

TEST(Connection, ForgedDatagramsAreDroppedAndCounted) {
  ConnectionPair pair;
  auto id = *pair.client().open_stream(destination_at(6, 80), ContentClass::bulk, pair.now());
  const auto data = pattern(20'000, 7);
  pair.client_app().send(id, data, true);
  // Sealed under another key, a flipped bit, and a runt.
  std::vector<std::byte> payload{std::byte{0x01}};  // PING
  TestProtection other(kKey + 1);
  auto wrong_key = seal_packet(other, PacketHeader{PacketType::data, 0, 0}, payload);
  auto flipped = craft({PingFrame{}}, 0);
  flipped.back() ^= std::byte{0x40};
  std::vector<std::byte> runt(5, std::byte{0x01});
  pair.inject(true, wrong_key);
  pair.inject(true, flipped);
  pair.inject(true, runt);
  ASSERT_TRUE(pair.run_until([&] { return all_received(pair.hub_app(), id, data.size()); }));
  EXPECT_EQ(pair.hub_app().in[id].data, data);
  EXPECT_EQ(pair.hub().stats().datagrams_forged, 3u);
  EXPECT_EQ(pair.hub().stats().datagrams_dropped, 3u);
  EXPECT_FALSE(pair.hub().is_closed());
}

TEST(Connection, MalformedFramesAreDroppedAndCounted) {
  ConnectionPair pair;
  std::vector<std::byte> payload{std::byte{0x7f}};  // no such frame type
  TestProtection p(kKey);
  pair.inject(true, seal_packet(p, PacketHeader{PacketType::data, 0, 0}, payload));
  EXPECT_EQ(pair.hub().stats().datagrams_malformed, 1u);
  EXPECT_EQ(pair.hub().stats().datagrams_dropped, 1u);
  EXPECT_FALSE(pair.hub().is_closed());
}

TEST(Connection, ResetIsDeliveredWithItsCodeAndCreditIsSettled) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  // A connection window equal to the initial credit: a leak of the reset
  // stream's bytes would stall the next stream.
  o.hub.connection_receive_window_bytes = kInitialConnectionCreditBytes;
  o.client.connection_receive_window_bytes = kInitialConnectionCreditBytes;
  ConnectionPair pair(o);
  pair.hub_app().reading = false;
  auto id = *pair.client().open_stream(destination_at(8, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(200'000, 8), false);
  ASSERT_TRUE(pair.run_until([&] { return !pair.hub_app().opened.empty(); }));
  pair.run_for(ms(200));  // 200 KB sit unread at the hub
  pair.hub().stream_reset(id, 42, pair.now());
  EXPECT_FALSE(pair.hub().stream_exists(id));
  ASSERT_TRUE(pair.run_until([&] { return !pair.client_app().resets.empty(); }));
  EXPECT_EQ(pair.client_app().resets.front().id, id);
  EXPECT_EQ(pair.client_app().resets.front().error_code, 42u);
  EXPECT_FALSE(pair.client().stream_exists(id));
  EXPECT_TRUE(pair.hub_app().resets.empty());  // the resetting side gets no event

  // The next stream gets the whole connection window again.
  pair.hub_app().reading = true;
  auto id2 = *pair.client().open_stream(destination_at(8, 81), ContentClass::bulk, pair.now());
  const auto data = pattern(2 * kInitialConnectionCreditBytes, 9);
  pair.client_app().send(id2, data, true);
  ASSERT_TRUE(pair.run_until([&] { return all_received(pair.hub_app(), id2, data.size()); }));
  EXPECT_EQ(pair.hub_app().in[id2].data, data);
}

TEST(Connection, FlowControlBoundsASenderWhoseReceiverDoesNotRead) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.hub.stream_receive_window_bytes = 64 * 1024;
  o.client.stream_send_buffer_bytes = 32 * 1024;
  ConnectionPair pair(o);
  pair.hub_app().reading = false;
  auto id = *pair.client().open_stream(destination_at(9, 80), ContentClass::bulk, pair.now());
  const auto data = pattern(1'000'000, 10);
  pair.client_app().send(id, data, true);
  pair.run_for(ms(2000));
  // The hub holds its window, the client's buffer holds the rest:
  // 65536 + 32768 = 98304 bytes accepted, not one more.
  EXPECT_EQ(pair.client_app().out[id].written, 65'536u + 32'768u);
  EXPECT_EQ(pair.client().stream_write(id, data, pair.now()), 0u);
  // Once the hub reads, everything flows and backpressure lifts.
  pair.hub_app().reading = true;
  ASSERT_TRUE(pair.run_until([&] { return all_received(pair.hub_app(), id, data.size()); }));
  EXPECT_EQ(pair.hub_app().in[id].data, data);
  EXPECT_GT(pair.client_app().writable_events, 0u);
}

TEST(Connection, ConnectionCreditBoundsManyStreams) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.hub.connection_receive_window_bytes = kInitialConnectionCreditBytes;  // 256 KiB
  ConnectionPair pair(o);
  pair.hub_app().reading = false;
  std::vector<StreamId> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(*pair.client().open_stream(destination_at(9, 80), ContentClass::bulk, pair.now()));
    pair.client_app().send(ids.back(), pattern(500'000, 20 + i), true);
  }
  pair.run_for(ms(2000));
  // Bytes sent = accepted - still buffered; at most the 262144-byte window.
  std::size_t accepted = 0;
  for (StreamId id : ids) accepted += pair.client_app().out[id].written;
  EXPECT_LE(accepted, kInitialConnectionCreditBytes + 4 * o.client.stream_send_buffer_bytes);
  EXPECT_FALSE(pair.hub().is_closed());  // no flow-control violation
  pair.hub_app().reading = true;
  ASSERT_TRUE(pair.run_until([&] {
    for (int i = 0; i < 4; ++i) {
      if (!all_received(pair.hub_app(), ids[i], 500'000)) return false;
    }
    return true;
  }));
}

TEST(Connection, ClassChangeReachesThePeer) {
  ConnectionPair pair;
  auto id = *pair.client().open_stream(destination_at(10, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(100, 11), false);
  ASSERT_TRUE(pair.run_until([&] { return !pair.hub_app().opened.empty(); }));
  EXPECT_EQ(pair.hub().stream_class(id), ContentClass::bulk);
  // The hub learns from the response that it is a script.
  pair.hub().set_stream_class(id, ContentClass::script, pair.now());
  ASSERT_TRUE(pair.run_until(
      [&] { return pair.client().stream_class(id) == ContentClass::script; }, ms(1000)));
}

// An admin reload switches the policy while streams run: under `preempt` the
// bulk stream (opened first, equally backlogged) gets nothing while the html
// stream still has most of its bytes to deliver; under `fair` it would get half.
TEST(Connection, SchedulerConfigChangeAppliesToRunningStreams) {
  ConnectionPair pair;
  congestion::SchedulerConfig fair;
  fair.policy = congestion::SchedulingPolicy::fair;
  pair.client().set_scheduler_config(fair);
  auto bulk = *pair.client().open_stream(destination_at(10, 80), ContentClass::bulk, pair.now());
  auto html = *pair.client().open_stream(destination_at(10, 81), ContentClass::html, pair.now());
  pair.client_app().send(bulk, pattern(400'000, 1), true);
  pair.client_app().send(html, pattern(400'000, 2), true);
  congestion::SchedulerConfig preempt;
  preempt.policy = congestion::SchedulingPolicy::preempt;
  pair.client().set_scheduler_config(preempt);

  // The harness has no bandwidth limit: a whole window arrives per step, so
  // look at the steps before html's last window (html below 300 000 bytes).
  std::size_t bulk_while_html_pending = 0;
  ASSERT_TRUE(pair.run_until([&] {
    if (pair.hub_app().in[html].data.size() < 300'000) {
      bulk_while_html_pending = pair.hub_app().in[bulk].data.size();
    }
    return pair.hub_app().in[html].fin;
  }));
  EXPECT_EQ(pair.hub_app().in[html].data, pattern(400'000, 2));
  EXPECT_EQ(bulk_while_html_pending, 0u);
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[bulk].fin; }));
  EXPECT_EQ(pair.hub_app().in[bulk].data, pattern(400'000, 1));
}

// The opener sees the limit (MAX_STREAMS, RFC 9000 section 4.6): a stream
// beyond it is not refused, it waits, and goes once a stream has ended.
TEST(Connection, StreamsBeyondMaxStreamsWaitForTheLimit) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.hub.max_incoming_streams = 2;
  // What the handshake would tell the client (transport parameters).
  o.client.peer.initial_max_streams = local_transport_parameters(o.hub).initial_max_streams;
  ConnectionPair pair(o);
  std::vector<StreamId> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(*pair.client().open_stream(destination_at(11, 80), ContentClass::bulk, pair.now()));
    pair.client_app().send(ids.back(), pattern(1000, 30 + i), false);
  }
  pair.run_for(ms(500));
  EXPECT_FALSE(pair.client().is_closed());
  EXPECT_FALSE(pair.hub().is_closed());
  EXPECT_TRUE(pair.client_app().resets.empty());
  EXPECT_EQ(pair.hub_app().opened.size(), 2u);
  EXPECT_EQ(pair.client().stats().streams_blocked_by_limit, 1u);
  EXPECT_TRUE(pair.client().stream_exists(ids[2]));
  // The hub ends one of the two: its slot comes back in MAX_STREAMS.
  pair.hub().stream_reset(ids[0], 0x5, pair.now());
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().opened.size() == 3; }));
  EXPECT_EQ(pair.client().stats().streams_blocked_by_limit, 0u);
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[ids[2]].data.size() == 1000; }));
  EXPECT_EQ(pair.hub_app().in[ids[2]].data, pattern(1000, 32));
  EXPECT_FALSE(pair.hub().is_closed());
}

// A stream reset while it waits for MAX_STREAMS is never announced, but its
// id still reaches the hub (a bare RESET when its turn comes), so the hub
// counts it and the limit keeps moving.
TEST(Connection, StreamResetWhileWaitingForMaxStreamsStillCounts) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.hub.max_incoming_streams = 2;
  o.client.peer.initial_max_streams = 2;
  ConnectionPair pair(o);
  std::vector<StreamId> ids;
  for (int i = 0; i < 4; ++i) {
    ids.push_back(*pair.client().open_stream(destination_at(16, 80), ContentClass::bulk, pair.now()));
  }
  pair.client_app().send(ids[0], pattern(100, 1), false);
  pair.client_app().send(ids[1], pattern(100, 2), false);
  pair.client_app().send(ids[3], pattern(100, 4), false);
  pair.run_for(ms(200));
  EXPECT_EQ(pair.client().stats().streams_blocked_by_limit, 2u);
  pair.client().stream_reset(ids[2], 0x9, pair.now());  // waiting: never announced
  pair.hub().stream_reset(ids[0], 0x5, pair.now());
  pair.hub().stream_reset(ids[1], 0x5, pair.now());
  // (Before the fix the hub, with no stream left, never sent the MAX_STREAMS.)
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[ids[3]].data.size() == 100; }));
  EXPECT_EQ(pair.client().stats().streams_blocked_by_limit, 0u);
  EXPECT_FALSE(pair.hub().is_closed());
  EXPECT_FALSE(pair.client().is_closed());
  for (const StreamOpened& opened : pair.hub_app().opened) EXPECT_NE(opened.id, ids[2]);
  EXPECT_FALSE(pair.hub().stream_exists(ids[2]));
}

// An honest branch opening thousands of streams at once (a burst of
// proxied connections): before MAX_STREAMS the hub refused all beyond 1024
// and 5,121 opens in one flight closed the connection (EXCESSIVE_LOAD, the
// refusals overflowed its RESET queue). Now every one waits its turn and goes
// through as earlier ones end.
TEST(Connection, ThousandsOfStreamsOpenedAtOnceAllGoThrough) {
  ConnectionPair pair;
  constexpr std::size_t kStreams = 5121;
  std::vector<StreamId> ids;
  for (std::size_t i = 0; i < kStreams; ++i) {
    ids.push_back(*pair.client().open_stream(destination_at(13, 80), ContentClass::bulk, pair.now()));
    pair.client_app().send(ids.back(), pattern(100, i), true);
  }
  EXPECT_EQ(pair.client().stats().streams_blocked_by_limit, kStreams - 1024);
  std::set<StreamId> answered;
  ASSERT_TRUE(pair.run_until(
      [&] {
        // The hub answers each request with its FIN once the request's FIN came.
        for (auto& [id, in] : pair.hub_app().in) {
          if (in.fin && answered.insert(id).second) pair.hub_app().send(id, {}, true);
        }
        return pair.client_app().closed_streams.size() == kStreams;
      },
      ms(120'000)));
  EXPECT_FALSE(pair.client().is_closed());
  EXPECT_FALSE(pair.hub().is_closed());
  EXPECT_TRUE(pair.client_app().resets.empty());
  EXPECT_EQ(pair.hub_app().opened.size(), kStreams);
  for (StreamId id : {ids.front(), ids[2000], ids.back()}) {
    EXPECT_EQ(pair.hub_app().in[id].data, pattern(100, static_cast<std::size_t>(id / 2)));
  }
}

// DPLPMTUD (RFC 8899): from the 1200-byte base the client probes up to its
// ceiling (1472) and, on a path that carries it, sends full-size datagrams.
TEST(Connection, PathMtuIsDiscoveredUpToTheCeiling) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.pmtu_probe_ceiling_bytes = 1472;
  ConnectionPair pair(o);
  const StreamId id = *pair.client().open_stream(destination_at(14, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(2'000'000, 3), true);
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[id].fin; }));
  EXPECT_EQ(pair.hub_app().in[id].data, pattern(2'000'000, 3));
  const ConnectionStats st = pair.client().stats();
  EXPECT_EQ(st.pmtu_bytes, 1472u);
  EXPECT_EQ(st.pmtu_probes_lost, 0u);
  EXPECT_EQ(pair.largest_delivered(true), 1472u);
}

// The first search needs no stream: it runs once the connection is up, so
// the first stream's data neither waits behind a probe nor leaves in
// base-size datagrams (a gateway's tunnel is up long before its first
// client). Both sides probe; then an idle connection stays quiet.
TEST(Connection, PathMtuIsDiscoveredBeforeTheFirstStream) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.pmtu_probe_ceiling_bytes = 1472;
  o.hub.pmtu_probe_ceiling_bytes = 1472;
  ConnectionPair pair(o);
  ASSERT_TRUE(pair.run_until([&] {
    return pair.client().stats().pmtu_bytes == 1472 && pair.hub().stats().pmtu_bytes == 1472;
  }, ms(2'000)));
  const std::uint64_t probes = pair.client().stats().pmtu_probes_sent;
  pair.run_for(ms(5'000));
  EXPECT_EQ(pair.client().stats().pmtu_probes_sent, probes);  // searched once, done
  const StreamId id = *pair.client().open_stream(destination_at(14, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(20'000, 3), true);
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[id].fin; }));
  EXPECT_EQ(pair.largest_delivered(true), 1472u);
  EXPECT_EQ(pair.client().stats().pmtu_probes_sent, probes);  // the data needed no probe
}

// A path that carries 1400 bytes: probes above it are lost (not as
// congestion), the search settles within 16 bytes below 1400, data flows.
TEST(Connection, PathMtuSearchSettlesBelowThePathLimit) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.pmtu_probe_ceiling_bytes = 1472;
  ConnectionPair pair(o);
  pair.set_path_mtu(1400);
  const StreamId id = *pair.client().open_stream(destination_at(14, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(2'000'000, 4), false);  // the stream stays open
  pair.run_for(ms(5'000));
  EXPECT_EQ(pair.hub_app().in[id].data, pattern(2'000'000, 4));
  const ConnectionStats st = pair.client().stats();
  EXPECT_LE(st.pmtu_bytes, 1400u);
  EXPECT_GT(st.pmtu_bytes, 1400u - 16u);
  EXPECT_GE(st.pmtu_probes_lost, 3u);
  EXPECT_EQ(st.ensemble.loss_rounds, 0u);  // lost probes are no congestion signal
}

// The path shrinks under a running transfer (a tunnel in the path): the
// full-size packets vanish; after kPmtuBlackHoleLosses of them the client
// falls back to the 1200-byte base and the transfer completes.
TEST(Connection, PathMtuBlackHoleFallsBackToTheBase) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.pmtu_probe_ceiling_bytes = 1472;
  ConnectionPair pair(o);
  const StreamId id = *pair.client().open_stream(destination_at(14, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(8'000'000, 5), true);
  ASSERT_TRUE(pair.run_until([&] { return pair.client().stats().pmtu_bytes == 1472; }));
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[id].data.size() > 1'000'000; }));
  pair.set_path_mtu(1300);
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[id].fin; }));
  EXPECT_EQ(pair.hub_app().in[id].data, pattern(8'000'000, 5));
  const ConnectionStats st = pair.client().stats();
  EXPECT_GE(st.pmtu_black_holes, 1u);
  EXPECT_LE(st.pmtu_bytes, 1300u);
}

// The sizes of the datagrams the client sends in the next `d` (a first
// flight: shorter than the 20 ms round trip, so no ack can clock out more).
std::vector<std::size_t> client_sends_within(ConnectionPair& pair, Duration d) {
  const std::size_t before = pair.datagrams_sent(true).size();
  pair.run_for(d);
  const auto& sent = pair.datagrams_sent(true);
  std::vector<std::size_t> sizes;
  for (std::size_t i = before; i < sent.size(); ++i) sizes.push_back(sent[i].bytes);
  return sizes;
}

const std::vector<std::size_t> kTenFullSize(10, 1472);

// RFC 9002 7.2: once a probe raised the datagram size to 1472, the initial
// window is 10 x 1472, so a busy period that restarts after idle sends 10
// full-size datagrams, not 8 (10 x 1200 bytes' worth, as Linux TCP would not).
TEST(Connection, PathMtuSetsTheRestartWindowAfterIdle) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.pmtu_probe_ceiling_bytes = 1472;
  ConnectionPair pair(o);
  const StreamId id = *pair.client().open_stream(destination_at(14, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(500'000, 6), false);
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[id].data.size() == 500'000; }));
  ASSERT_EQ(pair.client().stats().pmtu_bytes, 1472u);
  pair.run_for(ms(2'000));  // nothing in flight for far longer than an RTO
  pair.client_app().send(id, pattern(200'000, 7), false);
  EXPECT_EQ(client_sends_within(pair, ms(15)), kTenFullSize);
  EXPECT_EQ(pair.client().stats().ensembles_started, 1u);  // the same ensemble restarted
}

// The next busy period's new ensemble starts from the size in use, not the base.
TEST(Connection, PathMtuCarriesOverToTheNextBusyPeriod) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.pmtu_probe_ceiling_bytes = 1472;
  ConnectionPair pair(o);
  const StreamId id = *pair.client().open_stream(destination_at(14, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(500'000, 8), true);
  ASSERT_TRUE(pair.run_until([&] {
    if (pair.hub_app().in[id].fin && !pair.hub_app().out[id].fin) pair.hub_app().send(id, {}, true);
    return pair.client().stats().streams_open == 0;
  }));
  ASSERT_EQ(pair.client().stats().pmtu_bytes, 1472u);
  pair.run_for(ms(2'000));
  const StreamId next =
      *pair.client().open_stream(destination_at(14, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(next, pattern(200'000, 9), false);
  EXPECT_EQ(client_sends_within(pair, ms(15)), kTenFullSize);
  EXPECT_EQ(pair.client().stats().ensembles_started, 2u);
}

// A black hole takes the size back to the 1200-byte base, and the window's
// unit with it: the restart after idle is 10 x 1200 (not 12 datagrams of
// 1200, which 10 x 1472 bytes would let out).
TEST(Connection, PathMtuBlackHoleTakesTheWindowUnitBackToTheBase) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.pmtu_probe_ceiling_bytes = 1472;
  ConnectionPair pair(o);
  const StreamId id = *pair.client().open_stream(destination_at(14, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(2'000'000, 10), false);
  ASSERT_TRUE(pair.run_until([&] { return pair.client().stats().pmtu_bytes == 1472; }));
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[id].data.size() > 500'000; }));
  pair.set_path_mtu(1200);  // nothing above the base gets through any more
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[id].data.size() == 2'000'000; }));
  pair.run_for(ms(5'000));  // idle; the search below 1472 ends meanwhile
  ASSERT_GE(pair.client().stats().pmtu_black_holes, 1u);
  ASSERT_EQ(pair.client().stats().pmtu_bytes, 1200u);
  pair.client_app().send(id, pattern(200'000, 11), false);
  EXPECT_EQ(client_sends_within(pair, ms(15)), std::vector<std::size_t>(10, 1200));
}

// Send buffers are bounded per connection, not only per stream: with the
// peer's credit withheld, 8 streams x 1 MiB (the stream budget) used to be
// accepted (8 MiB); connection_send_buffer_bytes caps the sum, and the
// streams cut short get StreamWritable as ACKs free room, until all is sent.
TEST(Connection, SendBuffersAreBoundedPerConnection) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.connection_send_buffer_bytes = 256 * 1024;
  ConnectionPair pair(o);
  std::vector<StreamId> ids;
  for (int i = 0; i < 8; ++i) {
    ids.push_back(*pair.client().open_stream(destination_at(12, 80), ContentClass::bulk, pair.now()));
  }
  // Before any step: the app offers 8 x 1 MiB at once.
  std::size_t accepted = 0;
  const auto data = pattern(1 << 20, 7);
  for (StreamId id : ids) accepted += pair.client().stream_write(id, data, pair.now());
  EXPECT_EQ(accepted, 256u * 1024u);
  EXPECT_EQ(pair.client().stats().send_buffered_bytes, 256u * 1024u);
  // Now through the app, which writes what is accepted: everything arrives.
  for (std::size_t i = 0; i < ids.size(); ++i) {
    pair.client_app().out[ids[i]].written = i == 0 ? 256 * 1024 : 0;
    pair.client_app().send(ids[i], data, true);
  }
  std::uint64_t most = 0;
  ASSERT_TRUE(pair.run_until([&] {
    most = std::max(most, pair.client().stats().send_buffered_bytes);
    for (StreamId id : ids) {
      if (!pair.hub_app().in[id].fin) return false;
    }
    return true;
  }));
  EXPECT_LE(most, 256u * 1024u);
  EXPECT_GT(pair.client_app().writable_events, 0u);
  for (StreamId id : ids) EXPECT_EQ(pair.hub_app().in[id].data.size(), data.size());
}

TEST(Connection, StreamAfterIdleResumesFromTemporalCache) {
  congestion::TemporalCache cache;
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client_cache = &cache;
  ConnectionPair pair(o);
  auto id = *pair.client().open_stream(destination_at(12, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(400'000, 12), true);
  ASSERT_TRUE(pair.run_until([&] { return all_received(pair.hub_app(), id, 400'000); }));
  pair.hub_app().send(id, {}, true);
  ASSERT_TRUE(pair.run_until([&] { return !pair.client().stream_exists(id); }));
  pair.run_for(ms(400));  // it lingers (two min RTTs, >= 200 ms), then retires
  EXPECT_EQ(pair.client().stats().ensembles_started, 1u);
  EXPECT_FALSE(pair.client().stats().ensemble.resumed);
  EXPECT_EQ(cache.size(), 1u);  // the retired ensemble's state
  EXPECT_EQ(pair.low_priority_datagrams(), 0u);  // a cold start is validated as it goes

  pair.run_for(ms(1000));  // idle
  auto id2 = *pair.client().open_stream(destination_at(12, 81), ContentClass::bulk, pair.now());
  EXPECT_EQ(pair.client().stats().ensembles_started, 2u);
  EXPECT_TRUE(pair.client().stats().ensemble.resumed);
  pair.client_app().send(id2, pattern(100'000, 13), true);
  ASSERT_TRUE(pair.run_until([&] { return all_received(pair.hub_app(), id2, 100'000); }));
  EXPECT_EQ(pair.hub_app().in[id2].data, pattern(100'000, 13));
  // The resumed window beyond the initial one is unvalidated: DSCP LE.
  EXPECT_GT(pair.low_priority_datagrams(), 0u);
}

TEST(Connection, WithoutACacheANewEnsembleStartsCold) {
  ConnectionPair pair;
  auto id = *pair.client().open_stream(destination_at(12, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(10'000, 14), true);
  pair.hub_app().send(id, {}, true);
  ASSERT_TRUE(pair.run_until([&] { return !pair.client().stream_exists(id); }));
  pair.run_for(ms(400));  // past the linger
  pair.client().open_stream(destination_at(12, 81), ContentClass::bulk, pair.now());
  EXPECT_EQ(pair.client().stats().ensembles_started, 2u);
  EXPECT_FALSE(pair.client().stats().ensemble.resumed);
}

// A page's HTML ends, and the requests it triggers reach the hub about when
// its last ACK does: they join the same ensemble, with its window (and the
// model law's rate estimate), instead of a new one from the cache's window
// (issue 21 item 4, ScenarioModernPage.LinksAfterTheHtml). An ensemble idle
// for longer than its RTO retires as before.
TEST(Connection, AStreamSoonAfterTheLastJoinsTheSameEnsemble) {
  congestion::TemporalCache cache;
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client_cache = &cache;
  ConnectionPair pair(o);
  auto id = *pair.client().open_stream(destination_at(12, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(200'000, 16), true);
  pair.hub_app().send(id, {}, true);
  ASSERT_TRUE(pair.run_until([&] { return !pair.client().stream_exists(id); }));
  ASSERT_TRUE(pair.run_until([&] { return pair.client().stats().ensemble.bytes_in_flight == 0; }));
  const ConnectionStats idle = pair.client().stats();
  ASSERT_GT(idle.ensemble.cwnd_bytes, o.client.ensemble.initial_window_packets * 1200u);
  pair.run_for(ms(20));
  auto id2 = *pair.client().open_stream(destination_at(12, 81), ContentClass::script, pair.now());
  EXPECT_EQ(pair.client().stats().ensembles_started, 1u);
  EXPECT_EQ(pair.client().stats().ensemble.cwnd_bytes, idle.ensemble.cwnd_bytes);
  EXPECT_EQ(cache.size(), 0u);  // nothing retired, nothing learned
  pair.client_app().send(id2, pattern(10'000, 17), true);
  pair.hub_app().send(id2, {}, true);
  ASSERT_TRUE(pair.run_until([&] { return !pair.client().stream_exists(id2); }));
  pair.run_for(ms(400));
  EXPECT_EQ(pair.client().stats().ensemble.members, 0u);  // retired after its RTO idle
  EXPECT_EQ(cache.size(), 1u);
  pair.client().open_stream(destination_at(12, 82), ContentClass::bulk, pair.now());
  EXPECT_EQ(pair.client().stats().ensembles_started, 2u);
  EXPECT_TRUE(pair.client().stats().ensemble.resumed);
}

// The ensemble restarts its counts with each busy period; the connection's
// loss counters (exported as Prometheus counters) must not go back.
TEST(Connection, LossCountersSurviveTheEnsembleRetiring) {
  ConnectionPair pair;
  std::size_t drop_from = 20;  // four client datagrams from here on are lost
  pair.set_filter([&](bool from_client, std::size_t index, Duration*) {
    return from_client && index >= drop_from && index < drop_from + 4 ? 0 : 1;
  });
  ConnectionStats at_open;  // as the busy period's first stream opened
  const auto busy_period = [&](std::uint16_t port) {
    auto id = *pair.client().open_stream(destination_at(12, port), ContentClass::bulk, pair.now());
    at_open = pair.client().stats();
    pair.client_app().send(id, pattern(200'000, port), true);
    pair.hub_app().send(id, {}, true);
    ASSERT_TRUE(pair.run_until([&] { return !pair.client().stream_exists(id); }));
    pair.run_for(ms(400));  // nothing in flight: the ensemble retires after its linger
  };
  busy_period(80);
  EXPECT_EQ(pair.client().stats().ensemble.members, 0u);  // retired
  const ConnectionStats first = pair.client().stats();
  ASSERT_GT(first.packets_lost, 0u);
  ASSERT_GT(first.loss_rounds, 0u);
  EXPECT_EQ(first.packets_lost, first.ensemble.packets_lost);  // one ensemble so far

  drop_from = pair.sent_from_client() + 20;
  busy_period(81);
  EXPECT_EQ(at_open.ensembles_started, 2u);
  EXPECT_EQ(at_open.ensemble.packets_lost, 0u);  // the new ensemble counts from zero...
  EXPECT_EQ(at_open.packets_lost, first.packets_lost);  // ...the connection does not
  EXPECT_EQ(at_open.loss_rounds, first.loss_rounds);
  const ConnectionStats second = pair.client().stats();
  EXPECT_GT(second.ensemble.packets_lost, 0u);
  EXPECT_EQ(second.packets_lost, first.packets_lost + second.ensemble.packets_lost);
  EXPECT_EQ(second.loss_rounds, first.loss_rounds + second.ensemble.loss_rounds);
}

TEST(Connection, CloseReachesThePeer) {
  ConnectionPair pair;
  auto id = *pair.client().open_stream(destination_at(13, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(1000, 15), false);
  ASSERT_TRUE(pair.run_until([&] { return !pair.hub_app().opened.empty(); }));
  pair.client().close(7, "bye", pair.now());
  EXPECT_TRUE(pair.client().is_closed());
  EXPECT_FALSE(pair.client().open_stream(destination_at(13, 81), ContentClass::bulk, pair.now()));
  ASSERT_TRUE(pair.run_until([&] { return pair.hub().is_closed(); }, ms(1000)));
  ASSERT_TRUE(pair.hub_app().connection_closed);
  EXPECT_EQ(pair.hub_app().connection_closed->error_code, 7u);
  EXPECT_EQ(pair.hub_app().connection_closed->reason, "bye");
  const auto received = pair.hub().stats().datagrams_received;
  pair.run_for(ms(100));
  EXPECT_EQ(pair.hub().stats().datagrams_received, received);  // closed: ignored
}

TEST(Connection, IdleTimeoutClosesAQuietConnection) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.idle_timeout = ms(500);
  ConnectionPair pair(o);
  pair.run_for(ms(499));
  EXPECT_FALSE(pair.client().is_closed());
  pair.run_for(ms(5));
  EXPECT_TRUE(pair.client().is_closed());
  ASSERT_TRUE(pair.client_app().connection_closed);
  EXPECT_EQ(pair.client_app().connection_closed->error_code, kErrorIdleTimeout);
}

// ensemble.max_rate (issue 20 item 3): version 2 carries the receive rate,
// only when a rate is configured; without one the encoding is version 1,
// byte for byte what an older peer sends and parses.
TEST(TransportParameters, ReceiveRateTravelsInVersion2Only) {
  ConnectionConfig c;
  const TransportParameters plain = local_transport_parameters(c);
  EXPECT_EQ(plain.version, TransportParameters::kVersion);
  const auto plain_bytes = encode_transport_parameters(plain);
  EXPECT_EQ(plain_bytes.size, 30u);  // the size an older peer requires
  EXPECT_EQ(std::to_integer<int>(plain_bytes.bytes[0]), 1);

  c.max_receive_rate_bps = 95'000'000;
  const TransportParameters v2 = local_transport_parameters(c);
  EXPECT_EQ(v2.version, TransportParameters::kVersion2);
  const auto v2_bytes = encode_transport_parameters(v2);
  EXPECT_EQ(v2_bytes.size, 38u);
  const auto decoded = decode_transport_parameters(v2_bytes.span());
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->max_receive_rate_bps, 95'000'000u);
  EXPECT_EQ(*decoded, v2);
  // Each version has its exact size.
  std::string error;
  EXPECT_FALSE(decode_transport_parameters(v2_bytes.span().first(30), &error));
  EXPECT_EQ(error, "wrong length");
  auto v1_sized_v2 = plain_bytes;
  v1_sized_v2.bytes[0] = std::byte{2};
  EXPECT_FALSE(decode_transport_parameters(v1_sized_v2.span()));
  // A side with only `up` set sends version 2 too (to hear the peer's down).
  ConnectionConfig up_only;
  up_only.ensemble.max_rate_bps = 19'000'000;
  EXPECT_EQ(local_transport_parameters(up_only).version, TransportParameters::kVersion2);
  EXPECT_EQ(local_transport_parameters(up_only).max_receive_rate_bps, 0u);
}

TEST(TransportParameters, SendRateIsTheSmallerOfOwnUpAndPeersDown) {
  EXPECT_EQ(send_rate_limit_bps(0, 0), 0u);
  EXPECT_EQ(send_rate_limit_bps(19'000'000, 0), 19'000'000u);
  EXPECT_EQ(send_rate_limit_bps(0, 95'000'000), 95'000'000u);
  EXPECT_EQ(send_rate_limit_bps(100'000'000, 95'000'000), 95'000'000u);
  EXPECT_EQ(send_rate_limit_bps(19'000'000, 95'000'000), 19'000'000u);
}

// Transport parameters: what a side advertises is what it enforces.
TEST(Connection, LocalTransportParametersDescribeTheConfig) {
  ConnectionConfig c;
  c.stream_receive_window_bytes = 2 << 20;
  c.connection_receive_window_bytes = 32 << 20;
  c.max_incoming_streams = 500;
  c.max_receive_datagram_bytes = 1452;
  c.idle_timeout = ms(20'000);
  c.max_ack_delay = ms(10);
  const TransportParameters p = local_transport_parameters(c);
  EXPECT_EQ(p.initial_max_stream_data, 2u << 20);
  EXPECT_EQ(p.initial_max_data, 32u << 20);
  EXPECT_EQ(p.initial_max_streams, 500u);
  EXPECT_EQ(p.max_datagram_bytes, 1452u);
  EXPECT_EQ(p.idle_timeout_ms, 20'000u);
  EXPECT_EQ(p.max_ack_delay_ms, 10u);
  EXPECT_EQ(decode_transport_parameters(encode_transport_parameters(p).span()), p);
  // A window below the protocol's initial credits: the receiver accepts
  // (and so advertises) at least those.
  c.stream_receive_window_bytes = 4096;
  c.connection_receive_window_bytes = 4096;
  EXPECT_EQ(local_transport_parameters(c).initial_max_stream_data, kInitialStreamCreditBytes);
  EXPECT_EQ(local_transport_parameters(c).initial_max_data, kInitialConnectionCreditBytes);
  // Without a handshake each side assumes the defaults of the other.
  EXPECT_EQ(ConnectionConfig{}.peer.initial_max_stream_data, kInitialStreamCreditBytes);
  EXPECT_EQ(ConnectionConfig{}.peer.initial_max_data, kInitialConnectionCreditBytes);
  EXPECT_EQ(ConnectionConfig{}.peer.initial_max_streams,
            local_transport_parameters(ConnectionConfig{}).initial_max_streams);
}

// The peer's initial credits are what the sender may send before any
// MAX_DATA / MAX_STREAM_DATA: with every hub datagram dropped, the client
// sends exactly peer.initial_max_stream_data of a stream (before, the
// kInitialStreamCreditBytes constant: 16 KiB).
TEST(Connection, PeerTransportParametersSetTheInitialCredits) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.peer.initial_max_stream_data = 5000;
  o.client.peer.initial_max_data = 7000;
  ConnectionPair pair(o);
  pair.set_filter([](bool from_client, std::size_t, Duration*) { return from_client ? 1 : 0; });
  const StreamId a = *pair.client().open_stream(destination_at(15, 80), ContentClass::bulk, pair.now());
  const StreamId b = *pair.client().open_stream(destination_at(15, 81), ContentClass::bulk, pair.now());
  pair.client_app().send(a, pattern(100'000, 1), false);
  pair.client_app().send(b, pattern(100'000, 2), false);
  pair.run_for(ms(500));
  EXPECT_EQ(pair.hub_app().in[a].data.size() + pair.hub_app().in[b].data.size(), 7000u);
  EXPECT_LE(pair.hub_app().in[a].data.size(), 5000u);
  EXPECT_LE(pair.hub_app().in[b].data.size(), 5000u);
}

// Never above the peer's max_datagram_bytes; idle timeout is the smaller.
TEST(Connection, PeerTransportParametersLimitDatagramsAndIdleTimeout) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.max_datagram_bytes = 1452;
  o.client.peer.max_datagram_bytes = 1300;
  o.client.peer.idle_timeout_ms = 700;
  ConnectionPair pair(o);
  const StreamId id = *pair.client().open_stream(destination_at(15, 82), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(200'000, 3), true);
  ASSERT_TRUE(pair.run_until([&] { return pair.hub_app().in[id].fin; }));
  EXPECT_LE(pair.largest_delivered(true), 1300u);
  EXPECT_GT(pair.largest_delivered(true), 1200u);
  // A quiet connection (no streams) times out after the peer's 700 ms.
  ConnectionPair quiet(o);
  quiet.run_for(ms(699));
  EXPECT_FALSE(quiet.client().is_closed());
  quiet.run_for(ms(5));
  EXPECT_TRUE(quiet.client().is_closed());
  ASSERT_TRUE(quiet.client_app().connection_closed);
  EXPECT_EQ(quiet.client_app().connection_closed->error_code, kErrorIdleTimeout);
}

TEST(Connection, OpenStreamsKeepTheConnectionAlive) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.idle_timeout = ms(500);
  o.hub.idle_timeout = ms(500);
  ConnectionPair pair(o);
  auto id = *pair.client().open_stream(destination_at(14, 80), ContentClass::bulk, pair.now());
  pair.client_app().send(id, pattern(10, 16), false);
  pair.run_for(ms(3000));  // no data, but keepalive PINGs
  EXPECT_FALSE(pair.client().is_closed());
  EXPECT_FALSE(pair.hub().is_closed());
}

TEST(Connection, WrongStreamParityIsAProtocolViolation) {
  ConnectionPair pair;
  // The "client" opening an odd id: the hub's parity.
  pair.inject(true, craft({StreamOpenFrame{1, destination_at(1, 1), ContentClass::bulk}}, 0));
  EXPECT_TRUE(pair.hub().is_closed());
  auto event = pair.hub().poll_event();
  ASSERT_TRUE(event && std::holds_alternative<ConnectionClosed>(*event));
  EXPECT_EQ(std::get<ConnectionClosed>(*event).error_code, kErrorProtocolViolation);
  ASSERT_TRUE(pair.run_until([&] { return pair.client().is_closed(); }, ms(1000)));
  ASSERT_TRUE(pair.client_app().connection_closed);
  EXPECT_EQ(pair.client_app().connection_closed->error_code, kErrorProtocolViolation);
}

TEST(Connection, DataBeyondCreditIsAFlowControlViolation) {
  ConnectionPair pair;
  const std::vector<std::byte> data(1000);
  // Offset just below the initial stream credit: the frame ends 1000 - 1 bytes past it.
  pair.inject(true, craft({StreamOpenFrame{0, destination_at(1, 1), ContentClass::bulk},
                           StreamFrame{0, kInitialStreamCreditBytes + (1 << 20) - 999, false, data}},
                          0));
  EXPECT_TRUE(pair.hub().is_closed());
  ASSERT_TRUE(pair.run_until([&] { return pair.client().is_closed(); }, ms(1000)));
  EXPECT_EQ(pair.client_app().connection_closed->error_code, kErrorFlowControl);
}

TEST(Connection, UncoupledEnsembleStillCarriesOneStreamPerPacket) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.ensemble.coupling = congestion::CouplingMode::none;
  ConnectionPair pair(o);
  std::vector<StreamId> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(*pair.client().open_stream(destination_at(15, 80), ContentClass::bulk, pair.now()));
    pair.client_app().send(ids.back(), pattern(60'000, 40 + i), true);
  }
  ASSERT_TRUE(pair.run_until([&] {
    for (StreamId id : ids) {
      if (!all_received(pair.hub_app(), id, 60'000)) return false;
    }
    return true;
  }));
}


// The gateway's relay reads from its socket no more than the stream takes.
TEST(Connection, WritableBytesIsWhatAWriteAcceptsAndZeroAsksForWritable) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.hub.stream_receive_window_bytes = 64 * 1024;
  o.client.stream_send_buffer_bytes = 32 * 1024;
  ConnectionPair pair(o);
  pair.hub_app().reading = false;
  auto id = *pair.client().open_stream(destination_at(9, 80), ContentClass::bulk, pair.now());
  EXPECT_EQ(pair.client().stream_writable_bytes(id), 32u * 1024);
  const auto data = pattern(200'000, 11);
  std::size_t written = 0;
  for (int i = 0; i < 200 && written < data.size(); ++i) {
    const std::size_t room = pair.client().stream_writable_bytes(id);
    if (room > 0) {
      const auto chunk = std::span(data).subspan(written, std::min(room, data.size() - written));
      EXPECT_EQ(pair.client().stream_write(id, chunk, pair.now()), chunk.size());  // never short
      written += chunk.size();
    }
    pair.run_for(ms(10));
  }
  EXPECT_EQ(written, 65'536u + 32'768u);  // the hub's window plus our buffer
  EXPECT_EQ(pair.client().stream_writable_bytes(id), 0u);
  EXPECT_EQ(pair.client().stream_writable_bytes(12345), 0u);  // unknown stream
  const auto before = pair.client_app().writable_events;
  pair.hub_app().reading = true;  // room comes back: StreamWritable, without any short write
  pair.run_for(ms(200));
  EXPECT_GT(pair.client_app().writable_events, before);
  EXPECT_GT(pair.client().stream_writable_bytes(id), 0u);
}

TEST(Connection, KeepAlivePingsAnIdleConnectionWithoutStreams) {
  ConnectionPair::Options o = ConnectionPair::default_options();
  o.client.idle_timeout = ms(500);
  o.hub.idle_timeout = ms(500);
  o.client.keep_alive = true;
  ConnectionPair pair(o);
  pair.run_for(ms(5'000));  // ten idle timeouts, no stream ever opened
  EXPECT_FALSE(pair.client().is_closed());
  EXPECT_FALSE(pair.hub().is_closed());
}

}  // namespace
}  // namespace egw::tunnel
