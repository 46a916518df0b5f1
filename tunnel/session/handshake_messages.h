// The handshake datagrams (docs/protocol.md section 8), WireGuard's layout
// around a Noise IK handshake:
//
//   initiation (175 bytes)
//     type 0x02 | sender index u32 | Noise message 1 (138) | mac1 (16) | mac2 (16)
//     message 1 = e (32) | enc(s) (32+16) | enc(payload) (42+16)
//     payload   = TAI64N timestamp (12) | TransportParameters (30)
//   response (119 bytes)
//     type 0x03 | sender index u32 | receiver index u32 | Noise message 2 (78) | mac1 | mac2
//     message 2 = e (32) | enc(TransportParameters) (30+16)
//   cookie reply (53 bytes)
//     type 0x04 | receiver index u32 | nonce (16) | enc(cookie) (16+16)
//   With transport parameters version 2 (38 bytes, a side with
//   ensemble.max_rate configured) the initiation is 183 bytes and the
//   response 127; with version 3 (42 bytes, an initiator offering more than
//   ChaCha20-Poly1305) 187 and 131; a responder answers in the initiation's
//   version.
//
// Every size is exact and checked before any cryptography. mac1 proves the
// sender knows the receiver's static public key: a responder drops, silently,
// anything without a valid mac1, so it answers nobody who does not already
// know it. mac2 proves the sender received a cookie at its address (cookie.h).
// Both are HMAC-SHA256 truncated to 16 bytes (WireGuard uses keyed BLAKE2s;
// our Noise suite is SHA-256, so we stay with it):
//   mac1 = HMAC(SHA256("mac1----" || receiver's static public), bytes before mac1)
//   mac2 = HMAC(cookie, bytes before mac2), or zeros without a cookie
// Responses and cookie replies are smaller than initiations: no amplification.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tunnel/crypto/keys.h"
#include "tunnel/transport_parameters.h"

