// Transport parameters: what each side tells the other in the handshake
// (RFC 9000 section 18 in spirit), so neither assumes the other's limits.
// The initiator sends its parameters in handshake message 1, the responder
// in message 2, both encrypted and authenticated by Noise.
//
// Fixed-size encodings (big-endian), so that handshake messages have exact
// sizes that are checked before any cryptography (WireGuard's rule), one
// size per version:
//   version 1 (kEncodedBytesV1 = 30):
//     version u8 | initial_max_stream_data u64 | initial_max_data u64 |
//     initial_max_streams u32 | max_datagram_bytes u16 | idle_timeout_ms u32 |
//     max_ack_delay_ms u16 | flags u8
//   version 2 (kEncodedBytesV2 = 38): version 1's fields | max_receive_rate_bps u64
//   version 3 (kEncodedBytesV3 = 42): version 2's fields | aeads [4] u8
// Compatibility: a side sends version 2 only when it has a rate to tell
// (ensemble.max_rate configured), and a responder answers in the version of
// the initiation, so a gateway without max_rate speaks exactly version 1 and
// an older peer never sees version 2 unless its peer set max_rate (an older
// hub drops such an initiation as the wrong size: upgrade hubs first).
// Version 3 carries the data-phase AEADs (tunnel/crypto/aead_offer.h): an
// initiator sends it only when it offers more than ChaCha20-Poly1305, and
// a responder answers a version-3 initiation in version 3 with its choice.
// An older hub drops it as the wrong size; the initiator then retries
// without the list (session.h, "AEAD negotiation").
// Flag bit 1 (kFlagCategories, any version) says "I read the application
// categories" (ContentClass wire values 4-7): an initiator sets it, and a
// responder that knows it echoes it, so the two learn it without a round
// trip of their own. An older responder rejects the unknown bit (drops the
// initiation); the initiator's legacy attempts go without it (session.h,
// "Categories"), and a responder sets it only in answer to an initiation
// that had it, so an older initiator never sees it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "common/units.h"

namespace egw::tunnel {

struct TransportParameters {
  static constexpr std::uint8_t kVersion = 1;   // the base encoding
  static constexpr std::uint8_t kVersion2 = 2;  // + max_receive_rate_bps
  static constexpr std::uint8_t kVersion3 = 3;  // + aeads
  static constexpr std::size_t kEncodedBytes = 1 + 8 + 8 + 4 + 2 + 4 + 2 + 1;  // = 30 (v1)
  static constexpr std::size_t kEncodedBytesV1 = kEncodedBytes;
  static constexpr std::size_t kEncodedBytesV2 = kEncodedBytes + 8;  // = 38
  static constexpr std::size_t kAeadSlots = 4;
  static constexpr std::size_t kEncodedBytesV3 = kEncodedBytesV2 + kAeadSlots;  // = 42
  static constexpr std::size_t encoded_bytes(std::uint8_t version) {
    return version >= kVersion3   ? kEncodedBytesV3
           : version >= kVersion2 ? kEncodedBytesV2
                                  : kEncodedBytesV1;
  }

  // The encoding sent (and, decoded, the one received): 1, 2 or 3.
  std::uint8_t version = kVersion;

  // Bytes the peer may send on each stream *we* receive before our first
  // MAX_STREAM_DATA for it (our stream receive window).
  std::uint64_t initial_max_stream_data = 1 << 20;
  // Bytes the peer may send over all streams before our first MAX_DATA.
  std::uint64_t initial_max_data = 16 << 20;
  // Streams the peer may open towards us before our first MAX_STREAMS
  // (a count of streams, not an id).
  std::uint32_t initial_max_streams = 1024;
  // Largest datagram (header and tag included) we accept; the peer never
  // sends a bigger one. RFC 9000 18.2 max_udp_payload_size, minimum 1200.
  std::uint16_t max_datagram_bytes = 1472;
  // We close after this long without hearing from the peer; the connection
  // uses the smaller of the two sides' values.
  std::uint32_t idle_timeout_ms = 30'000;
  // Longest we delay an ACK (RFC 9000 18.2 max_ack_delay; < 2^14 ms).
  std::uint16_t max_ack_delay_ms = 25;
  // Bit 0: this initiation rekeys the live connection instead of opening a
  // new one (message 1 only).
  std::uint8_t flags = 0;
  static constexpr std::uint8_t kFlagRekey = 0x01;
  // Bit 1: this side reads the categories (message 1: announced; message 2:
  // echoed). A connection sends categories only to a peer that set it.
  static constexpr std::uint8_t kFlagCategories = 0x02;
  // Bit 2: this side reads ACK timestamps (ACK_TIMESTAMPED, frames.h);
  // announced and echoed as kFlagCategories is.
  static constexpr std::uint8_t kFlagAckTimestamps = 0x04;
  // Bit 3: this side reads data packets of the urgent lane
  // (PacketType::data_urgent); announced and echoed as kFlagCategories is.
  static constexpr std::uint8_t kFlagUrgentLane = 0x08;
  static constexpr std::uint8_t kFeatureFlags = kFlagCategories | kFlagAckTimestamps | kFlagUrgentLane;
  static constexpr std::uint8_t kKnownFlags = kFlagRekey | kFeatureFlags;
  // Version 2: the rate at which this side wants to receive, bits/s of
  // whole datagrams (its ensemble.max_rate.down; 0: none). The peer sends
  // to us at most min(its own max_rate.up, this). Version 1: always 0.
  std::uint64_t max_receive_rate_bps = 0;
  // Version 3: AEAD ids (crypto::Aead), zero after the last. An initiation
  // lists what the initiator supports, most preferred first; a response
  // names the responder's choice in slot 0. Versions 1 and 2: none, which
  // means ChaCha20-Poly1305.
  std::array<std::uint8_t, kAeadSlots> aeads{};

  bool operator==(const TransportParameters&) const = default;
};

// The encoding of params.version (version 1 leaves max_receive_rate_bps out,
// versions 1 and 2 the aeads).
struct EncodedTransportParameters {
  std::array<std::byte, TransportParameters::kEncodedBytesV3> bytes{};
  std::size_t size = 0;
  std::span<const std::byte> span() const { return std::span(bytes).first(size); }
};
EncodedTransportParameters encode_transport_parameters(const TransportParameters& params);

// nullopt (with *error set when given) unless the block is exactly the
// length of its version (1, 2 or 3), and every value in range:
// max_datagram_bytes >= 1200, max_ack_delay_ms < 16384, idle_timeout_ms > 0,
// no unknown flag bits.
std::optional<TransportParameters> decode_transport_parameters(std::span<const std::byte> bytes,
                                                               std::string* error = nullptr);

}  // namespace egw::tunnel
