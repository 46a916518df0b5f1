#include "tunnel/flow_frame_codec.h"

#include <cstring>

#include "tunnel/varint.h"

namespace egw::tunnel {
namespace {
std::size_t address_bytes(Destination::Family family) {
  return family == Destination::Family::ipv4 ? 4 : 16;
}
}  // namespace

std::size_t encoded_size(const FlowOpenFrame& f) {
  return 1 + varint_size(f.flow_id) + 1 + address_bytes(f.destination.family) + 2 + 1;
}

std::size_t encoded_size(const FlowCloseFrame& f) {
  return 1 + varint_size(f.flow_id) + varint_size(f.error_code);
}

std::size_t encoded_size(const DatagramFrame& f) {
  return 1 + varint_size(f.flow_id) + varint_size(f.data.size()) + f.data.size();
}

void encode_flow_frame(WireWriter& w, const FlowOpenFrame& f) {
  if (f.destination.family != Destination::Family::ipv4 &&
      f.destination.family != Destination::Family::ipv6) {
    w.fail();
    return;
  }
  w.write_u8(kFrameTypeFlowOpen);
  w.write_varint(f.flow_id);
  w.write_u8(static_cast<std::uint8_t>(f.destination.family));
  w.write_bytes(std::as_bytes(std::span(f.destination.address)).first(address_bytes(f.destination.family)));
  w.write_u16(f.destination.port);
  w.write_u8(static_cast<std::uint8_t>(f.content_class));
}

void encode_flow_frame(WireWriter& w, const FlowCloseFrame& f) {
  w.write_u8(kFrameTypeFlowClose);
  w.write_varint(f.flow_id);
  w.write_varint(f.error_code);
}

void encode_flow_frame(WireWriter& w, const DatagramFrame& f) {
  w.write_u8(kFrameTypeDatagram);
  w.write_varint(f.flow_id);
  w.write_varint(f.data.size());
  w.write_bytes(f.data);
}

std::optional<FlowOpenFrame> parse_flow_open(WireReader& r) {
  FlowOpenFrame f;
  auto id = r.read_varint();
  auto family = r.read_u8();
  if (!id || !family || (*family != 4 && *family != 6)) return std::nullopt;
  f.flow_id = *id;
  f.destination.family = static_cast<Destination::Family>(*family);
  auto address = r.read_bytes(address_bytes(f.destination.family));
  auto port = r.read_u16();
  auto class_byte = r.read_u8();
  if (!address || !port || !class_byte) return std::nullopt;
  auto cls = content_class_from_wire(*class_byte);
  if (!cls) return std::nullopt;
  std::memcpy(f.destination.address.data(), address->data(), address->size());
  f.destination.port = *port;
  f.content_class = *cls;
  return f;
}

std::optional<FlowCloseFrame> parse_flow_close(WireReader& r) {
  auto id = r.read_varint();
  auto error = r.read_varint();
  if (!id || !error) return std::nullopt;
  return FlowCloseFrame{*id, *error};
}

std::optional<DatagramFrame> parse_datagram(WireReader& r) {
  auto id = r.read_varint();
  auto length = r.read_varint();
  if (!id || !length) return std::nullopt;
  auto data = r.read_bytes(*length);  // bounded by the packet: read_bytes checks
  if (!data) return std::nullopt;
  return DatagramFrame{*id, *data};
}

}  // namespace egw::tunnel