namespace egw::tunnel::session {

using Mac = std::array<std::uint8_t, 16>;
using Timestamp = std::array<std::uint8_t, 12>;  // TAI64N, big-endian: compares bytewise

inline constexpr std::size_t kMacBytes = 16;
inline constexpr std::size_t kInitiationPayloadBytes = 12 + TransportParameters::kEncodedBytes;
inline constexpr std::size_t kResponsePayloadBytes = TransportParameters::kEncodedBytes;
inline constexpr std::size_t kNoiseMessage1Bytes = 32 + 48 + kInitiationPayloadBytes + 16;
inline constexpr std::size_t kNoiseMessage2Bytes = 32 + kResponsePayloadBytes + 16;
inline constexpr std::size_t kInitiationBytes = 1 + 4 + kNoiseMessage1Bytes + 2 * kMacBytes;
inline constexpr std::size_t kResponseBytes = 1 + 4 + 4 + kNoiseMessage2Bytes + 2 * kMacBytes;
inline constexpr std::size_t kCookieNonceBytes = 16;
inline constexpr std::size_t kCookieReplyBytes = 1 + 4 + kCookieNonceBytes + 16 + 16;

static_assert(kInitiationBytes == 175 && kResponseBytes == 119 && kCookieReplyBytes == 53);

// The same with version-2 transport parameters (8 bytes more each).
inline constexpr std::size_t kParametersV2ExtraBytes =
    TransportParameters::kEncodedBytesV2 - TransportParameters::kEncodedBytesV1;
inline constexpr std::size_t kInitiationBytesV2 = kInitiationBytes + kParametersV2ExtraBytes;
inline constexpr std::size_t kResponseBytesV2 = kResponseBytes + kParametersV2ExtraBytes;
static_assert(kInitiationBytesV2 == 183 && kResponseBytesV2 == 127);
// And version 3 (the AEAD list: 12 bytes more than version 1).
inline constexpr std::size_t kParametersV3ExtraBytes =
    TransportParameters::kEncodedBytesV3 - TransportParameters::kEncodedBytesV1;
inline constexpr std::size_t kInitiationBytesV3 = kInitiationBytes + kParametersV3ExtraBytes;
inline constexpr std::size_t kResponseBytesV3 = kResponseBytes + kParametersV3ExtraBytes;
static_assert(kInitiationBytesV3 == 187 && kResponseBytesV3 == 131);

// A built handshake datagram (any version's size).
struct HandshakeDatagram {
  std::array<std::uint8_t, kInitiationBytesV3> bytes{};
  std::size_t size = 0;
  std::span<const std::uint8_t> span() const { return std::span(bytes).first(size); }
};

// Views into a received handshake datagram (they alias it). The parse
// functions check the exact size and the type byte only.
struct InitiationView {
  std::uint32_t sender_index;
  std::span<const std::uint8_t> noise_message;  // kNoiseMessage1Bytes
  std::span<const std::uint8_t> covered_by_mac1;
  std::span<const std::uint8_t> covered_by_mac2;
  std::span<const std::uint8_t, kMacBytes> mac1;
  std::span<const std::uint8_t, kMacBytes> mac2;
};
struct ResponseView {
  std::uint32_t sender_index;
  std::uint32_t receiver_index;
  std::span<const std::uint8_t> noise_message;  // kNoiseMessage2Bytes
  std::span<const std::uint8_t> covered_by_mac1;
  std::span<const std::uint8_t> covered_by_mac2;
  std::span<const std::uint8_t, kMacBytes> mac1;
  std::span<const std::uint8_t, kMacBytes> mac2;
};
struct CookieReplyView {
  std::uint32_t receiver_index;
  std::span<const std::uint8_t, kCookieNonceBytes> nonce;
  std::span<const std::uint8_t> sealed_cookie;  // 32: cookie + tag
};

// Initiations and responses: one of the versions' exact sizes.
std::optional<InitiationView> parse_initiation(std::span<const std::uint8_t> datagram);
std::optional<ResponseView> parse_response(std::span<const std::uint8_t> datagram);
std::optional<CookieReplyView> parse_cookie_reply(std::span<const std::uint8_t> datagram);

// The key of mac1 for messages sent *to* the owner of `static_public`.
crypto::Key32 mac1_key(const crypto::Key32& static_public);
// HMAC-SHA256(key, bytes) truncated to 16 bytes; `key` is 16 (cookie) or 32 bytes.
Mac truncated_mac(std::span<const std::uint8_t> key, std::span<const std::uint8_t> bytes);
// Constant-time comparison.
bool mac_equal(std::span<const std::uint8_t, kMacBytes> a, const Mac& b);

// Builders: write the fixed fields and the Noise message, then fill mac1 and
// mac2 (mac2 zero when `cookie` is empty). Return the finished datagram,
// sized by the Noise message (so by the transport parameters' version).
HandshakeDatagram build_initiation(
    std::uint32_t sender_index, std::span<const std::uint8_t> noise_message,
    const crypto::Key32& responder_mac1_key, std::span<const std::uint8_t> cookie);
HandshakeDatagram build_response(
    std::uint32_t sender_index, std::uint32_t receiver_index,
    std::span<const std::uint8_t> noise_message, const crypto::Key32& initiator_mac1_key,
    std::span<const std::uint8_t> cookie);

// The initiation's payload: a timestamp (replay protection for initiations:
// the responder accepts only increasing ones per peer) and our parameters.
std::vector<std::uint8_t> encode_initiation_payload(const Timestamp& timestamp,
                                                    const TransportParameters& params);
struct InitiationPayload {
  Timestamp timestamp;
  TransportParameters params;
};
std::optional<InitiationPayload> decode_initiation_payload(std::span<const std::uint8_t> payload);

// The Noise prologue of every handshake (Noise spec 6): binds it to this
// protocol and version.
std::vector<std::uint8_t> noise_prologue();

// TAI64N for `unix_ns` nanoseconds since 1970 (the TAI offset is irrelevant:
// only comparisons between one initiator's timestamps matter).
Timestamp tai64n(std::uint64_t unix_ns);

}  // namespace egw::tunnel::session
