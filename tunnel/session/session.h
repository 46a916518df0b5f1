// Session: everything one gateway keeps about one configured peer, sans-IO.
// It runs the Noise IK handshakes (tunnel/crypto/noise_ik.h) for that peer,
// owns the tunnel::Connection they key, rekeys it without stalling streams,
// and follows the peer's address. The Endpoint (endpoint.h) routes each
// received datagram to its session; a driver sends what poll_transmit gives
// to address().
//
// It offers the Connection's driving interface (poll_transmit, next_timeout,
// on_timeout, poll_event; datagrams arrive through the Endpoint, which knows
// their sender), so the same service loop drives it
// (BasicConnectionDriver<Session>, tunnel/connection_driver.h) in tests and
// on real sockets.
//
// Roles. The branch is the initiator: connect() starts a handshake (retried
// every handshake_retry until handshake_give_up), and it rekeys the live
// connection every rekey_after (WireGuard: 120 s) or 2^60 packets. The hub
// is the responder. Either side drops keys older than reject_after (180 s):
// a connection whose keys expired can neither send nor receive and closes.
//
// Lifetimes. A handshake that is not a rekey starts a new Connection; the old
// one, if any, is closed first (its streams end with ConnectionClosed, so the
// gateway resets the clients' sockets). A rekey (flag in the initiation,
// echoed in the response) installs new keys in the live connection; a
// responder that has no live connection (it restarted) answers without the
// echo, and the initiator then replaces its connection too. The initiator
// keeps its previous keys until the responder seals with the new ones (the
// responder switches only once a packet of ours confirmed them), so nothing
// sent in between is lost. An initiator that heard nothing authenticated
// for silence_rekey_after, with an ack-eliciting packet unanswered for about
// three PTOs, rekeys: how a branch notices a restarted hub within seconds.
//
// Restarts and lost handshake messages (issue 19 item 4). A responder echoes
// the rekey flag only for a live connection whose keys the peer *confirmed*
// (a datagram under them was accepted): a connection made by a replayed
// initiation, or by an initiation whose response was lost, was never
// confirmed, so a rekey towards it gets a fresh connection, not new keys in
// a connection the initiator does not share (the initiator then dropped
// every packet as a duplicate until the idle timeout). The greatest
// accepted timestamp per peer outlives restarts through a TimestampStore
// (timestamp_store.h), so a captured initiation is never answered twice.
// And as a last resort, an initiator whose silence rekey completed but
// brought nothing authenticated back starts a fresh connection next time.
//
// Retransmission. An initiation is retried after max(handshake_retry,
// 3 x the path's RTT) (the live connection's smoothed RTT and variance, the
// last handshake's round trip, or for a run's first handshake the temporal
// cache's), doubling up to 5 s: a slow path (600 ms RTT) never gets a second
// handshake while the first is still on its way.
//
// AEAD negotiation (tunnel/crypto/aead_offer.h). An initiator whose list is
// more than ChaCha20-Poly1305 sends it in version-3 transport parameters;
// the responder picks the first it supports, or drops the initiation when
// none is (aead_mismatches), and the keys of that handshake seal and open
// with the choice. An older hub drops a version-3 initiation as the wrong
// size, so the fifth and the seventh attempt (and every sixth after each:
// legacy_build()) go without the list (as an older build's would, when the
// list holds ChaCha20-Poly1305): a new branch reaches an old hub four
// retries later (~12 s), and
// the next rekey tries the list again. Dropping initiations can thus force
// ChaCha20-Poly1305, never anything weaker. AES-GCM keys are replaced after
// 2^23 packets (its confidentiality limit, RFC 9001 6.6) by a rekey, counted
// in either direction (the hub never rekeys: the branch counts the packets
// it opened under the current keys as well as those it sealed).
//
// Categories (issue 21). Whether a connection may send the application
// categories (ContentClass 4-7, which an older build fails) is learnt in the
// same handshake: an initiation sets kFlagCategories
// (transport_parameters.h), a current responder echoes it, and each side's
// connection sends categories iff the other side set it. Two current
// gateways thus always agree, at no cost. An older hub drops a flagged
// initiation (unknown flag bits), so the legacy attempts (the third and
// every second one after it, each playing an older build in turn: see
// legacy_build()) go with fewer flags: a hub older than the flags is
// reached on the seventh attempt, and that connection sends content types.
// A rekey announces only when the live connection's peer did (a rekey does
// not change what the connection sends), so an older hub sees no dropped
// rekeys. The override (scheduler.peer_knows_categories true/false) replaces
// the answer; false also stops the announcement and the echo.
//
// ACK timestamps (issue 20). kFlagAckTimestamps goes the same way: each side
// stamps its ACKs (ACK_TIMESTAMPED frames) iff the other set it, and the
// sender of the data measures how long its ACKs waited on the way back
// (congestion/ack_path_meter.h). A hub of sessions 21-33 knows categories but
// rejects this bit: the fifth attempt (and every sixth after it) carries
// categories alone, the seventh (and so on) no flag, as an older build.
//
// Urgent lane (issue 22). kFlagUrgentLane goes the same way: each side
// sends packets that should not queue behind bulk data in the peer's
// socket as PacketType::data_urgent iff the other set it. A hub of sessions
// 34-41 knows the other flags and the AEAD list but rejects this bit: the
// third attempt (and every sixth after it) goes as such a build would.
#pragma once

