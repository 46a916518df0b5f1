#include "tunnel/session/session.h"

#include <algorithm>
#include <cstring>

#include <openssl/rand.h>

#include "tunnel/error_codes.h"

namespace egw::tunnel::session {
namespace {

constexpr Duration kMaxRetryInterval = ms(5'000);

void earliest(std::optional<Instant>& best, std::optional<Instant> candidate) {
  if (candidate && (!best || *candidate < *best)) best = candidate;
}

}  // namespace

LocalIdentity LocalIdentity::from_private(const crypto::SharedSecretKey& private_key) {
  LocalIdentity id;
  id.private_key = private_key;
  id.public_key = crypto::x25519_public_key(private_key.get());
  id.mac1_key = session::mac1_key(id.public_key);
  return id;
}

Session::Session(const LocalIdentity& identity, const PeerConfig& peer, bool initiator,
                 const ConnectionConfig& connection, const SessionTimers& timers,
                 IndexTable& indices, congestion::TemporalCache* cache,
                 std::uint64_t wall_clock_ns_at_origin, TimestampStore* timestamps,
                 const crypto::AeadList& aeads)
    : identity_(identity),
      peer_(peer),
      initiator_(initiator),
      connection_config_(connection),
      timers_(timers),
      indices_(indices),
      cache_(cache),
      wall_clock_ns_at_origin_(wall_clock_ns_at_origin),
      timestamps_(timestamps),
      aeads_(aeads.count > 0 ? aeads : crypto::AeadList{crypto::Aead::chacha20_poly1305}),
      peer_mac1_key_(mac1_key(peer.public_key)),
      cookie_jar_(peer.public_key) {
  if (peer.endpoint) address_ = *peer.endpoint;
  if (timestamps_ && !initiator_) last_initiation_timestamp_ = timestamps_->load(peer_.public_key);
}

Session::~Session() {
  forget_pending_handshake();
  if (protection_) {
    release_index_of(protection_->current());
    release_index_of(protection_->previous());
    release_index_of(protection_->next());
  }
}

void Session::set_scheduler_config(const congestion::SchedulerConfig& scheduler) {
  connection_config_.ensemble.scheduler = scheduler;
  if (connection_) connection_->set_scheduler_config(scheduler);
}

void Session::connect(Instant now) {
  if (!initiator_ || pending_ || is_up()) return;
  begin_handshake(now, false);
}

void Session::start_rekey(Instant now) { begin_handshake(now, true); }

void Session::begin_handshake(Instant now, bool rekey) {
  first_attempt_at_ = now;
  retry_interval_ = first_retry_interval(now);
  attempts_ = 0;
  send_initiation(now, rekey);
}

crypto::AeadList Session::initiation_offer() const {
  if (legacy_build() >= LegacyBuild::categories_only && aeads_.contains(crypto::Aead::chacha20_poly1305)) {
    return {crypto::Aead::chacha20_poly1305};
  }
  return aeads_;
}

std::uint8_t Session::local_features() const {
  std::uint8_t features = TransportParameters::kFlagAckTimestamps | TransportParameters::kFlagUrgentLane;
  if (connection_config_.peer_knows_categories_override != false) features |= TransportParameters::kFlagCategories;
  return features;
}

std::uint8_t Session::initiation_features(bool rekey) const {
  std::uint8_t features = local_features();
  switch (legacy_build()) {
    case LegacyBuild::none: break;
    case LegacyBuild::ack_timestamps:
      features &= TransportParameters::kFlagCategories | TransportParameters::kFlagAckTimestamps;
      break;
    case LegacyBuild::categories_only: features &= TransportParameters::kFlagCategories; break;
    case LegacyBuild::no_flags: features = 0; break;
  }
  // A rekey keeps the connection and what it sends: towards a peer that did
  // not announce them (an older build) the flags would only get it dropped.
  if (rekey && is_up()) features &= peer_features_;
  return features;
}

Duration Session::first_retry_interval(Instant now) const {
  Duration rtt = handshake_rtt_.value_or(Duration{});
  if (connection_) {
    const auto s = connection_->stats().ensemble;
    if (s.srtt.count() > 0) rtt = std::max(rtt, s.srtt + 4 * s.rttvar);
  } else if (!handshake_rtt_ && cache_) {
    // This run's first handshake: the path's RTT as a previous run saw it.
    if (const auto s = cache_->lookup(connection_config_.cache_key, now)) rtt = s->srtt + 4 * s->rttvar;
  }
  return std::max(timers_.handshake_retry, 3 * rtt);
}

Timestamp Session::timestamp(Instant now) const {
  const auto since_origin_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  return tai64n(wall_clock_ns_at_origin_ + static_cast<std::uint64_t>(since_origin_ns));
}

TransportParameters Session::local_parameters(bool rekey, std::uint8_t version,
                                              const crypto::AeadList& aeads, std::uint8_t features) const {
  TransportParameters p = local_transport_parameters(connection_config_);
  p.flags = static_cast<std::uint8_t>((rekey ? TransportParameters::kFlagRekey : 0) | features);
  if (version >= TransportParameters::kVersion3) {
    p.version = TransportParameters::kVersion3;
    p.aeads = crypto::encode_aead_list(aeads);
  } else if (p.version > version) {
    // A responder answers in the initiation's version: an older initiator
    // parses only version 1 (and then does not learn our receive rate).
    p.version = version;
    p.max_receive_rate_bps = 0;
  }
  return p;
}

void Session::send_initiation(Instant now, bool rekey) {
  forget_pending_handshake();
  crypto::NoiseIkConfig config;
  config.initiator = true;
  config.local_static_private = identity_.private_key.get();
  config.remote_static_public = peer_.public_key;
  // Always IKpsk2, with an all-zero psk when none is configured (as
  // WireGuard does): the responder must know the pattern before it reads
  // message 1, and learns which peer (and so which psk) only after.
  config.use_psk = true;
  config.psk = preshared_key();
  config.prologue = noise_prologue();
  auto noise = std::make_unique<crypto::NoiseIk>(config);
  const crypto::AeadList offered = initiation_offer();
  const std::uint8_t features = initiation_features(rekey);
  ++attempts_;
  const std::uint8_t version =
      offered.is_chacha_only() ? TransportParameters::kVersion2 : TransportParameters::kVersion3;
  const auto payload =
      encode_initiation_payload(timestamp(now), local_parameters(rekey, version, offered, features));
  const auto message = noise->write_message(payload);
  const std::uint32_t index = indices_.allocate(this);
  const auto datagram = build_initiation(index, message, peer_mac1_key_, cookie_jar_.cookie(now));
  Mac sent_mac1{};
  std::memcpy(sent_mac1.data(), datagram.bytes.data() + datagram.size - 2 * kMacBytes, kMacBytes);
  pending_ = PendingHandshake{std::move(noise), index, sent_mac1, rekey, now, offered, features};
  initiation_to_send_ = datagram;
  retry_at_ = now + retry_interval_;
  ++stats_.handshakes_sent;
}

void Session::forget_pending_handshake() {
  if (pending_) indices_.release(pending_->local_index);
  pending_.reset();
}

void Session::on_response(const PeerAddress& from, const ResponseView& response, Instant now) {
  if (!pending_ || response.receiver_index != pending_->local_index) return;
  const auto payload = pending_->noise->read_message(response.noise_message);
  const auto params =
      payload ? decode_transport_parameters(std::as_bytes(std::span(*payload))) : std::nullopt;
  if (!params) {
    ++stats_.handshake_failures;  // forged or corrupt: keep waiting for the real one
    return;
  }
  // The responder's choice (none named: ChaCha20-Poly1305), one we offered.
  const crypto::AeadList named =
      params->version >= TransportParameters::kVersion3
          ? crypto::decode_aead_list(params->aeads)
          : crypto::AeadList{crypto::Aead::chacha20_poly1305};
  if (named.count == 0 || !pending_->offered.contains(named.items[0])) {
    ++stats_.aead_mismatches;  // authentic but unusable: a retry may offer otherwise
    return;
  }
  const auto keys = pending_->noise->split();
  auto keypair = std::make_unique<Keypair>(pending_->local_index, response.sender_index,
                                           keys.send.bytes, keys.receive.bytes, now, named.items[0]);
  const bool rekey = pending_->rekey && (params->flags & TransportParameters::kFlagRekey) && is_up();
  const auto features = static_cast<std::uint8_t>(pending_->announced & params->flags);
  handshake_rtt_ = now - pending_->sent_at;
  pending_.reset();  // its index now names the keypair
  retry_at_.reset();
  initiation_to_send_.reset();
  address_ = from;  // the handshake authenticated it
  last_authenticated_receive_ = now;
  unanswered_since_.reset();
  ++stats_.handshakes_completed;
  if (rekey) {
    // The hub seals with its old keys until a datagram under the new ones
    // reaches it: keep them (previous) until the hub's first packet under
    // the new ones, not for a fixed time. A branch with nothing to send would
    // otherwise drop the hub's packets meanwhile (unknown index), hear nothing
    // and rekey again, never confirming: a wedged tunnel.
    if (awaiting_rekey_confirmation_) {
      release_index_of(protection_->current());  // the hub never used it
      protection_->replace_current(std::move(keypair));
    } else {
      release_index_of(protection_->previous());
      protection_->install(std::move(keypair), /*confirmed=*/true);
    }
    awaiting_rekey_confirmation_ = true;
    retire_previous_at_.reset();
    ++stats_.rekeys;
  } else {
    start_connection(*params, std::move(keypair), /*confirmed=*/true, features, now);
  }
}

void Session::on_cookie_reply(const CookieReplyView& reply, Instant now) {
  if (!pending_ || reply.receiver_index != pending_->local_index) return;
  // The next retry carries mac2; we do not resend at once (no reply loops).
  if (cookie_jar_.on_reply(reply, pending_->sent_mac1, now)) ++stats_.cookie_replies_received;
}

void Session::on_initiation(const PeerAddress& from, std::unique_ptr<crypto::NoiseIk> noise,
                            std::uint32_t sender_index, const InitiationPayload& payload,
                            Instant now) {
  if (initiator_) return;  // the branch initiates; the hub never does
  if (last_initiation_timestamp_ && payload.timestamp <= *last_initiation_timestamp_) {
    ++stats_.initiations_replayed;
    return;
  }
  if (last_initiation_at_ && now - *last_initiation_at_ < timers_.min_initiation_interval) {
    ++stats_.initiations_too_frequent;
    return;
  }
  // No list: an older build's (or a ChaCha-only) initiation.
  const bool listed = payload.params.version >= TransportParameters::kVersion3;
  const crypto::AeadList offered = listed ? crypto::decode_aead_list(payload.params.aeads)
                                          : crypto::AeadList{crypto::Aead::chacha20_poly1305};
  const auto chosen = crypto::choose_aead(offered, aeads_);
  if (!chosen) {
    ++stats_.aead_mismatches;
    return;
  }
  // Durable before answering: a crash right after the answer must not let
  // the same initiation be answered again by the next run.
  if (timestamps_ && !timestamps_->store(peer_.public_key, payload.timestamp)) {
    ++stats_.timestamp_store_failures;
    return;
  }
  last_initiation_timestamp_ = payload.timestamp;
  last_initiation_at_ = now;
  noise->set_psk(preshared_key());
  // A rekey only of a connection the initiator provably shares (see the top
  // of session.h); otherwise a fresh one, which the initiator follows.
  const bool rekey = (payload.params.flags & TransportParameters::kFlagRekey) && is_confirmed();
  // Echoed only to an initiator that announced it: an older one rejects the bit.
  const auto features = static_cast<std::uint8_t>(payload.params.flags & TransportParameters::kFeatureFlags);
  const auto echo = static_cast<std::uint8_t>(features & local_features());
  const auto reply_params =
      encode_transport_parameters(local_parameters(rekey, payload.params.version, {*chosen}, echo));
  const auto message = noise->write_message(
      std::span(reinterpret_cast<const std::uint8_t*>(reply_params.bytes.data()), reply_params.size));
  const auto keys = noise->split();
  const std::uint32_t index = indices_.allocate(this);
  auto keypair =
      std::make_unique<Keypair>(index, sender_index, keys.send.bytes, keys.receive.bytes, now, *chosen);
  response_to_send_ = build_response(index, sender_index, message, peer_mac1_key_, {});
  address_ = from;
  ++stats_.handshakes_completed;
  if (rekey) {
    release_index_of(protection_->next());
    protection_->install(std::move(keypair), /*confirmed=*/false);
    ++stats_.rekeys;
  } else {
    start_connection(payload.params, std::move(keypair), /*confirmed=*/false, features, now);
    response_sent_at_ = now;
  }
}

void Session::start_connection(const TransportParameters& peer_params, std::unique_ptr<Keypair> keys,
                               bool confirmed, std::uint8_t peer_features, Instant now) {
  end_connection("replaced by a new handshake", now);
  ConnectionConfig config = connection_config_;
  config.is_client = initiator_;
  config.peer = peer_params;
  config.peer_knows_categories = connection_config_.peer_knows_categories_override.value_or(
      (peer_features & TransportParameters::kFlagCategories) != 0);
  config.peer_reads_ack_timestamps = (peer_features & TransportParameters::kFlagAckTimestamps) != 0;
  config.peer_reads_urgent_lane = (peer_features & TransportParameters::kFlagUrgentLane) != 0;
  peer_features_ = peer_features;
  // RFC 9002 6.2.2: the handshake's round trip stands for the RTT until the
  // first sample, so a lost first packet (a page's request) is probed after
  // ~3 x that, not 3 x 333 ms (issue 20: the lab's pages at 1-5 % loss).
  // Never longer than configured; the responder has no such sample.
  if (initiator_ && handshake_rtt_ && *handshake_rtt_ > Duration::zero()) {
    config.ensemble.initial_rtt = std::min(config.ensemble.initial_rtt, *handshake_rtt_);
  }
  // Skipped packet numbers must be unpredictable to the peer (RFC 9000 21.4).
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&config.packet_number_skip_seed),
                 sizeof config.packet_number_skip_seed) != 1) {
    std::abort();
  }
  auto protection = std::make_unique<SessionProtection>();
  protection->install(std::move(keys), confirmed);
  protection_ = protection.get();
  connection_ = std::make_unique<Connection>(config, std::move(protection), cache_, now);
  last_authenticated_receive_ = now;
  unanswered_since_.reset();
  last_send_ = now;
  down_reported_ = false;
  confirmed_ = initiator_;  // the response proved the responder holds the keys
  silent_rekeys_ = 0;
  ++stats_.connections_started;
  session_events_.push_back(SessionUp{});
}

