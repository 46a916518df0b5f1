// The categories negotiated in the handshake (session.h "Categories",
// kFlagCategories in transport_parameters.h): two current gateways send
// each other categories with no configuration and no extra message; a hub
// of an older build (it rejects the unknown flag bit, played by a tap that
// opens the initiation with the hub's key) is reached on the seventh attempt
// and gets content types, one of sessions 21-33 (it knows categories but
// not ACK timestamps) on the fifth with categories, one of sessions 34-41
// (all but the urgent lane) on the third with categories and timestamps; a
// gateway that does not announce them gets content types too; the config
// override wins.
#include <gtest/gtest.h>

#include "tests/session/session_pair.h"
#include "tunnel/crypto/noise_ik.h"
#include "tunnel/session/handshake_messages.h"

namespace egw::tunnel::session::testing {
namespace {

// The flags of an initiation the hub (its private key) would read; nullopt
// for anything else.
std::optional<std::uint8_t> initiation_flags(const WireDatagram& d, const crypto::Key32& hub_private) {
  const auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(d.bytes.data()), d.bytes.size());
  const auto initiation = parse_initiation(bytes);
  if (!initiation) return std::nullopt;
  crypto::NoiseIkConfig config;
  config.initiator = false;
  config.local_static_private = hub_private;
  config.prologue = noise_prologue();
  config.use_psk = true;
  crypto::NoiseIk noise(config);
  const auto payload_bytes = noise.read_message(initiation->noise_message);
  const auto payload = payload_bytes ? decode_initiation_payload(*payload_bytes) : std::nullopt;
  if (!payload) return std::nullopt;
  return payload->params.flags;
}

struct Seen {
  ContentClass at_hub = ContentClass::bulk;     // a realtime stream the branch opened
  ContentClass at_branch = ContentClass::bulk;  // the hub then made it streaming
};

// Connects (within `connect_for`), opens a realtime stream branch -> hub,
// then the hub reclassifies it as streaming: what each side received.
Seen exchange(SessionPair& pair, Duration connect_for = ms(500)) {
  pair.start();
  pair.branch_session().connect(pair.now);
  pair.run_for(connect_for);
  Seen seen;
  Connection* b = pair.branch_session().connection();
  if (!b) return seen;
  const auto id = b->open_stream(Destination{}, ContentClass::realtime, pair.now);
  EXPECT_EQ(b->stream_write(*id, std::array<std::byte, 100>{}, pair.now), 100u);
  std::optional<ContentClass> opened;
  pair.run_for(ms(200), [&] {
    SessionPair::events(pair.branch_session());
    for (auto& e : SessionPair::events(pair.hub_session())) {
      if (const auto* o = std::get_if<StreamOpened>(&e)) opened = o->content_class;
    }
  });
  if (!opened) return seen;
  seen.at_hub = *opened;
  pair.hub_session().connection()->set_stream_class(*id, ContentClass::streaming, pair.now);
  pair.run_for(ms(200), [&] {
    SessionPair::events(pair.branch_session());
    SessionPair::events(pair.hub_session());
  });
  seen.at_branch = pair.branch_session().connection()->stream_class(*id).value_or(ContentClass::bulk);
  return seen;
}

TEST(CategoryNegotiation, TwoCurrentGatewaysSendCategoriesWithoutConfigOrExtraMessages) {
  SessionPair pair;
  std::vector<std::size_t> handshake_sizes;
  std::optional<std::uint8_t> flags;
  pair.tap = [&](WireDatagram& d) {
    const auto type = static_cast<std::uint8_t>(d.bytes[0]);
    if (type == 2 || type == 3) handshake_sizes.push_back(d.bytes.size());
    if (const auto f = initiation_flags(d, pair.hub_keys.private_key)) flags = f;
    return true;
  };
  const Seen s = exchange(pair);
  EXPECT_EQ(s.at_hub, ContentClass::realtime);
  EXPECT_EQ(s.at_branch, ContentClass::streaming);
  EXPECT_EQ(flags, TransportParameters::kFlagCategories | TransportParameters::kFlagAckTimestamps |
                       TransportParameters::kFlagUrgentLane);
  // Both stamp their ACKs (session.h, "ACK timestamps").
  EXPECT_GT(pair.branch_session().connection()->stats().ack_timestamps_received, 0u);
  EXPECT_GT(pair.hub_session().connection()->stats().ack_timestamps_received, 0u);
  // Both send on the urgent lane (the request, the ACKs).
  EXPECT_GT(pair.branch_session().connection()->stats().urgent_packets_sent, 0u);
  EXPECT_GT(pair.hub_session().connection()->stats().urgent_packets_sent, 0u);
  // One initiation, one response, of the sizes an older build expects.
  EXPECT_EQ(handshake_sizes, (std::vector<std::size_t>{kInitiationBytes, kResponseBytes}));
  EXPECT_EQ(pair.branch_session().stats().handshakes_sent, 1u);
}

// A hub of an older build: it drops every initiation with a flag in
// `rejects` (unknown to it). Connects within `connect_for`, exchanges the
// classes, then runs through a rekey; what each side saw and how many
// initiations the hub dropped and read.
struct OlderHubRun {
  Seen seen;
  std::uint64_t handshakes = 0;
  bool stamps = false;  // either side received an ACK timestamp
  bool urgent = false;  // either side sent on the urgent lane
  std::uint64_t rekeys = 0;
  int dropped = 0, passed = 0;
};
OlderHubRun run_older_hub(std::uint8_t rejects, Duration connect_for) {
  SessionTimers timers;
  timers.rekey_after = ms(2'000);
  SessionPair pair(timers);
  OlderHubRun r;
  pair.tap = [&](WireDatagram& d) {
    const auto flags = initiation_flags(d, pair.hub_keys.private_key);
    if (!flags) return true;
    const bool drop = (*flags & rejects) != 0;
    ++(drop ? r.dropped : r.passed);
    return !drop;
  };
  r.seen = exchange(pair, connect_for);
  EXPECT_TRUE(pair.branch_session().is_up());
  if (!pair.branch_session().is_up()) return r;
  r.handshakes = pair.branch_session().stats().handshakes_sent;
  r.stamps = pair.branch_session().connection()->stats().ack_timestamps_received +
                 pair.hub_session().connection()->stats().ack_timestamps_received > 0;
  r.urgent = pair.branch_session().connection()->stats().urgent_packets_sent +
                 pair.hub_session().connection()->stats().urgent_packets_sent > 0;
  pair.run_for(ms(2'500), [&] {
    SessionPair::events(pair.branch_session());
    SessionPair::events(pair.hub_session());
  });
  r.rekeys = pair.branch_session().stats().rekeys;
  return r;
}

// The hub of a build before the flags drops the initiation ("unknown flag
// bits"): the third attempt carries categories and ACK timestamps (for a
// hub of sessions 34-41, below), the fifth categories alone (sessions
// 21-33), the seventh no flag; the tunnel comes up, both directions carry
// content types, nobody stamps ACKs or sends on the urgent lane, and rekeys
// of that connection no longer announce (none is dropped).
TEST(CategoryNegotiation, AnOlderHubIsReachedOnTheSeventhAttemptAndGetsContentTypes) {
  // Retries after 1, 2, 4, 5, 5 and 5 s more.
  const OlderHubRun r = run_older_hub(static_cast<std::uint8_t>(~TransportParameters::kFlagRekey), ms(22'500));
  EXPECT_EQ(r.handshakes, 7u);
  EXPECT_EQ(r.seen.at_hub, ContentClass::html);     // nearest_content_type(realtime)
  EXPECT_EQ(r.seen.at_branch, ContentClass::image);  // nearest_content_type(streaming)
  EXPECT_FALSE(r.stamps);
  EXPECT_FALSE(r.urgent);
  EXPECT_GE(r.rekeys, 1u);
  EXPECT_EQ(r.dropped, 6);
  EXPECT_GE(r.passed, 2);
}

// A hub of sessions 21-33 knows categories but drops an initiation with
// kFlagAckTimestamps: the fifth attempt carries categories alone, so that
// connection keeps categories both ways, without ACK timestamps, and its
// rekeys announce no more than the hub read.
TEST(CategoryNegotiation, AHubWithoutAckTimestampsKeepsCategoriesFromTheFifthAttempt) {
  const OlderHubRun r = run_older_hub(TransportParameters::kFlagAckTimestamps, ms(12'500));  // retries after 1, 2, 4, 5 s
  EXPECT_EQ(r.handshakes, 5u);
  EXPECT_EQ(r.seen.at_hub, ContentClass::realtime);
  EXPECT_EQ(r.seen.at_branch, ContentClass::streaming);
  EXPECT_FALSE(r.stamps);
  EXPECT_GE(r.rekeys, 1u);
  EXPECT_EQ(r.dropped, 4);
  EXPECT_GE(r.passed, 2);
}

// A hub of sessions 34-41 knows all but the urgent lane: the third attempt
// goes as such a build would, so that connection keeps categories and ACK
// timestamps both ways and sends no urgent packet.
TEST(CategoryNegotiation, AHubWithoutTheUrgentLaneKeepsTheRestFromTheThirdAttempt) {
  const OlderHubRun r = run_older_hub(TransportParameters::kFlagUrgentLane, ms(3'500));  // retries after 1, 2 s
  EXPECT_EQ(r.handshakes, 3u);
  EXPECT_EQ(r.seen.at_hub, ContentClass::realtime);
  EXPECT_EQ(r.seen.at_branch, ContentClass::streaming);
  EXPECT_TRUE(r.stamps);
  EXPECT_FALSE(r.urgent);
  EXPECT_GE(r.rekeys, 1u);
  EXPECT_EQ(r.dropped, 2);
  EXPECT_GE(r.passed, 2);
}

// A branch that does not announce (`peer_knows_categories: false`, which is
// also what an older branch sends): the hub does not echo, and each side
// sends content types.
TEST(CategoryNegotiation, ABranchThatDoesNotAnnounceGetsAndSendsContentTypes) {
  SessionPair pair;
  pair.branch_config.connection.peer_knows_categories_override = false;
  std::optional<std::uint8_t> flags;
  pair.tap = [&](WireDatagram& d) {
    if (const auto f = initiation_flags(d, pair.hub_keys.private_key)) flags = f;
    return true;
  };
  const Seen s = exchange(pair);
  EXPECT_EQ(flags, TransportParameters::kFlagAckTimestamps | TransportParameters::kFlagUrgentLane);  // not categories
  EXPECT_EQ(s.at_hub, ContentClass::html);
  EXPECT_EQ(s.at_branch, ContentClass::image);
  EXPECT_EQ(pair.branch_session().stats().handshakes_sent, 1u);
}

// The override replaces the answer on its own side only: a branch set to
// true sends categories to a hub set to false, which sends content types.
TEST(CategoryNegotiation, TheOverrideWinsOnItsSide) {
  SessionPair pair;
  pair.branch_config.connection.peer_knows_categories_override = true;
  pair.hub_config.connection.peer_knows_categories_override = false;
  const Seen s = exchange(pair);
  EXPECT_EQ(s.at_hub, ContentClass::realtime);
  EXPECT_EQ(s.at_branch, ContentClass::image);
}

}  // namespace
}  // namespace egw::tunnel::session::testing
