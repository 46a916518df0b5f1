#include "tunnel/session/endpoint.h"

#include <cstring>

#include "tunnel/packet_header.h"

namespace egw::tunnel::session {
namespace {

constexpr std::size_t kMaxQueuedReplies = 64;  // beyond: dropped (the initiator retries)

std::uint32_t receiver_index_of_data(std::span<const std::uint8_t> d) {
  return (std::uint32_t{d[1]} << 24) | (std::uint32_t{d[2]} << 16) | (std::uint32_t{d[3]} << 8) |
         std::uint32_t{d[4]};
}

}  // namespace

Endpoint::Endpoint(const EndpointConfig& config, congestion::TemporalCache* cache, Instant now)
    : config_(config),
      identity_(LocalIdentity::from_private(config.private_key)),
      cookies_(identity_.public_key, config.under_load_initiations_per_second,
               config.handshake_budget_per_second, now) {
  for (const PeerConfig& peer : config_.peers) {
    sessions_.push_back(std::make_unique<Session>(identity_, peer, config_.initiator,
                                                  config_.connection, config_.timers, indices_,
                                                  cache, config_.wall_clock_ns_at_origin,
                                                  config_.timestamp_store, config_.aeads));
  }
}

Session* Endpoint::find_session(const crypto::Key32& peer_public_key) {
  for (auto& s : sessions_) {
    if (s->peer().public_key == peer_public_key) return s.get();
  }
  return nullptr;
}

Session* Endpoint::on_datagram(const PeerAddress& from, std::span<std::byte> datagram,
                               Instant now) {
  ++stats_.datagrams_received;
  const auto bytes = std::span(reinterpret_cast<const std::uint8_t*>(datagram.data()), datagram.size());
  if (bytes.empty()) {
    ++stats_.dropped_malformed;
    return nullptr;
  }
  switch (static_cast<PacketType>(bytes[0])) {
    case PacketType::data:
    case PacketType::data_urgent: {
      if (bytes.size() < kPacketHeaderBytes) break;
      Session* s = indices_.find(receiver_index_of_data(bytes));
      if (!s) {
        ++stats_.dropped_unknown_index;
        return nullptr;
      }
      s->on_data(from, datagram, now);
      return s;
    }
    case PacketType::handshake_initiation:
      if (config_.initiator) break;  // the branch never responds: no work for anyone
      return on_initiation(from, bytes, now);
    case PacketType::handshake_response: {
      const auto response = parse_response(bytes);
      if (!response) break;
      if (!mac_equal(response->mac1, truncated_mac(identity_.mac1_key, response->covered_by_mac1))) {
        ++stats_.dropped_bad_mac1;
        return nullptr;
      }
      Session* s = indices_.find(response->receiver_index);
      if (!s) {
        ++stats_.dropped_unknown_index;
        return nullptr;
      }
      s->on_response(from, *response, now);
      return s;
    }
    case PacketType::cookie_reply: {
      const auto reply = parse_cookie_reply(bytes);
      if (!reply) break;
      Session* s = indices_.find(reply->receiver_index);
      if (!s) {
        ++stats_.dropped_unknown_index;
        return nullptr;
      }
      s->on_cookie_reply(*reply, now);
      return s;
    }
  }
  ++stats_.dropped_malformed;
  return nullptr;
}

Session* Endpoint::on_initiation(const PeerAddress& from, std::span<const std::uint8_t> bytes,
                                 Instant now) {
  const auto initiation = parse_initiation(bytes);
  if (!initiation) {
    ++stats_.dropped_malformed;
    return nullptr;
  }
  if (!mac_equal(initiation->mac1, truncated_mac(identity_.mac1_key, initiation->covered_by_mac1))) {
    ++stats_.dropped_bad_mac1;  // not even a cookie: it does not know our key
    return nullptr;
  }
  if (cookies_.note_initiation_and_check_load(now)) {
    if (!cookies_.mac2_valid(*initiation, from, now)) {
      if (replies_.size() < kMaxQueuedReplies) {
        replies_.emplace_back(from, cookies_.make_reply(*initiation, from, now));
        ++stats_.cookie_replies_sent;
      }
      return nullptr;
    }
    if (!cookies_.allow(from, now)) {
      ++stats_.dropped_rate_limited;
      return nullptr;
    }
    if (!is_peer_address(from) && !cookies_.take_budget(now)) {
      ++stats_.dropped_over_budget;
      return nullptr;
    }
  }
  ++stats_.initiations_processed;
  crypto::NoiseIkConfig noise_config;
  noise_config.initiator = false;
  noise_config.local_static_private = identity_.private_key.get();
  noise_config.prologue = noise_prologue();
  noise_config.use_psk = true;  // always IKpsk2 (session.cc)
  auto noise = std::make_unique<crypto::NoiseIk>(noise_config);
  const auto payload_bytes = noise->read_message(initiation->noise_message);
  const auto payload = payload_bytes ? decode_initiation_payload(*payload_bytes) : std::nullopt;
  if (!payload) {
    ++stats_.dropped_handshake;
    return nullptr;
  }
  Session* s = noise->remote_static() ? find_session(*noise->remote_static()) : nullptr;
  if (!s) {
    ++stats_.dropped_unknown_peer;  // authenticated, but not one of ours: silence
    return nullptr;
  }
  s->on_initiation(from, std::move(noise), initiation->sender_index, *payload, now);
  return s;
}

bool Endpoint::is_peer_address(const PeerAddress& from) const {
  for (const auto& s : sessions_) {
    if (s->is_confirmed() && s->address().ip == from.ip) return true;
  }
  return false;
}

std::optional<Endpoint::Reply> Endpoint::poll_reply(std::span<std::byte> buffer) {
  if (replies_.empty() || buffer.size() < kCookieReplyBytes) return std::nullopt;
  const auto& [to, bytes] = replies_.front();
  std::memcpy(buffer.data(), bytes.data(), bytes.size());
  Reply r{to, bytes.size()};
  replies_.pop_front();
  return r;
}

}  // namespace egw::tunnel::session
