// The datagram layout (docs/protocol.md section 2):
//
//    0        1                 5                                13
//   +--------+-----------------+---------------------------------+----------------------+
//   |  type  |  receiver index |          packet number          |  protected payload   |
//   |  (u8)  |   (u32, BE)     |            (u64, BE)            |  (frames + tag)      |
//   +--------+-----------------+---------------------------------+----------------------+
//
// The 13 header bytes are the associated data of PacketProtection: sent in
// the clear, authenticated. The receiver index names the receiving side's
// session (WireGuard's receiver index, so a hub can find the keys without
// trying each); it is 0 until the handshake exists but is always carried.
// The packet number is sent in full (no truncation): 8 bytes buy simplicity
// and a nonce that never wraps.
//
// Like WireGuard, exact sizes are checked before anything else, and nothing
// from the header is trusted until the payload has been opened.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/units.h"
#include "tunnel/packet_protection.h"

namespace egw::tunnel {

enum class PacketType : std::uint8_t {
  data = 0x01,
  // The handshake (tunnel/session/handshake_messages.h).
  handshake_initiation = 0x02,
  handshake_response = 0x03,
  cookie_reply = 0x04,
  // A data packet on the urgent lane (issue 22): the same layout and keys;
  // the type tells a receiver's socket layer, before anything is opened, to
  // take it ahead of the data packets queued before it (proxy/tunnel_socket.h).
  // Sent only to a peer that announced it reads it (kFlagUrgentLane).
  data_urgent = 0x05,
};

inline constexpr std::size_t kPacketHeaderBytes = 1 + 4 + 8;  // = 13

inline bool is_data_type(std::uint8_t type) {
  return type == static_cast<std::uint8_t>(PacketType::data) ||
         type == static_cast<std::uint8_t>(PacketType::data_urgent);
}
// Is this datagram marked for the urgent lane? (Its first byte; nothing is
// trusted from it: a forged one is dropped when it fails to open.)
inline bool is_urgent_datagram(std::span<const std::byte> datagram) {
  return !datagram.empty() && datagram[0] == static_cast<std::byte>(PacketType::data_urgent);
}

struct PacketHeader {
  PacketType type = PacketType::data;
  std::uint32_t receiver_index = 0;
  PacketNumber packet_number = 0;
  bool operator==(const PacketHeader&) const = default;
};

std::array<std::byte, kPacketHeaderBytes> encode_packet_header(const PacketHeader& header);

// A data datagram split into its parts; spans alias the datagram.
struct ParsedPacket {
  PacketHeader header;
  std::span<const std::byte> header_bytes;       // the associated data
  std::span<const std::byte> protected_payload;  // sealed frames + tag
};

// Splits a data datagram. nullopt unless it is at least
// kPacketHeaderBytes + tag_bytes + 1 long (a packet carries >= 1 frame byte)
// its type is `data` or `data_urgent` and its packet number <= kVarintMax (2^62 - 1, so that
// ACK frames can name it). Checks layout only: authenticity is open_packet's job.
std::optional<ParsedPacket> parse_packet(std::span<const std::byte> datagram,
                                         std::size_t tag_bytes);

// Seals the datagram in `buffer` in place: writes the header into its first
// kPacketHeaderBytes, then seals the `frames_bytes` plaintext bytes that
// follow it (the caller wrote them there, but for the `sources`, which are
// encrypted from where they are: PacketProtection::seal_gather). `buffer`
// must have room for header + frames + protection.overhead(); returns the
// datagram's size.
std::size_t seal_packet_in_place(PacketProtection& protection, const PacketHeader& header,
                                 std::span<std::byte> buffer, std::size_t frames_bytes,
                                 std::span<const SealSource> sources = {});

// The whole datagram in a new vector (tests and tools; the connection seals
// in place in the caller's buffer).
std::vector<std::byte> seal_packet(PacketProtection& protection, const PacketHeader& header,
                                   std::span<const std::byte> frames_payload);

// The header and the plaintext frames payload of an authentic data datagram,
// nullopt for anything short, of another type, forged or corrupt. The caller
// drops and counts those (never closes the connection over them). Opens in
// place: the payload aliases `datagram`, whose bytes may be overwritten
// (decrypted) even when the datagram turns out forged.
struct OpenedPacket {
  PacketHeader header;
  std::span<const std::byte> payload;
};
std::optional<OpenedPacket> open_packet(PacketProtection& protection,
                                        std::span<std::byte> datagram);

}  // namespace egw::tunnel
