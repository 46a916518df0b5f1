#include "tunnel/packet_header.h"

#include <algorithm>

#include "tunnel/varint.h"
#include "tunnel/wire_reader.h"
#include "tunnel/wire_writer.h"

namespace egw::tunnel {

std::array<std::byte, kPacketHeaderBytes> encode_packet_header(const PacketHeader& header) {
  std::vector<std::byte> bytes;
  bytes.reserve(kPacketHeaderBytes);
  WireWriter w(bytes, kPacketHeaderBytes);
  w.write_u8(static_cast<std::uint8_t>(header.type));
  w.write_u32(header.receiver_index);
  w.write_u64(header.packet_number);
  std::array<std::byte, kPacketHeaderBytes> out{};
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return out;
}

std::optional<ParsedPacket> parse_packet(std::span<const std::byte> datagram,
                                         std::size_t tag_bytes) {
  // Size first, before looking at any field (WireGuard's rule).
  if (datagram.size() < kPacketHeaderBytes + tag_bytes + 1) return std::nullopt;
  WireReader r(datagram);
  auto type = r.read_u8();
  auto receiver_index = r.read_u32();
  auto packet_number = r.read_u64();
  if (!type || !receiver_index || !packet_number) return std::nullopt;  // unreachable
  if (*type != static_cast<std::uint8_t>(PacketType::data)) return std::nullopt;
  // ACK frames carry packet numbers as varints: a larger one could never be acknowledged.
  if (*packet_number > kVarintMax) return std::nullopt;
  return ParsedPacket{{PacketType::data, *receiver_index, *packet_number},
                      datagram.first(kPacketHeaderBytes),
                      datagram.subspan(kPacketHeaderBytes)};
}

std::vector<std::byte> seal_packet(PacketProtection& protection, const PacketHeader& header,
                                   std::span<const std::byte> frames_payload) {
  const auto header_bytes = encode_packet_header(header);
  std::vector<std::byte> datagram;
  datagram.reserve(kPacketHeaderBytes + frames_payload.size() + protection.overhead());
  datagram.insert(datagram.end(), header_bytes.begin(), header_bytes.end());
  protection.seal(header.packet_number, header_bytes, frames_payload, datagram);
  return datagram;
}

std::optional<OpenedPacket> open_packet(PacketProtection& protection,
                                        std::span<const std::byte> datagram) {
  auto parsed = parse_packet(datagram, protection.overhead());
  if (!parsed) return std::nullopt;
  auto payload = protection.open(parsed->header.packet_number, parsed->header_bytes,
                                 parsed->protected_payload);
  if (!payload) return std::nullopt;
  return OpenedPacket{parsed->header, std::move(*payload)};
}

}  // namespace egw::tunnel
