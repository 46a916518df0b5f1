// AckTracker's decimation (issue 20, the asymmetric link): past startup, about
// one ACK per quarter RTT of packets instead of one per two, without seeing a
// loss any later and without making a slow sender wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tests/tunnel/connection_pair.h"
#include "tunnel/ack_tracker.h"

namespace egw::tunnel {
namespace {

const Instant t0 = instant_at(ms(1000));

AckTracker make_tracker(bool decimation) {
  return AckTracker(AckTrackerConfig{.max_ack_delay = ms(25),
                                     .ack_every_packets = 2,
                                     .decimation = decimation,
                                     .decimation_max_packets = 10,
                                     .decimation_after_packets = 100});
}

struct SentAck {
  Instant at;
  PacketNumber largest;
};

// A receiver fed one ack-eliciting packet every `gap` from number `from` to
// `to` (exclusive, `skip` never arrives), sending each ACK at its deadline.
struct Receiver {
  AckTracker tracker;
  std::vector<SentAck> acks;

  void flush_until(Instant now) {
    while (auto due = tracker.ack_deadline()) {
      if (*due > now) return;
      acks.push_back({std::max(*due, t0), *tracker.largest_received()});
      tracker.on_ack_sent(*due);
    }
  }
  void feed(PacketNumber from, PacketNumber to, Duration gap, Instant start,
            std::optional<PacketNumber> skip = std::nullopt) {
    for (PacketNumber n = from; n < to; ++n) {
      const Instant at = start + gap * static_cast<std::int64_t>(n - from);
      flush_until(at);
      if (n != skip) tracker.on_packet_received(n, true, at);
      flush_until(at);
    }
  }
  std::size_t acks_between(Instant from, Instant to) const {
    std::size_t count = 0;
    for (const SentAck& a : acks) count += a.at >= from && a.at < to;
    return count;
  }
};

// 4 Mbit/s of 1,400-byte packets is one every 2.8 ms; 3 ms, 60 ms RTT (the
// lab's asymmetric link): the timer is 15 ms, 5 packets.
TEST(AckDecimation, FewerAcksPer100PacketsPastStartup) {
  for (const bool decimation : {false, true}) {
    Receiver r{make_tracker(decimation), {}};
    r.tracker.on_rtt_sample(ms(60));
    r.feed(0, 400, ms(3), t0);
    // Packets 200..299 arrive in [t0 + 600 ms, t0 + 900 ms).
    const std::size_t acks = r.acks_between(t0 + ms(600), t0 + ms(900));
    if (decimation) {
      EXPECT_GE(acks, 15u);  // at least ~4 per RTT (5 RTTs)
      EXPECT_LE(acks, 25u);  // one per 4-5 packets
    } else {
      EXPECT_EQ(acks, 50u);  // every second packet, as before
    }
  }
}

// Faster: one packet every 0.5 ms (~22 Mbit/s): at most 10 packets per ACK.
TEST(AckDecimation, StretchIsBoundedByMaxPackets) {
  Receiver r{make_tracker(true), {}};
  r.tracker.on_rtt_sample(ms(60));
  r.feed(0, 1000, us(500), t0);
  const std::size_t acks = r.acks_between(t0 + ms(250), t0 + ms(500));  // packets 500..999
  EXPECT_GE(acks, 50u);
  EXPECT_LE(acks, 55u);
  EXPECT_EQ(r.tracker.ack_threshold(), 10u);
}

// The first 100 packets (the sender's slow start) are acknowledged every
// second packet, and so again after a silence.
TEST(AckDecimation, StartupAndRestartAckEverySecondPacket) {
  Receiver r{make_tracker(true), {}};
  r.tracker.on_rtt_sample(ms(60));
  r.feed(0, 100, ms(3), t0);
  EXPECT_EQ(r.acks.size(), 50u);
  r.feed(100, 300, ms(3), t0 + ms(300));
  EXPECT_GT(r.tracker.ack_threshold(), 2u);
  // One second of silence: a new busy period.
  const Instant later = t0 + ms(2'000);
  r.flush_until(later);
  const std::size_t before = r.acks.size();
  r.feed(300, 340, ms(3), later);
  EXPECT_EQ(r.acks.size() - before, 20u);
}

// A hole is seen as early as with an ACK every second packet: the packets
// just past it are acknowledged on arrival, so the sender holds an ACK of
// hole + 3 (its packet threshold) when hole + 3 arrives.
TEST(AckDecimation, LossIsReportedAsSoonAsWithoutDecimation) {
  const PacketNumber hole = 250;
  for (const bool decimation : {false, true}) {
    Receiver r{make_tracker(decimation), {}};
    r.tracker.on_rtt_sample(ms(60));
    r.feed(0, 300, ms(3), t0, hole);
    const Instant third_past = t0 + ms(3) * static_cast<std::int64_t>(hole + 3);
    bool reported = false;
    for (const SentAck& a : r.acks) {
      if (a.largest >= hole + 3 && a.at <= third_past) reported = true;
    }
    EXPECT_TRUE(reported) << "decimation " << decimation;
  }
}

// A lone packet past startup waits at most a quarter of the RTT, or
// max_ack_delay before the receiver has an RTT.
TEST(AckDecimation, TimerIsAQuarterRttAtMostMaxAckDelay) {
  Receiver r{make_tracker(true), {}};
  r.tracker.on_rtt_sample(ms(40));
  r.feed(0, 150, ms(1), t0);  // past startup
  r.flush_until(t0 + ms(190));
  r.tracker.on_packet_received(150, true, t0 + ms(190));
  EXPECT_EQ(r.tracker.ack_deadline(), t0 + ms(200));  // 40 / 4
  Receiver no_rtt{make_tracker(true), {}};
  no_rtt.feed(0, 150, ms(1), t0);
  no_rtt.flush_until(t0 + ms(190));
  no_rtt.tracker.on_packet_received(150, true, t0 + ms(190));
  EXPECT_EQ(no_rtt.tracker.ack_deadline(), t0 + ms(215));  // max_ack_delay
}

// The same through two connections: a 1 MB download paced at 4 Mbit/s over
// a 60 ms RTT, with and without decimation.
struct Download {
  std::size_t data_datagrams = 0;  // hub to client
  std::size_t ack_datagrams = 0;   // client to hub
  Duration took{0};
  congestion::EnsembleStats hub;
  std::uint64_t client_eliciting = 0;  // credit updates, not ACKs
};

Download download(bool decimation, const std::vector<std::size_t>& drop = {}) {
  auto o = testing::ConnectionPair::default_options();
  o.client.ack_decimation = decimation;
  o.hub.ack_decimation = decimation;
  o.hub.ensemble.max_rate_bps = 4'000'000;
  o.one_way_delay = ms(30);
  testing::ConnectionPair pair(o);
  pair.set_filter([&](bool from_client, std::size_t index, Duration*) {
    return !from_client && std::find(drop.begin(), drop.end(), index) != drop.end() ? 0 : 1;
  });
  const StreamId id = *pair.hub().open_stream(testing::destination_at(2, 80), ContentClass::bulk, pair.now());
  const auto data = testing::pattern(1'000'000, 7);
  pair.hub_app().send(id, data, true);
  auto& in = pair.client_app().in;
  EXPECT_TRUE(pair.run_until([&] { return in[id].fin && in[id].data.size() == data.size(); }));
  EXPECT_EQ(in[id].data, data);
  return {pair.sent_from_hub(), pair.sent_from_client(), pair.now() - Instant{},
          pair.hub().stats().ensemble, pair.client().stats().ensemble.packets_sent};
}

// 4 Mbit/s of 1,160-byte datagrams over a 60 ms RTT: ~6 packets a quarter
// RTT, so about one ACK per 6 packets (the first 100 at one per 2).
TEST(AckDecimation, DownloadSendsUnderAQuarterOfTheAcks) {
  const Download before = download(false);
  const Download after = download(true);
  EXPECT_GT(before.ack_datagrams * 5, before.data_datagrams * 2);  // ~1 per 2
  EXPECT_LT(after.ack_datagrams * 4, after.data_datagrams);        // < 1 per 4
  EXPECT_LT(after.ack_datagrams * 2, before.ack_datagrams);
  EXPECT_LE(after.took, before.took + ms(60));                      // no slower
  // Credit goes per half window read, not per packet.
  EXPECT_LT(after.client_eliciting * 50, after.data_datagrams);
}

// Losses are found by the same ACKs, in the same rounds, with no timeout.
TEST(AckDecimation, LossesAreFoundInTheSameRounds) {
  const std::vector<std::size_t> drop = {300, 301, 600};
  const Download before = download(false, drop);
  const Download after = download(true, drop);
  EXPECT_GE(after.hub.packets_lost, 3u);
  EXPECT_EQ(after.hub.loss_rounds, before.hub.loss_rounds);
  EXPECT_EQ(after.hub.rto_count, 0u);
  EXPECT_LE(after.took, before.took + ms(60));
}

}  // namespace
}  // namespace egw::tunnel
