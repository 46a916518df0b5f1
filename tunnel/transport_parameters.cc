#include "tunnel/transport_parameters.h"

#include <algorithm>

#include "tunnel/wire_reader.h"
#include "tunnel/wire_writer.h"

namespace egw::tunnel {

EncodedTransportParameters encode_transport_parameters(const TransportParameters& params) {
  EncodedTransportParameters out;
  const std::uint8_t version = std::min(std::max(params.version, TransportParameters::kVersion),
                                        TransportParameters::kVersion3);
  const bool v2 = version >= TransportParameters::kVersion2;
  out.size = TransportParameters::encoded_bytes(version);
  WireWriter w(std::span(out.bytes).first(out.size));
  w.write_u8(version);
  w.write_u64(params.initial_max_stream_data);
  w.write_u64(params.initial_max_data);
  w.write_u32(params.initial_max_streams);
  w.write_u16(params.max_datagram_bytes);
  w.write_u32(params.idle_timeout_ms);
  w.write_u16(params.max_ack_delay_ms);
  w.write_u8(params.flags);
  if (v2) w.write_u64(params.max_receive_rate_bps);
  if (version >= TransportParameters::kVersion3) {
    for (const std::uint8_t id : params.aeads) w.write_u8(id);
  }
  return out;
}

std::optional<TransportParameters> decode_transport_parameters(std::span<const std::byte> bytes,
                                                               std::string* error) {
  auto fail = [&](const char* why) -> std::optional<TransportParameters> {
    if (error) *error = why;
    return std::nullopt;
  };
  if (bytes.empty()) return fail("wrong length");
  const auto version = static_cast<std::uint8_t>(bytes[0]);
  if (version < TransportParameters::kVersion || version > TransportParameters::kVersion3) {
    return fail("unknown version");
  }
  if (bytes.size() != TransportParameters::encoded_bytes(version)) return fail("wrong length");
  WireReader r(bytes);
  (void)r.read_u8();
  TransportParameters p;
  p.version = version;
  p.initial_max_stream_data = *r.read_u64();
  p.initial_max_data = *r.read_u64();
  p.initial_max_streams = *r.read_u32();
  p.max_datagram_bytes = *r.read_u16();
  p.idle_timeout_ms = *r.read_u32();
  p.max_ack_delay_ms = *r.read_u16();
  p.flags = *r.read_u8();
  if (version >= TransportParameters::kVersion2) p.max_receive_rate_bps = *r.read_u64();
  if (version >= TransportParameters::kVersion3) {
    for (std::uint8_t& id : p.aeads) id = *r.read_u8();
  }
  if (p.max_datagram_bytes < 1200) return fail("max_datagram_bytes below 1200");
  if (p.max_ack_delay_ms >= 16384) return fail("max_ack_delay_ms not below 2^14");
  if (p.idle_timeout_ms == 0) return fail("idle_timeout_ms is 0");
  if (p.flags & ~TransportParameters::kKnownFlags) return fail("unknown flag bits");
  return p;
}

}  // namespace egw::tunnel
