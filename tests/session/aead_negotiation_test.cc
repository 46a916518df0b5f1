// The data-phase AEAD negotiated in the handshake (tunnel/crypto/aead_offer.h,
// session.h "AEAD negotiation"): two endpoints with different offers agree
// and exchange data under the choice; a side without the list (an older
// build, or ChaCha only) speaks exactly the old handshake and gets
// ChaCha20-Poly1305; an older hub, which drops the longer initiation, is
// reached without the list; offers with nothing in common never connect.
#include <gtest/gtest.h>

#include <array>

#include "tests/session/session_pair.h"
#include "tunnel/crypto/aead_offer.h"
#include "tunnel/session/handshake_messages.h"

namespace egw::tunnel::session::testing {
namespace {

using crypto::Aead;
using crypto::AeadList;
using crypto::CipherSetting;

const AeadList kAutoWithAes = crypto::aead_offer(CipherSetting::automatic, true);
const AeadList kAutoWithoutAes = crypto::aead_offer(CipherSetting::automatic, false);
const AeadList kChachaOnly = crypto::aead_offer(CipherSetting::chacha20_poly1305, true);
const AeadList kAesOnly = crypto::aead_offer(CipherSetting::aes_256_gcm, false);

std::byte pattern(std::uint64_t i) { return static_cast<std::byte>((i * 131 + 7) & 0xff); }

// Connects, then sends `bytes` branch -> hub on one stream; the bytes the
// hub read intact (any corruption counts as none read).
std::uint64_t connect_and_transfer(SessionPair& pair, std::uint64_t bytes, Duration for_how_long) {
  pair.branch_session().connect(pair.now);
  std::optional<StreamId> id;
  std::uint64_t written = 0, read = 0;
  bool corrupt = false;
  pair.run_for(for_how_long, [&] {
    Connection* c = pair.branch_session().connection();
    if (!c || !pair.branch_session().is_up()) return;
    if (!id) id = c->open_stream(Destination{}, ContentClass::bulk, pair.now);
    std::array<std::byte, 4096> chunk;
    while (written < bytes) {
      const std::size_t n = std::min<std::uint64_t>(chunk.size(), bytes - written);
      for (std::size_t i = 0; i < n; ++i) chunk[i] = pattern(written + i);
      const std::size_t w = c->stream_write(*id, std::span(chunk).first(n), pair.now);
      written += w;
      if (w < n) break;
    }
    SessionPair::events(pair.branch_session());
    if (Connection* h = pair.hub_session().connection()) {
      SessionPair::events(pair.hub_session());
      bool fin = false;
      while (const std::size_t n = h->stream_read(*id, chunk, &fin, pair.now)) {
        for (std::size_t i = 0; i < n; ++i) corrupt |= chunk[i] != pattern(read + i);
        read += n;
      }
    }
  });
  return corrupt ? 0 : read;
}

struct Outcome {
  std::vector<std::size_t> handshake_sizes;  // initiations and responses on the wire, in order
  std::uint64_t read = 0;
};

Outcome run(SessionPair& pair, const AeadList& branch, const AeadList& hub,
            std::function<bool(const WireDatagram&)> hub_accepts = {}, Duration for_how_long = ms(2'000)) {
  Outcome out;
  pair.branch_config.aeads = branch;
  pair.hub_config.aeads = hub;
  pair.tap = [&](WireDatagram& d) {
    const auto type = static_cast<std::uint8_t>(d.bytes[0]);
    if (type == 2 || type == 3) out.handshake_sizes.push_back(d.bytes.size());
    return !hub_accepts || hub_accepts(d);
  };
  pair.start();
  out.read = connect_and_transfer(pair, 300'000, for_how_long);
  pair.tap = nullptr;
  return out;
}

// Version 3 of the transport parameters: version 2's fields and the four
// AEAD slots, 42 bytes exactly; versions 1 and 2 unchanged.
TEST(AeadNegotiation, TransportParametersVersion3RoundTrip) {
  TransportParameters p;
  p.version = TransportParameters::kVersion3;
  p.max_receive_rate_bps = 95'000'000;
  p.aeads = crypto::encode_aead_list({Aead::aes_256_gcm, Aead::chacha20_poly1305});
  const auto encoded = encode_transport_parameters(p);
  ASSERT_EQ(encoded.size, 42u);
  EXPECT_EQ(encoded.span()[38], std::byte{2});
  EXPECT_EQ(encoded.span()[39], std::byte{1});
  const auto decoded = decode_transport_parameters(encoded.span());
  ASSERT_TRUE(decoded);
  EXPECT_EQ(*decoded, p);
  EXPECT_FALSE(decode_transport_parameters(encoded.span().first(41)));  // exact size per version
  auto v4 = encoded;
  v4.bytes[0] = std::byte{4};
  std::string why;
  EXPECT_FALSE(decode_transport_parameters(v4.span(), &why));
  EXPECT_EQ(why, "unknown version");
  TransportParameters v1;  // no slots in older versions
  EXPECT_EQ(encode_transport_parameters(v1).size, 30u);
  v1.version = TransportParameters::kVersion2;
  EXPECT_EQ(encode_transport_parameters(v1).size, 38u);
}

TEST(AeadNegotiation, BothWithAesInstructionsUseAesGcmAndCarryData) {
  SessionPair pair;
  const Outcome o = run(pair, kAutoWithAes, kAutoWithAes);
  ASSERT_TRUE(pair.branch_session().is_up());
  EXPECT_EQ(pair.branch_session().aead(), Aead::aes_256_gcm);
  EXPECT_EQ(pair.hub_session().aead(), Aead::aes_256_gcm);
  EXPECT_EQ(o.read, 300'000u);
  EXPECT_EQ(o.handshake_sizes, (std::vector<std::size_t>{kInitiationBytesV3, kResponseBytesV3}));
}

// The initiator's order wins where the responder accepts both.
TEST(AeadNegotiation, TheResponderTakesTheInitiatorsFirstChoice) {
  SessionPair pair;
  run(pair, AeadList{Aead::chacha20_poly1305, Aead::aes_256_gcm}, kAutoWithAes);
  ASSERT_TRUE(pair.branch_session().is_up());
  EXPECT_EQ(pair.branch_session().aead(), Aead::chacha20_poly1305);
  EXPECT_EQ(pair.hub_session().aead(), Aead::chacha20_poly1305);
}

// A hub without AES instructions (auto) accepts only ChaCha: the branch's
// list gets ChaCha in a version-3 reply.
TEST(AeadNegotiation, AHubWithoutAesInstructionsPicksChaCha) {
  SessionPair pair;
  const Outcome o = run(pair, kAutoWithAes, kAutoWithoutAes);
  ASSERT_TRUE(pair.branch_session().is_up());
  EXPECT_EQ(pair.branch_session().aead(), Aead::chacha20_poly1305);
  EXPECT_EQ(pair.hub_session().aead(), Aead::chacha20_poly1305);
  EXPECT_EQ(o.read, 300'000u);
  EXPECT_EQ(o.handshake_sizes, (std::vector<std::size_t>{kInitiationBytesV3, kResponseBytesV3}));
}

// A branch that offers only ChaCha (`cipher: chacha20-poly1305`, or auto
// without AES instructions) sends no list: byte for byte the version-1
// handshake of a build before negotiation, which is what an older branch
// sends to an upgraded hub. The hub with AES answers it in version 1 (the
// size an older branch requires) under ChaCha.
TEST(AeadNegotiation, AnInitiatorWithoutTheListGetsChaChaInTheOldHandshake) {
  for (const AeadList& branch : {kChachaOnly, kAutoWithoutAes}) {
    SessionPair pair;
    const Outcome o = run(pair, branch, kAutoWithAes);
    ASSERT_TRUE(pair.branch_session().is_up());
    EXPECT_EQ(pair.branch_session().aead(), Aead::chacha20_poly1305);
    EXPECT_EQ(pair.hub_session().aead(), Aead::chacha20_poly1305);
    EXPECT_EQ(o.read, 300'000u);
    EXPECT_EQ(o.handshake_sizes, (std::vector<std::size_t>{kInitiationBytes, kResponseBytes}));
  }
}

// An older hub drops the 187-byte initiation as the wrong size (the tap
// plays its size check): the fifth initiation goes without the list (the
// third plays a build that had it), and the tunnel comes up under ChaCha.
TEST(AeadNegotiation, AnOlderHubIsReachedWithoutTheList) {
  SessionPair pair;
  // Retries after 1, 2, 4 and 5 s more (session.h, "Retransmission").
  const Outcome o = run(
      pair, kAutoWithAes, kAutoWithAes,
      [](const WireDatagram& d) { return d.bytes.size() != kInitiationBytesV3; }, ms(12'500));
  ASSERT_TRUE(pair.branch_session().is_up());
  EXPECT_EQ(pair.branch_session().aead(), Aead::chacha20_poly1305);
  EXPECT_EQ(pair.branch_session().stats().handshakes_sent, 5u);
  EXPECT_EQ(o.read, 300'000u);
  EXPECT_EQ(o.handshake_sizes,
            (std::vector<std::size_t>{kInitiationBytesV3, kInitiationBytesV3, kInitiationBytesV3, kInitiationBytesV3,
                                      kInitiationBytes, kResponseBytes}));
}

// The next rekey offers the list again: an upgraded hub then gets AES-GCM
// (and a lost first initiation costs ChaCha only until then).
TEST(AeadNegotiation, ARekeyOffersTheListAgain) {
  SessionTimers timers;
  timers.rekey_after = ms(1'500);
  SessionPair pair(timers);
  bool hub_is_old = true;
  run(
      pair, kAutoWithAes, kAutoWithAes,
      [&](const WireDatagram& d) { return !hub_is_old || d.bytes.size() != kInitiationBytesV3; }, ms(12'500));
  ASSERT_EQ(pair.branch_session().aead(), Aead::chacha20_poly1305);
  hub_is_old = false;  // the hub "upgraded" (same state: the tap stops dropping)
  pair.tap = [&](WireDatagram&) { return true; };
  pair.run_for(ms(2'000), [&] {
    SessionPair::events(pair.branch_session());
    SessionPair::events(pair.hub_session());
  });
  ASSERT_TRUE(pair.branch_session().is_up());
  EXPECT_GE(pair.branch_session().stats().rekeys, 1u);
  EXPECT_EQ(pair.branch_session().aead(), Aead::aes_256_gcm);
  // The hub seals with the new keys once a packet under them arrived.
  Connection* c = pair.branch_session().connection();
  const auto id = c->open_stream(Destination{}, ContentClass::bulk, pair.now);
  ASSERT_TRUE(id);
  const std::array<std::byte, 3000> data{};
  ASSERT_EQ(c->stream_write(*id, data, pair.now), data.size());
  pair.run_for(ms(200), [&] {
    SessionPair::events(pair.branch_session());
    SessionPair::events(pair.hub_session());
  });
  EXPECT_EQ(pair.hub_session().aead(), Aead::aes_256_gcm);
  EXPECT_TRUE(pair.hub_session().is_up());
}

// Key usage counts both directions: in a download the hub seals almost
// every packet under keys only the branch can replace (the hub never
// initiates), so the branch rekeys when the packets it *opened* under the
// current keys reach the limit (AES-GCM's 2^23; here rekey_after_packets),
// not only those it sealed (its ACKs, a fraction).
TEST(AeadNegotiation, TheBranchRekeysWhenTheHubsPacketsReachTheLimit) {
  SessionTimers timers;
  timers.rekey_after_packets = 1'500;
  SessionPair pair(timers);
  pair.branch_config.aeads = kAutoWithAes;
  pair.hub_config.aeads = kAutoWithAes;
  pair.start();
  pair.branch_session().connect(pair.now);
  pair.run_for(ms(50));
  ASSERT_TRUE(pair.branch_session().is_up());
  Connection* c = pair.branch_session().connection();
  const auto id = c->open_stream(Destination{}, ContentClass::bulk, pair.now);
  ASSERT_TRUE(id);
  ASSERT_EQ(c->stream_write(*id, std::array<std::byte, 10>{}, pair.now), 10u);
  std::uint64_t sent = 0, read = 0;
  std::array<std::byte, 16384> chunk{};
  pair.run_for(ms(3'000), [&] {
    SessionPair::events(pair.branch_session());
    SessionPair::events(pair.hub_session());
    Connection* h = pair.hub_session().connection();
    Connection* b = pair.branch_session().connection();
    if (!h || !b) return;
    bool fin = false;
    while (h->stream_read(*id, chunk, &fin, pair.now) > 0) {}
    while (sent < 4'000'000) {  // ~2,800 full packets hub -> branch
      const std::size_t w = h->stream_write(*id, chunk, pair.now);
      sent += w;
      if (w < chunk.size()) break;
    }
    while (const std::size_t n = b->stream_read(*id, chunk, &fin, pair.now)) read += n;
  });
  EXPECT_GE(read, 4'000'000u);
  const Keypair* keys = pair.branch_session().protection()->current();
  ASSERT_TRUE(keys);
  EXPECT_LT(keys->packets_sealed + 100, timers.rekey_after_packets) << "the branch sealed as many: no test";
  EXPECT_GE(pair.branch_session().stats().rekeys, 1u);
  EXPECT_EQ(pair.branch_session().aead(), Aead::aes_256_gcm);
}

// `cipher: aes-256-gcm` on one side, ChaCha only on the other: no handshake
// completes, whichever side insists, and the hub counts why.
TEST(AeadNegotiation, NoCommonAeadNeverConnects) {
  struct Case {
    AeadList branch, hub;
  };
  for (const Case& c : {Case{kAesOnly, kChachaOnly}, Case{kChachaOnly, kAesOnly}}) {
    SessionPair pair;
    const Outcome o = run(pair, c.branch, c.hub);
    EXPECT_FALSE(pair.branch_session().is_up());
    EXPECT_FALSE(pair.hub_session().is_up());
    EXPECT_EQ(o.read, 0u);
    EXPECT_GE(pair.hub_session().stats().aead_mismatches, 1u);
    EXPECT_EQ(pair.hub_session().stats().handshakes_completed, 0u);
  }
}

// Both insisting on AES-GCM works, even without the instructions (slowly).
TEST(AeadNegotiation, AesOnlyOnBothSidesUsesAesGcm) {
  SessionPair pair;
  const Outcome o = run(pair, kAesOnly, kAesOnly);
  ASSERT_TRUE(pair.branch_session().is_up());
  EXPECT_EQ(pair.hub_session().aead(), Aead::aes_256_gcm);
  EXPECT_EQ(o.read, 300'000u);
}

// A forged data packet under AES-GCM keys is dropped and counted against
// that key, the connection goes on.
TEST(AeadNegotiation, ATamperedAesGcmPacketIsDropped) {
  SessionPair pair;
  run(pair, kAutoWithAes, kAutoWithAes);
  ASSERT_EQ(pair.hub_session().aead(), Aead::aes_256_gcm);
  int tampered = 0;
  pair.tap = [&](WireDatagram& d) {
    if (d.bytes[0] == std::byte{1} && d.to == hub_address() && tampered < 3) {  // data packets
      d.bytes[d.bytes.size() / 2] ^= std::byte{0x40};
      ++tampered;
    }
    return true;
  };
  Connection* c = pair.branch_session().connection();
  const auto id = c->open_stream(Destination{}, ContentClass::bulk, pair.now);
  ASSERT_TRUE(id);
  const std::array<std::byte, 3000> data{};
  ASSERT_EQ(c->stream_write(*id, data, pair.now), data.size());
  pair.run_for(ms(1'000), [&] {
    SessionPair::events(pair.branch_session());
    SessionPair::events(pair.hub_session());
  });
  EXPECT_EQ(tampered, 3);
  EXPECT_EQ(pair.hub_session().protection()->current()->forgeries, 3u);
  EXPECT_TRUE(pair.hub_session().is_up());
  EXPECT_EQ(pair.hub_session().connection()->stats().datagrams_forged, 3u);
}

}  // namespace
}  // namespace egw::tunnel::session::testing
