#include "tunnel/packet_header.h"

#include <algorithm>

#include "tunnel/varint.h"
#include "tunnel/wire_reader.h"
#include "tunnel/wire_writer.h"

namespace egw::tunnel {

std::array<std::byte, kPacketHeaderBytes> encode_packet_header(const PacketHeader& header) {
  std::array<std::byte, kPacketHeaderBytes> out{};
  WireWriter w(out);
  w.write_u8(static_cast<std::uint8_t>(header.type));
  w.write_u32(header.receiver_index);
  w.write_u64(header.packet_number);
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
  if (!is_data_type(*type)) return std::nullopt;
  // ACK frames carry packet numbers as varints: a larger one could never be acknowledged.
  if (*packet_number > kVarintMax) return std::nullopt;
  return ParsedPacket{{static_cast<PacketType>(*type), *receiver_index, *packet_number},
                      datagram.first(kPacketHeaderBytes),
                      datagram.subspan(kPacketHeaderBytes)};
}

std::size_t seal_packet_in_place(PacketProtection& protection, const PacketHeader& header,
                                 std::span<std::byte> buffer, std::size_t frames_bytes,
                                 std::span<const SealSource> sources) {
  const auto header_bytes = encode_packet_header(header);
  std::copy(header_bytes.begin(), header_bytes.end(), buffer.begin());
  const std::size_t size = kPacketHeaderBytes + frames_bytes + protection.overhead();
  const std::span<std::byte> packet =
      buffer.subspan(kPacketHeaderBytes, frames_bytes + protection.overhead());
  if (sources.empty()) {
    protection.seal(header.packet_number, buffer.first(kPacketHeaderBytes), packet);
  } else {
    protection.seal_gather(header.packet_number, buffer.first(kPacketHeaderBytes), packet, sources);
  }
  return size;
}

std::vector<std::byte> seal_packet(PacketProtection& protection, const PacketHeader& header,
                                   std::span<const std::byte> frames_payload) {
  std::vector<std::byte> datagram(kPacketHeaderBytes + frames_payload.size() +
                                  protection.overhead());
  std::copy(frames_payload.begin(), frames_payload.end(),
            datagram.begin() + static_cast<std::ptrdiff_t>(kPacketHeaderBytes));
  seal_packet_in_place(protection, header, datagram, frames_payload.size());
  return datagram;
}

std::optional<OpenedPacket> open_packet(PacketProtection& protection,
                                        std::span<std::byte> datagram) {
  auto parsed = parse_packet(datagram, protection.overhead());
  if (!parsed) return std::nullopt;
  auto payload = protection.open(parsed->header.packet_number, parsed->header_bytes,
                                 datagram.subspan(kPacketHeaderBytes));
  if (!payload) return std::nullopt;
  return OpenedPacket{parsed->header, *payload};
}

}  // namespace egw::tunnel
