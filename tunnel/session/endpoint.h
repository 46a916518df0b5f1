// Endpoint: one gateway's side of the tunnel on one UDP socket, sans-IO.
// It holds the static identity, one Session per configured peer (created up
// front: nothing is ever created for an unknown sender) and the receiver
// index table, and routes every received datagram:
//
//   data          receiver index -> its session (unknown index: dropped)
//   response      mac1 checked -> receiver index -> the initiating session
//   cookie reply  receiver index -> the initiating session
//   initiation    an initiator drops it (the branch never responds: no DH
//                 for anyone), exact size, mac1 (else dropped, nothing
//                 sent), then under load a valid mac2 (else a cookie reply,
//                 no DH), the per-IP rate limit, the global handshake budget
//                 (except from a configured peer's current address), Noise
//                 message 1 (4 DH), the
//                 initiator's static key among our peers (else dropped,
//                 nothing sent) -> that peer's session
//
// Everything dropped is counted by reason (EndpointStats). The only thing an
// Endpoint sends by itself is a cookie reply (poll_reply); sessions send
// the rest. The datagram's bytes may be overwritten (data packets are opened
// in place).
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/units.h"
#include "congestion/temporal_cache.h"
#include "tunnel/connection.h"
#include "tunnel/session/cookie.h"
#include "tunnel/session/index_table.h"
#include "tunnel/session/peer_address.h"
#include "tunnel/session/session.h"

namespace egw::tunnel::session {

struct EndpointConfig {
  crypto::SharedSecretKey private_key;  // one wiped copy, shared by every copy of the config
  std::vector<PeerConfig> peers;
  // The branch initiates towards its peers; the hub only responds.
  bool initiator = false;
  ConnectionConfig connection;
  SessionTimers timers;
  // The data-phase AEADs: an initiator's offer in preference order, a
  // responder's accepted set (tunnel/crypto/aead_offer.h; the config's
  // `cipher`). The default, ChaCha20-Poly1305 alone, is what older builds do.
  crypto::AeadList aeads{crypto::Aead::chacha20_poly1305};
  // Initiations per second (that passed mac1) above which mac2 is required.
  std::uint32_t under_load_initiations_per_second = 200;
  // Under load, at most this many initiations per second get Diffie-Hellman
  // (burst: one second's worth), configured peers' current addresses aside.
  std::uint32_t handshake_budget_per_second = 1'000;
  // The wall clock (ns since 1970) at Instant{} of the driver's clock: the
  // core reads no clock, but initiations carry a timestamp.
  std::uint64_t wall_clock_ns_at_origin = 0;
  // Responder: keeps each peer's greatest accepted initiation timestamp
  // across restarts (the driver's file); null: in memory only.
  TimestampStore* timestamp_store = nullptr;
};

struct EndpointStats {
  std::uint64_t datagrams_received = 0;
  std::uint64_t dropped_malformed = 0;      // unknown type or wrong size
  std::uint64_t dropped_bad_mac1 = 0;       // sender does not know our key
  std::uint64_t dropped_unknown_index = 0;  // no session, no pending handshake
  std::uint64_t dropped_unknown_peer = 0;   // authenticated static key not configured
  std::uint64_t dropped_handshake = 0;      // Noise message 1 failed to verify
  std::uint64_t dropped_rate_limited = 0;     // the per-IP limit (cookie.h)
  std::uint64_t dropped_over_budget = 0;      // the global handshake budget under load
  std::uint64_t cookie_replies_sent = 0;
  std::uint64_t initiations_processed = 0;  // Noise message 1 read (the expensive part)
};

class Endpoint {
 public:
  Endpoint(const EndpointConfig& config, congestion::TemporalCache* cache, Instant now);
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // Routes a datagram; returns the session it concerned (its driver services
  // it next), or null when the Endpoint dropped it or answered it itself.
  Session* on_datagram(const PeerAddress& from, std::span<std::byte> datagram, Instant now);

  // A stateless reply to send (cookie replies), written into `buffer`.
  struct Reply {
    PeerAddress to;
    std::size_t bytes;
  };
  std::optional<Reply> poll_reply(std::span<std::byte> buffer);

  std::size_t session_count() const { return sessions_.size(); }
  Session& session(std::size_t i) { return *sessions_[i]; }
  Session* find_session(const crypto::Key32& peer_public_key);
  const LocalIdentity& identity() const { return identity_; }
  const EndpointStats& stats() const { return stats_; }

 private:
  Session* on_initiation(const PeerAddress& from, std::span<const std::uint8_t> bytes, Instant now);
  // Whether a configured peer's session currently uses this IP address.
  bool is_peer_address(const PeerAddress& from) const;

  EndpointConfig config_;
  LocalIdentity identity_;
  IndexTable indices_;
  CookieChecker cookies_;
  std::vector<std::unique_ptr<Session>> sessions_;
  std::deque<std::pair<PeerAddress, std::array<std::uint8_t, kCookieReplyBytes>>> replies_;
  EndpointStats stats_;
};

}  // namespace egw::tunnel::session
