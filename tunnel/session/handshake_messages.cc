#include "tunnel/session/handshake_messages.h"

#include <openssl/crypto.h>

#include <cstring>
#include <string_view>

#include "tunnel/crypto/hash.h"
#include "tunnel/packet_header.h"

namespace egw::tunnel::session {
namespace {

std::uint32_t load_u32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}
void store_u32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

template <std::size_t N>
void fill_macs(std::array<std::uint8_t, N>& out, const crypto::Key32& mac1_key_value,
               std::span<const std::uint8_t> cookie) {
  constexpr std::size_t mac1_at = N - 2 * kMacBytes;
  constexpr std::size_t mac2_at = N - kMacBytes;
  const Mac mac1 = truncated_mac(mac1_key_value, std::span(out).first(mac1_at));
  std::memcpy(out.data() + mac1_at, mac1.data(), kMacBytes);
  if (cookie.empty()) {
    std::memset(out.data() + mac2_at, 0, kMacBytes);
  } else {
    const Mac mac2 = truncated_mac(cookie, std::span(out).first(mac2_at));
    std::memcpy(out.data() + mac2_at, mac2.data(), kMacBytes);
  }
}

}  // namespace

std::optional<InitiationView> parse_initiation(std::span<const std::uint8_t> d) {
  if (d.size() != kInitiationBytes ||
      d[0] != static_cast<std::uint8_t>(PacketType::handshake_initiation)) {
    return std::nullopt;
  }
  constexpr std::size_t mac1_at = kInitiationBytes - 2 * kMacBytes;
  return InitiationView{load_u32(&d[1]),
                        d.subspan(5, kNoiseMessage1Bytes),
                        d.first(mac1_at),
                        d.first(mac1_at + kMacBytes),
                        d.subspan<mac1_at, kMacBytes>(),
                        d.subspan<mac1_at + kMacBytes, kMacBytes>()};
}

std::optional<ResponseView> parse_response(std::span<const std::uint8_t> d) {
  if (d.size() != kResponseBytes ||
      d[0] != static_cast<std::uint8_t>(PacketType::handshake_response)) {
    return std::nullopt;
  }
  constexpr std::size_t mac1_at = kResponseBytes - 2 * kMacBytes;
  return ResponseView{load_u32(&d[1]),
                      load_u32(&d[5]),
                      d.subspan(9, kNoiseMessage2Bytes),
                      d.first(mac1_at),
                      d.first(mac1_at + kMacBytes),
                      d.subspan<mac1_at, kMacBytes>(),
                      d.subspan<mac1_at + kMacBytes, kMacBytes>()};
}

std::optional<CookieReplyView> parse_cookie_reply(std::span<const std::uint8_t> d) {
  if (d.size() != kCookieReplyBytes ||
      d[0] != static_cast<std::uint8_t>(PacketType::cookie_reply)) {
    return std::nullopt;
  }
  return CookieReplyView{load_u32(&d[1]), d.subspan<5, kCookieNonceBytes>(),
                         d.subspan(5 + kCookieNonceBytes)};
}

crypto::Key32 mac1_key(const crypto::Key32& static_public) {
  std::array<std::uint8_t, 8 + 32> input{};
  std::memcpy(input.data(), "mac1----", 8);
  std::memcpy(input.data() + 8, static_public.data(), 32);
  return crypto::sha256(input);
}

Mac truncated_mac(std::span<const std::uint8_t> key, std::span<const std::uint8_t> bytes) {
  const crypto::Key32 full = crypto::hmac_sha256(key, bytes);
  Mac mac{};
  std::memcpy(mac.data(), full.data(), kMacBytes);
  return mac;
}

bool mac_equal(std::span<const std::uint8_t, kMacBytes> a, const Mac& b) {
  return CRYPTO_memcmp(a.data(), b.data(), kMacBytes) == 0;
}

std::array<std::uint8_t, kInitiationBytes> build_initiation(
    std::uint32_t sender_index, std::span<const std::uint8_t> noise_message,
    const crypto::Key32& responder_mac1_key, std::span<const std::uint8_t> cookie) {
  std::array<std::uint8_t, kInitiationBytes> out{};
  out[0] = static_cast<std::uint8_t>(PacketType::handshake_initiation);
  store_u32(&out[1], sender_index);
  std::memcpy(&out[5], noise_message.data(), kNoiseMessage1Bytes);
  fill_macs(out, responder_mac1_key, cookie);
  return out;
}

std::array<std::uint8_t, kResponseBytes> build_response(
    std::uint32_t sender_index, std::uint32_t receiver_index,
    std::span<const std::uint8_t> noise_message, const crypto::Key32& initiator_mac1_key,
    std::span<const std::uint8_t> cookie) {
  std::array<std::uint8_t, kResponseBytes> out{};
  out[0] = static_cast<std::uint8_t>(PacketType::handshake_response);
  store_u32(&out[1], sender_index);
  store_u32(&out[5], receiver_index);
  std::memcpy(&out[9], noise_message.data(), kNoiseMessage2Bytes);
  fill_macs(out, initiator_mac1_key, cookie);
  return out;
}

std::array<std::uint8_t, kInitiationPayloadBytes> encode_initiation_payload(
    const Timestamp& timestamp, const TransportParameters& params) {
  std::array<std::uint8_t, kInitiationPayloadBytes> out{};
  std::memcpy(out.data(), timestamp.data(), timestamp.size());
  const auto encoded = encode_transport_parameters(params);
  std::memcpy(out.data() + timestamp.size(), encoded.data(), encoded.size());
  return out;
}

std::optional<InitiationPayload> decode_initiation_payload(std::span<const std::uint8_t> payload) {
  if (payload.size() != kInitiationPayloadBytes) return std::nullopt;
  InitiationPayload out;
  std::memcpy(out.timestamp.data(), payload.data(), out.timestamp.size());
  auto params = decode_transport_parameters(std::as_bytes(payload.subspan(out.timestamp.size())));
  if (!params) return std::nullopt;
  out.params = *params;
  return out;
}

std::vector<std::uint8_t> noise_prologue() {
  constexpr std::string_view kPrologue = "ensemble-gw tunnel v1";
  return {kPrologue.begin(), kPrologue.end()};
}

Timestamp tai64n(std::uint64_t unix_ns) {
  // TAI64 label: 2^62 + seconds; then nanoseconds. Big-endian throughout.
  const std::uint64_t seconds = (std::uint64_t{1} << 62) + unix_ns / 1'000'000'000;
  const auto nanos = static_cast<std::uint32_t>(unix_ns % 1'000'000'000);
  Timestamp t{};
  for (int i = 0; i < 8; ++i) t[i] = static_cast<std::uint8_t>(seconds >> (56 - 8 * i));
  store_u32(&t[8], nanos);
  return t;
}

}  // namespace egw::tunnel::session
