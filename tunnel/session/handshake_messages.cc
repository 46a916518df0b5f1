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

void fill_macs(std::span<std::uint8_t> out, const crypto::Key32& mac1_key_value,
               std::span<const std::uint8_t> cookie) {
  const std::size_t mac1_at = out.size() - 2 * kMacBytes;
  const std::size_t mac2_at = out.size() - kMacBytes;
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
  if ((d.size() != kInitiationBytes && d.size() != kInitiationBytesV2 && d.size() != kInitiationBytesV3) ||
      d[0] != static_cast<std::uint8_t>(PacketType::handshake_initiation)) {
    return std::nullopt;
  }
  const std::size_t mac1_at = d.size() - 2 * kMacBytes;
  return InitiationView{load_u32(&d[1]),
                        d.subspan(5, mac1_at - 5),
                        d.first(mac1_at),
                        d.first(mac1_at + kMacBytes),
                        d.subspan(mac1_at).first<kMacBytes>(),
                        d.subspan(mac1_at + kMacBytes).first<kMacBytes>()};
}

std::optional<ResponseView> parse_response(std::span<const std::uint8_t> d) {
  if ((d.size() != kResponseBytes && d.size() != kResponseBytesV2 && d.size() != kResponseBytesV3) ||
      d[0] != static_cast<std::uint8_t>(PacketType::handshake_response)) {
    return std::nullopt;
  }
  const std::size_t mac1_at = d.size() - 2 * kMacBytes;
  return ResponseView{load_u32(&d[1]),
                      load_u32(&d[5]),
                      d.subspan(9, mac1_at - 9),
                      d.first(mac1_at),
                      d.first(mac1_at + kMacBytes),
                      d.subspan(mac1_at).first<kMacBytes>(),
                      d.subspan(mac1_at + kMacBytes).first<kMacBytes>()};
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

HandshakeDatagram build_initiation(
    std::uint32_t sender_index, std::span<const std::uint8_t> noise_message,
    const crypto::Key32& responder_mac1_key, std::span<const std::uint8_t> cookie) {
  HandshakeDatagram out;
  out.size = 1 + 4 + noise_message.size() + 2 * kMacBytes;  // kInitiationBytes, V2 or V3
  out.bytes[0] = static_cast<std::uint8_t>(PacketType::handshake_initiation);
  store_u32(&out.bytes[1], sender_index);
  std::memcpy(&out.bytes[5], noise_message.data(), noise_message.size());
  fill_macs(std::span(out.bytes).first(out.size), responder_mac1_key, cookie);
  return out;
}

HandshakeDatagram build_response(
    std::uint32_t sender_index, std::uint32_t receiver_index,
    std::span<const std::uint8_t> noise_message, const crypto::Key32& initiator_mac1_key,
    std::span<const std::uint8_t> cookie) {
  HandshakeDatagram out;
  out.size = 1 + 4 + 4 + noise_message.size() + 2 * kMacBytes;  // kResponseBytes, V2 or V3
  out.bytes[0] = static_cast<std::uint8_t>(PacketType::handshake_response);
  store_u32(&out.bytes[1], sender_index);
  store_u32(&out.bytes[5], receiver_index);
  std::memcpy(&out.bytes[9], noise_message.data(), noise_message.size());
  fill_macs(std::span(out.bytes).first(out.size), initiator_mac1_key, cookie);
  return out;
}

std::vector<std::uint8_t> encode_initiation_payload(const Timestamp& timestamp,
                                                    const TransportParameters& params) {
  const auto encoded = encode_transport_parameters(params);
  std::vector<std::uint8_t> out(timestamp.size() + encoded.size);
  std::memcpy(out.data(), timestamp.data(), timestamp.size());
  std::memcpy(out.data() + timestamp.size(), encoded.bytes.data(), encoded.size);
  return out;
}

std::optional<InitiationPayload> decode_initiation_payload(std::span<const std::uint8_t> payload) {
  if (payload.size() != kInitiationPayloadBytes &&
      payload.size() != kInitiationPayloadBytes + kParametersV2ExtraBytes &&
      payload.size() != kInitiationPayloadBytes + kParametersV3ExtraBytes) {
    return std::nullopt;
  }
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
