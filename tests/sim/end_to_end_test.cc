// The simulator driving the real tunnel core end to end. Topology (scenario.h):
//
//   left(0) [client] ==== 10 Mbit/s, 50 ms one way ==== right(0) [server]
//
// Every test prints its parameters and seed (Scenario::describe()).
#include <chrono>
#include <iostream>

#include <gtest/gtest.h>

#include "tests/sim/scenario.h"

namespace egw::sim {
namespace {

constexpr ByteCount kOneMegabyte = 1 << 20;

struct BulkRun {
  bool done = false;
  Duration completion{0};
  ByteCount delivered = 0;
  std::uint64_t mismatches = 0;
  std::uint64_t reverse_delivered = 0;
  std::uint64_t reverse_dropped = 0;
  std::uint64_t forward_dropped = 0;
  std::uint64_t events = 0;
};

BulkRun run_bulk(const PathConfig& path, BulkConfig::Direction direction, ByteCount bytes) {
  Scenario s(path);
  std::cout << "[ scenario ] " << s.describe() << "\n";
  const std::size_t pair = s.add_pair();
  BulkConfig config;
  config.bytes = bytes;
  config.direction = direction;
  auto& bulk = s.add_bulk(pair, config, instant_at(ms(10)));
  BulkRun r;
  r.done = s.run_until_done(instant_at(ms(120'000)));
  if (auto t = bulk.completion_time()) r.completion = *t;
  r.delivered = bulk.bytes_delivered();
  r.mismatches = bulk.mismatches();
  r.reverse_delivered = s.network().reverse().stats().packets_delivered;
  r.reverse_dropped = s.network().reverse().stats().dropped_total();
  r.forward_dropped = s.network().forward().stats().dropped_total();
  r.events = s.loop().events_run();
  const auto sender = (direction == BulkConfig::Direction::server_to_client ? s.server(pair) : s.client(pair))
                          .connection()
                          .stats();
  std::cout << "[ result   ] completion " << to_seconds(r.completion) << " s, events " << r.events
            << ", drops fwd/rev " << r.forward_dropped << "/" << r.reverse_dropped << ", sender: lost "
            << sender.ensemble.packets_lost << ", loss rounds " << sender.ensemble.loss_rounds << ", RTOs "
            << sender.ensemble.rto_count << ", retransmitted " << sender.stream_bytes_retransmitted
            << " B, cwnd " << sender.ensemble.cwnd_bytes << " B, srtt " << sender.ensemble.srtt.count()
            << " us\n";
  return r;
}

PathConfig ten_megabit_path() {
  PathConfig path;
  path.bottleneck_bits_per_second = 10'000'000;
  path.one_way_delay = ms(50);
  path.queue_limit_packets = 0;
  path.packet_bytes = 1200;
  path.seed = 7;
  path.max_pairs = 1;
  return path;
}

TEST(EndToEndTest, OneMegabyteDownloadArrivesCompleteAndInOrder) {
  const auto cpu_start = std::chrono::steady_clock::now();  // test harness only
  const BulkRun r = run_bulk(ten_megabit_path(), BulkConfig::Direction::server_to_client, kOneMegabyte);
  const auto cpu = std::chrono::steady_clock::now() - cpu_start;
  ASSERT_TRUE(r.done);
  EXPECT_EQ(r.delivered, kOneMegabyte);
  EXPECT_EQ(r.mismatches, 0u);  // every byte at its offset: complete and in order
  // Lower bound: one RTT for the request, then 2^20 B of stream data, which
  // cannot beat the wire (headers only add): 2^20 * 8 / 10^7 s = 0.839 s.
  EXPECT_GT(r.completion, ms(100 + 839));
  // Slow start from 10 packets reaches the 125 kB BDP (10^7 * 0.1 / 8) in a
  // handful of RTTs; 3 s is a loose ceiling that still catches a stall.
  EXPECT_LT(r.completion, ms(3'000));
  std::cout << "[ cpu      ] " << std::chrono::duration_cast<std::chrono::milliseconds>(cpu).count()
            << " ms\n";
  EXPECT_LT(cpu, std::chrono::seconds(20));  // sanitized debug build on a shared machine
}

TEST(EndToEndTest, SameSeedGivesIdenticalRun) {
  PathConfig path = ten_megabit_path();
  path.queue_limit_packets = 50;  // below the BDP: slow start overshoots and loses
  path.loss_probability = 0.005;
  const BulkRun a = run_bulk(path, BulkConfig::Direction::server_to_client, kOneMegabyte);
  const BulkRun b = run_bulk(path, BulkConfig::Direction::server_to_client, kOneMegabyte);
  ASSERT_TRUE(a.done);
  EXPECT_EQ(a.mismatches, 0u);
  EXPECT_EQ(a.delivered, kOneMegabyte);
  EXPECT_GT(a.reverse_dropped, 0u);  // losses were recovered, not avoided
  EXPECT_EQ(a.completion, b.completion);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.reverse_delivered, b.reverse_delivered);
  EXPECT_EQ(a.reverse_dropped, b.reverse_dropped);
}

TEST(EndToEndTest, UploadWithReorderingAndLossArrivesIntact) {
  PathConfig path = ten_megabit_path();
  path.loss_probability = 0.01;
  path.max_jitter = ms(3);  // > the 1 ms packet spacing: packets overtake
  path.seed = 11;
  const BulkRun r = run_bulk(path, BulkConfig::Direction::client_to_server, kOneMegabyte);
  ASSERT_TRUE(r.done);
  EXPECT_GT(r.forward_dropped, 0u);  // the upload crosses the forward link
  EXPECT_EQ(r.delivered, kOneMegabyte);
  EXPECT_EQ(r.mismatches, 0u);
}

TEST(EndToEndTest, BytesDeliveredGrowOverTime) {
  Scenario s(ten_megabit_path());
  const std::size_t pair = s.add_pair();
  BulkConfig config;
  config.bytes = kOneMegabyte;
  auto& bulk = s.add_bulk(pair, config, instant_at(ms(0)));
  ASSERT_TRUE(s.run_until_done(instant_at(ms(60'000))));
  // Nothing can arrive before the request's and the first answer's trip: 2 * 50 ms.
  EXPECT_EQ(bulk.bytes_delivered_by(instant_at(ms(100))), 0u);
  const ByteCount half_way = bulk.bytes_delivered_by(*bulk.started_at() + *bulk.completion_time() / 2);
  EXPECT_GT(half_way, 0u);
  EXPECT_LT(half_way, kOneMegabyte);
  EXPECT_EQ(bulk.bytes_delivered_by(*bulk.completed_at()), kOneMegabyte);
}

TEST(EndToEndTest, WebPageFetchesHtmlFirstThenEmbeddedObjects) {
  PathConfig path = ten_megabit_path();
  path.bottleneck_bits_per_second = 800'000;  // E-TCP section 4 scenario
  path.packet_bytes = 512;
  path.queue_limit_packets = 10;
  Scenario s(path);
  std::cout << "[ scenario ] " << s.describe() << "\n";
  const std::size_t pair = s.add_pair();
  Page page = {{6'000, ContentClass::html, true},
               {3'000, ContentClass::script, false},
               {10'000, ContentClass::image, false},
               {12'000, ContentClass::image, false},
               {2'000, ContentClass::html, true}};
  WebClientConfig config;
  config.max_concurrent = 2;
  auto& web = s.add_web(pair, page, config, instant_at(ms(0)));
  ASSERT_TRUE(s.run_until_done(instant_at(ms(60'000))));
  EXPECT_EQ(web.errors(), 0u);
  const auto& objects = web.objects();
  for (std::size_t i = 0; i < page.size(); ++i) {
    ASSERT_TRUE(objects[i].completed_at.has_value()) << i;
    EXPECT_EQ(objects[i].bytes, page[i].size_bytes) << i;
  }
  // Embedded objects are requested only once the first HTML has arrived.
  for (std::size_t i = 1; i < page.size(); ++i) {
    EXPECT_GE(*objects[i].requested_at, *objects[0].completed_at) << i;
  }
  EXPECT_LE(web.max_outstanding_seen(), 2u);
  // HTML completion is the later of the two HTML parts.
  EXPECT_EQ(*web.html_completed_at(), std::max(*objects[0].completed_at, *objects[4].completed_at));
  EXPECT_GE(*web.page_time(), *web.html_time());
  // 33'000 B of content at 800 kbit/s takes at least 0.33 s.
  EXPECT_GT(*web.page_time(), ms(330));
}


TEST(EndToEndTest, StreamsOfOnePairAndSeveralPairsShareTheBottleneck) {
  PathConfig path = ten_megabit_path();
  path.queue_limit_packets = 100;
  path.max_pairs = 2;
  Scenario s(path);
  std::cout << "[ scenario ] " << s.describe() << "\n";
  const std::size_t a = s.add_pair();
  const std::size_t b = s.add_pair();
  BulkConfig config;
  config.bytes = 512 * 1024;
  // Two streams in pair a (one ensemble), one in pair b, joining at 0, 0.5 and 1 s.
  auto& a1 = s.add_bulk(a, config, instant_at(ms(0)));
  auto& a2 = s.add_bulk(a, config, instant_at(ms(500)));
  auto& b1 = s.add_bulk(b, config, instant_at(ms(1'000)));
  const bool done = s.run_until_done(instant_at(ms(60'000)));
  for (const BulkTransfer* t : {&a1, &a2, &b1}) {
    std::cout << "[ result   ] stream " << *t->stream_id() << ": " << t->bytes_delivered() << " B, done at "
              << (t->completed_at() ? to_seconds(t->completed_at()->time_since_epoch()) : -1.0) << " s\n";
  }
  for (std::size_t p : {a, b}) {
    const auto st = s.server(p).connection().stats();
    std::cout << "[ result   ] pair " << p << " sender: sent " << st.datagrams_sent << ", lost "
              << st.ensemble.packets_lost << ", loss rounds " << st.ensemble.loss_rounds << ", RTOs "
              << st.ensemble.rto_count << ", cwnd " << st.ensemble.cwnd_bytes << ", in flight "
              << st.ensemble.bytes_in_flight << ", members " << st.ensemble.members
              << ", closed " << s.server(p).connection().is_closed() << "\n";
  }
  ASSERT_TRUE(done);
  for (const BulkTransfer* t : {&a1, &a2, &b1}) {
    EXPECT_EQ(t->bytes_delivered(), 512u * 1024);
    EXPECT_EQ(t->mismatches(), 0u);
  }
  EXPECT_NE(*a1.stream_id(), *a2.stream_id());
  // 3 * 512 KiB through 10 Mbit/s needs at least 3 * 2^19 * 8 / 10^7 s = 1.26 s.
  const Instant last = std::max({*a1.completed_at(), *a2.completed_at(), *b1.completed_at()});
  EXPECT_GT(last, instant_at(ms(1'258)));
  EXPECT_LE(s.network().reverse().stats().max_queue_packets, 100u);
}

TEST(EndToEndTest, StreamsCloseOnBothEnds) {
  Scenario s(ten_megabit_path());
  const std::size_t pair = s.add_pair();
  BulkConfig config;
  config.bytes = 64 * 1024;
  auto& bulk = s.add_bulk(pair, config, instant_at(ms(0)));
  ASSERT_TRUE(s.run_until_done(instant_at(ms(10'000))));
  // StreamClosed needs the last ACKs too: give them a few RTTs.
  s.run_until(s.now() + ms(1'000));
  EXPECT_TRUE(bulk.closed());
  EXPECT_FALSE(bulk.reset());
  EXPECT_EQ(s.client(pair).stats().unrouted_events, 0u);
  EXPECT_EQ(s.server(pair).stats().unrouted_events, 0u);
}

TEST(EndToEndTest, SecondConnectionResumesFromTheTemporalCache) {
  congestion::TemporalCache server_cache;
  Scenario s(ten_megabit_path());
  PairConfig pc;
  pc.server_cache = &server_cache;
  BulkConfig config;
  config.bytes = kOneMegabyte;
  std::size_t pair = s.add_pair(pc);
  auto& first = s.add_bulk(pair, config, s.now());
  ASSERT_TRUE(s.run_until_done(instant_at(ms(30'000))));
  s.run_until(s.now() + ms(1'000));
  s.close_pair(pair);
  s.run_until(s.now() + ms(1'000));
  s.remove_pair(pair);  // the ensemble ends; its state stays in server_cache
  pair = s.add_pair(pc);
  auto& second = s.add_bulk(pair, config, s.now());
  ASSERT_TRUE(s.run_until_done(s.now() + ms(30'000)));
  EXPECT_TRUE(s.server(pair).connection().stats().ensemble.resumed);
  EXPECT_EQ(second.mismatches(), 0u);
  std::cout << "[ result   ] first " << to_seconds(*first.completion_time()) << " s, second "
            << to_seconds(*second.completion_time()) << " s\n";
  // Skipping slow start must not make the repeat slower.
  EXPECT_LE(*second.completion_time(), *first.completion_time());
}


TEST(EndToEndTest, RecoversFromSlowStartOvershootAtEveryQueueSize) {
  // The BDP is 10^7 * 0.1 / 8 = 125 kB ~= 102 packets of 1228 B on the wire:
  // every queue below leaves slow start with a burst of losses to repair.
  for (std::size_t queue : {20u, 50u, 100u}) {
    PathConfig path = ten_megabit_path();
    path.queue_limit_packets = queue;
    Scenario s(path);
    const std::size_t pair = s.add_pair();
    BulkConfig config;
    config.bytes = kOneMegabyte;
    auto& bulk = s.add_bulk(pair, config, instant_at(ms(0)));
    const bool done = s.run_until_done(instant_at(ms(30'000)));
    const auto st = s.server(pair).connection().stats();
    std::cout << "[ result   ] queue " << queue << ": delivered " << bulk.bytes_delivered() << " B, lost "
              << st.ensemble.packets_lost << ", retransmitted " << st.stream_bytes_retransmitted
              << " B, in flight " << st.ensemble.bytes_in_flight << "\n";
    EXPECT_TRUE(done) << "queue " << queue;
    EXPECT_GT(s.network().reverse().stats().dropped(DropCause::queue_full), 0u);
    EXPECT_GT(st.stream_bytes_retransmitted, 0u);
    EXPECT_EQ(bulk.mismatches(), 0u);
  }
}

}  // namespace
}  // namespace egw::sim