void Session::report_down(const std::string& reason) {
  if (down_reported_) return;
  down_reported_ = true;
  session_events_.push_back(SessionDown{reason});
}

void Session::end_connection(const std::string& reason, Instant now) {
  if (!connection_) return;
  if (!connection_->is_closed()) connection_->close(kErrorNone, reason, now);
  while (auto e = connection_->poll_event()) orphan_events_.push_back(std::move(*e));
  release_index_of(protection_->current());
  release_index_of(protection_->previous());
  release_index_of(protection_->next());
  retired_totals_.add(connection_->stats());  // its final counts, close included
  connection_.reset();  // the keys go with it
  protection_ = nullptr;
  retire_previous_at_.reset();
  awaiting_rekey_confirmation_ = false;
  report_down(reason);
}

void Session::on_data(const PeerAddress& from, std::span<std::byte> datagram, Instant now) {
  if (!connection_) {
    ++stats_.datagrams_without_connection;
    return;
  }
  const Keypair* previous = protection_->previous();
  const std::uint32_t previous_index = previous ? previous->local_index : 0;
  // The hub's handshake RTT: its response until the branch's first datagram
  // under the new keys (at most the RTT: the branch may wait before it
  // sends). Set before that datagram is read, as it may start the
  // ensemble. A forged one that fails authentication could only shorten it
  // (min with the configured 333 ms): that costs spurious probes, never the
  // window, and the first sample replaces it.
  if (response_sent_at_) connection_->set_initial_rtt(now - *response_sent_at_);
  if (!connection_->on_datagram(datagram, now)) {
    if (protection_->integrity_limit_reached()) {
      end_connection("AEAD integrity limit reached (RFC 9001 6.6)", now);
    }
    return;
  }
  // Authentic, new and well-formed: only now may it change session state.
  if (protection_->on_accepted()) {
    indices_.release(previous_index);
    retire_previous_at_ = now + retire_delay();
  } else if (awaiting_rekey_confirmation_ && protection_->opened_with_current()) {
    awaiting_rekey_confirmation_ = false;  // the hub switched: previous only for reordering now
    retire_previous_at_ = now + retire_delay();
  }
  last_authenticated_receive_ = now;
  unanswered_since_.reset();
  confirmed_ = true;
  silent_rekeys_ = 0;
  response_sent_at_.reset();
  if (!(from == address_)) {
    address_ = from;
    ++stats_.address_changes;
  }
}