#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/units.h"
#include "congestion/temporal_cache.h"
#include "tunnel/connection.h"
#include "tunnel/crypto/aead_offer.h"
#include "tunnel/crypto/keys.h"
#include "tunnel/crypto/noise_ik.h"
#include "tunnel/session/connection_totals.h"
#include "tunnel/session/cookie.h"
#include "tunnel/session/handshake_messages.h"
#include "tunnel/session/index_table.h"
#include "tunnel/session/peer_address.h"
#include "tunnel/session/session_keys.h"
#include "tunnel/session/timestamp_store.h"

namespace egw::tunnel::session {

// This gateway's static identity, shared by its sessions.
struct LocalIdentity {
  crypto::SharedSecretKey private_key;  // the config's: shared, not copied
  crypto::Key32 public_key{};
  crypto::Key32 mac1_key{};  // of our public key: checks mac1 of what we receive
  static LocalIdentity from_private(const crypto::SharedSecretKey& private_key);
};

struct SessionTimers {
  Duration rekey_after = ms(120'000);
  Duration reject_after = ms(180'000);
  Duration handshake_retry = ms(1'000);     // first retry; doubles up to 5 s (+ jitter-free)
  Duration handshake_give_up = ms(90'000);  // WireGuard's REKEY_ATTEMPT_TIME
  Duration silence_rekey_after = ms(5'000);
  // Either side: a connection that has sent (a keep-alive PING at least) and
  // heard nothing authenticated for this long is dead; it ends, so its
  // streams end and the gateway resets their TCP connections, instead of
  // waiting out the idle timeout (WireGuard gives up on a silent peer after
  // keepalive 10 s + rekey 5 s).
  Duration dead_peer_after = ms(15'000);
  Duration min_initiation_interval = ms(20);  // WireGuard: a flooding peer is ignored
  std::uint64_t rekey_after_packets = std::uint64_t{1} << 60;
};

struct PeerConfig {
  std::string name;  // for logs ("hub", "branch-3"); defaults to the key's prefix
  crypto::Key32 public_key{};
  std::optional<crypto::SharedSecretKey> preshared_key;  // shared by config copies, wiped
  std::optional<PeerAddress> endpoint;  // where to send first (initiators must have one)
};

struct SessionStats {
  std::uint64_t handshakes_completed = 0;
  std::uint64_t rekeys = 0;
  std::uint64_t handshakes_sent = 0;
  std::uint64_t handshake_failures = 0;      // responses or initiations that did not verify
  std::uint64_t initiations_replayed = 0;    // timestamp not newer: dropped
  std::uint64_t initiations_too_frequent = 0;
  std::uint64_t cookie_replies_received = 0;
  std::uint64_t address_changes = 0;         // followed after an authenticated packet
  std::uint64_t datagrams_without_connection = 0;
  std::uint64_t connections_started = 0;
  std::uint64_t timestamp_store_failures = 0;  // initiation not answered: not persisted
  std::uint64_t fresh_after_silent_rekey = 0;  // a rekey did not help: started afresh
  // Handshakes dropped for want of a common AEAD: a responder's initiations
  // listing none it supports, an initiator's responses naming one it did
  // not offer.
  std::uint64_t aead_mismatches = 0;
};

// What the session tells its owner besides the connection's own events.
struct SessionUp {};
struct SessionDown { std::string reason; };
using SessionEvent = std::variant<SessionUp, SessionDown>;

class Session {
 public:
  Session(const LocalIdentity& identity, const PeerConfig& peer, bool initiator,
          const ConnectionConfig& connection, const SessionTimers& timers, IndexTable& indices,
          congestion::TemporalCache* cache, std::uint64_t wall_clock_ns_at_origin,
          TimestampStore* timestamps = nullptr,
          const crypto::AeadList& aeads = {crypto::Aead::chacha20_poly1305});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Initiator: start a handshake (no-op while one is under way or connected).
  void connect(Instant now);

  // Datagrams the Endpoint routed here. `from` is the sender's address.
  void on_data(const PeerAddress& from, std::span<std::byte> datagram, Instant now);
  void on_response(const PeerAddress& from, const ResponseView& response, Instant now);
  void on_cookie_reply(const CookieReplyView& reply, Instant now);
  // Responder: an initiation whose Noise message 1 `noise` already read
  // (mac1, cookies and the static key were checked by the Endpoint).
  void on_initiation(const PeerAddress& from, std::unique_ptr<crypto::NoiseIk> noise,
                     std::uint32_t sender_index,
                     const InitiationPayload& payload, Instant now);

  // The driving interface (see the top of the file).
  std::optional<Transmit> poll_transmit(Instant now, std::span<std::byte> buffer);
  std::optional<Instant> next_timeout() const;
  void on_timeout(Instant now);
  std::optional<ConnectionEvent> poll_event();
  std::optional<SessionEvent> poll_session_event();

  // Admin reload: the scheduler for the live connection and every later one.
  void set_scheduler_config(const congestion::SchedulerConfig& scheduler);

  // The live connection (null before the first handshake and after it closed).
  Connection* connection() { return connection_.get(); }
  bool is_up() const { return connection_ && !connection_->is_closed(); }
  // Up, and the peer proved it holds the live keys (an initiator: the
  // response did; a responder: a datagram under them was accepted).
  bool is_confirmed() const { return is_up() && confirmed_; }
  const PeerAddress& address() const { return address_; }
  const PeerConfig& peer() const { return peer_; }
  const SessionStats& stats() const { return stats_; }
  // The counters of every connection so far, the live one's included:
  // monotonic over connection replacements (connection_totals.h).
  ConnectionTotals connection_totals() const;
  const SessionProtection* protection() const { return protection_; }
  // The AEAD of the keys we seal with, or of a responder's keys waiting for
  // the initiator's first packet (none before the first handshake).
  std::optional<crypto::Aead> aead() const {
    if (!protection_) return std::nullopt;
    const Keypair* keys = protection_->current() ? protection_->current() : protection_->next();
    if (!keys) return std::nullopt;
    return keys->aead();
  }
  // What this side offers (initiator) or accepts (responder).
  const crypto::AeadList& aeads() const { return aeads_; }

 private:
  struct PendingHandshake {
    std::unique_ptr<crypto::NoiseIk> noise;
    std::uint32_t local_index;
    Mac sent_mac1;
    bool rekey;
    Instant sent_at;
    crypto::AeadList offered;  // what this initiation listed (ChaCha alone: no list)
    std::uint8_t announced;  // the feature flags it set (kFeatureFlags)
  };

  // A handshake's first initiation (connect, rekey, fresh start).
  void begin_handshake(Instant now, bool rekey);
  void send_initiation(Instant now, bool rekey);
  // The list the next initiation carries (see "AEAD negotiation").
  crypto::AeadList initiation_offer() const;
  // The third attempt of a handshake and every second one after it go as an
  // older build's would, in turn (see "AEAD negotiation", "Categories", "ACK
  // timestamps" and "Urgent lane"): the 3rd (9th, ...) as one with ACK
  // timestamps but not the urgent lane, the 5th (11th, ...) as one with
  // categories alone and without the AEAD list, the 7th (13th, ...) with
  // neither.
  enum class LegacyBuild { none, ack_timestamps, categories_only, no_flags };
  LegacyBuild legacy_build() const {
    if (attempts_ < 2 || attempts_ % 2 != 0) return LegacyBuild::none;
    return static_cast<LegacyBuild>(1 + (attempts_ / 2 - 1) % 3);
  }
  // The feature flags this build reads (kFeatureFlags), and those an
  // initiation announces (see "Categories" and "ACK timestamps").
  std::uint8_t local_features() const;
  std::uint8_t initiation_features(bool rekey) const;
  // peer_features: the feature flags both sides set in this handshake.
  void start_connection(const TransportParameters& peer_params, std::unique_ptr<Keypair> keys,
                        bool confirmed, std::uint8_t peer_features, Instant now);
  void start_rekey(Instant now);
  void end_connection(const std::string& reason, Instant now);
  void report_down(const std::string& reason);
  void forget_pending_handshake();
  void release_index_of(const Keypair* keys) {
    if (keys) indices_.release(keys->local_index);
  }
  Timestamp timestamp(Instant now) const;
  // The peer's psk, all zero without one (WireGuard's choice).
  const crypto::Key32& preshared_key() const {
    static constexpr crypto::Key32 kNone{};
    return peer_.preshared_key ? peer_.preshared_key->get() : kNone;
  }
  // version: the transport-parameters version to use; below 3 the highest
  // (a responder: the initiation's), 3 carries `aeads`.
  // features: the feature flags to set (an announcement or its echo).
  TransportParameters local_parameters(bool rekey, std::uint8_t version,
                                       const crypto::AeadList& aeads, std::uint8_t features) const;
  Duration retire_delay() const;  // ~3 PTO for the previous keys
  Duration first_retry_interval(Instant now) const;  // max(handshake_retry, 3 x the path's RTT)

  const LocalIdentity& identity_;
  PeerConfig peer_;
  bool initiator_;
  ConnectionConfig connection_config_;
  SessionTimers timers_;
  IndexTable& indices_;
  congestion::TemporalCache* cache_;
  std::uint64_t wall_clock_ns_at_origin_;
  TimestampStore* timestamps_;
  crypto::AeadList aeads_;
  crypto::Key32 peer_mac1_key_;
  CookieJar cookie_jar_;

  PeerAddress address_;
  std::unique_ptr<Connection> connection_;
  SessionProtection* protection_ = nullptr;  // owned by connection_
  bool down_reported_ = true;
  bool confirmed_ = false;  // see is_confirmed()
  std::uint8_t peer_features_ = 0;  // both sides' feature flags in the live connection's handshake
  // Initiator: rekeys started by silence since the peer last sent data under
  // the live keys; the second one starts a fresh connection instead.
  int silent_rekeys_ = 0;
  std::optional<Duration> handshake_rtt_;  // the last handshake's round trip

  std::optional<PendingHandshake> pending_;
  std::optional<HandshakeDatagram> initiation_to_send_;
  std::optional<HandshakeDatagram> response_to_send_;
  Instant first_attempt_at_{};
  int attempts_ = 0;  // initiations sent in this handshake
  Duration retry_interval_{};
  std::optional<Instant> retry_at_;
  std::optional<Instant> retire_previous_at_;
  // Initiator: rekeyed, and no packet from the peer under the new keys yet.
  bool awaiting_rekey_confirmation_ = false;
  std::optional<Timestamp> last_initiation_timestamp_;
  std::optional<Instant> last_initiation_at_;
  // The responder's half of a handshake RTT: when its response left, until
  // the initiator's first datagram under the new keys arrives.
  std::optional<Instant> response_sent_at_;
  Instant last_authenticated_receive_{};
  Instant last_send_{};
  // The first ack-eliciting packet sent since the peer was last heard: the
  // silence rekey waits until it had time to be answered (a keep-alive PING
  // after 5 quiet seconds is answered at once; rekeying when it left, and
  // after any ACK-only packet, rekeyed an idle tunnel every 5 s).
  std::optional<Instant> unanswered_since_;

  std::deque<ConnectionEvent> orphan_events_;  // from a connection that was replaced
  std::deque<SessionEvent> session_events_;
  SessionStats stats_;
  ConnectionTotals retired_totals_;  // of the connections ended so far
};

}  // namespace egw::tunnel::session