std::optional<Transmit> Session::poll_transmit(Instant now, std::span<std::byte> buffer) {
  auto send_bytes = [&](std::span<const std::uint8_t> bytes) -> std::optional<Transmit> {
    if (buffer.size() < bytes.size()) return std::nullopt;
    std::memcpy(buffer.data(), bytes.data(), bytes.size());
    return Transmit{bytes.size(), false};
  };
  if (initiation_to_send_) {
    const auto t = send_bytes(initiation_to_send_->span());
    initiation_to_send_.reset();
    return t;
  }
  if (response_to_send_) {
    const auto t = send_bytes(response_to_send_->span());
    response_to_send_.reset();
    return t;
  }
  if (!connection_ || !protection_->can_seal()) return std::nullopt;
  const auto t = connection_->poll_transmit(now, buffer);
  if (t) {
    last_send_ = now;
    // Only what the peer must answer starts the wait for an answer.
    if (t->ack_eliciting && !unanswered_since_) unanswered_since_ = now;
  } else if (connection_->is_closed()) {
    end_connection("connection closed", now);  // its CLOSE went out: drop the keys
  }
  return t;
}

Duration Session::retire_delay() const {
  // About three PTOs (RFC 9002 6.2.1) of the live connection.
  const auto s = connection_ ? connection_->stats().ensemble : congestion::EnsembleStats{};
  if (s.srtt.count() == 0) return ms(1'000);
  const Duration pto = s.srtt + std::max<Duration>(4 * s.rttvar, ms(1)) + connection_config_.max_ack_delay;
  return std::max<Duration>(3 * pto, ms(50));
}

std::optional<Instant> Session::next_timeout() const {
  std::optional<Instant> t;
  earliest(t, retry_at_);
  earliest(t, retire_previous_at_);
  if (connection_) {
    earliest(t, connection_->next_timeout());
    if (last_send_ > last_authenticated_receive_) {
      earliest(t, last_authenticated_receive_ + timers_.dead_peer_after);
    }
    if (const Keypair* current = protection_->current()) {
      earliest(t, current->created_at + timers_.reject_after);
      if (initiator_ && !pending_) {
        earliest(t, current->created_at + timers_.rekey_after);
        if (unanswered_since_) {
          earliest(t, std::max(last_authenticated_receive_ + timers_.silence_rekey_after,
                               *unanswered_since_ + retire_delay()));
        }
      }
    }
  }
  return t;
}

void Session::on_timeout(Instant now) {
  if (retry_at_ && now >= *retry_at_) {
    retry_at_.reset();
    if (now - first_attempt_at_ >= timers_.handshake_give_up) {
      forget_pending_handshake();
      ++stats_.handshake_failures;
      if (!is_up()) session_events_.push_back(SessionDown{"handshake timed out"});
    } else if (pending_) {
      retry_interval_ = std::min(2 * retry_interval_, std::max(kMaxRetryInterval, retry_interval_));
      send_initiation(now, pending_->rekey);
    }
  }
  if (retire_previous_at_ && now >= *retire_previous_at_) {
    retire_previous_at_.reset();
    if (protection_) {
      release_index_of(protection_->previous());
      protection_->drop_previous();
    }
  }
  if (connection_) {
    const Keypair* current = protection_->current();
    if (current && now - current->created_at >= timers_.reject_after) {
      end_connection("keys expired (no rekey within reject_after)", now);
      return;
    }
    if (last_send_ > last_authenticated_receive_ && now - last_authenticated_receive_ >= timers_.dead_peer_after) {
      end_connection("peer not responding for " +
                         std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timers_.dead_peer_after).count()) +
                         " s",
                     now);
      return;
    }
    if (initiator_ && !pending_ && current && !connection_->is_closed()) {
      // By packets in either direction (the responder never rekeys, and in
      // a download seals nearly all of them); AES-GCM keys also at its
      // confidentiality limit (2^23 packets).
      const bool old = now - current->created_at >= timers_.rekey_after ||
                       std::max(current->packets_sealed, current->packets_opened) >=
                           std::min(timers_.rekey_after_packets, crypto::aead_confidentiality_limit(current->aead()));
      // Silent: nothing heard for silence_rekey_after, and a packet that
      // needed an answer has had about three PTOs (retire_delay) to get one.
      const bool silent = unanswered_since_ && now - last_authenticated_receive_ >= timers_.silence_rekey_after &&
                          now - *unanswered_since_ >= retire_delay();
      if (silent && silent_rekeys_ >= 1) {
        // A silence rekey completed, yet the peer still sends nothing we
        // accept: its state is not ours (a restart we took for a rekey).
        ++stats_.fresh_after_silent_rekey;
        begin_handshake(now, false);
      } else if (old || silent) {
        if (silent) ++silent_rekeys_;
        start_rekey(now);
      }
    }
    const auto due = connection_->next_timeout();
    if (due && *due <= now) connection_->on_timeout(now);
  }
}

ConnectionTotals Session::connection_totals() const {
  ConnectionTotals t = retired_totals_;
  if (connection_) t.add(connection_->stats());
  return t;
}

std::optional<ConnectionEvent> Session::poll_event() {
  if (!orphan_events_.empty()) {
    ConnectionEvent e = std::move(orphan_events_.front());
    orphan_events_.pop_front();
    return e;
  }
  if (!connection_) return std::nullopt;
  auto e = connection_->poll_event();
  if (e) {
    if (const auto* closed = std::get_if<ConnectionClosed>(&*e)) {
      report_down(closed->reason.empty() ? "connection closed" : closed->reason);
    }
  }
  return e;
}

std::optional<SessionEvent> Session::poll_session_event() {
  if (session_events_.empty()) return std::nullopt;
  SessionEvent e = std::move(session_events_.front());
  session_events_.pop_front();
  return e;
}

}  // namespace egw::tunnel::session
