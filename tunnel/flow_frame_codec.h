// The byte layout of the datagram-flow frames (docs/protocol.md section 4.11
// to 4.13), kept apart from frame_codec.cc, which calls these:
//   FLOW_OPEN  { type = 0x0c, flow id, family, address, port, class }
//   FLOW_CLOSE { type = 0x0d, flow id, error code }
//   DATAGRAM   { type = 0x0e, flow id, length, data }
// All integers are varints except family (1 byte), port (2) and class (1),
// as in STREAM_OPEN.
#pragma once

#include <cstddef>
#include <optional>

#include "tunnel/frames.h"
#include "tunnel/wire_reader.h"
#include "tunnel/wire_writer.h"

namespace egw::tunnel {

inline constexpr std::uint8_t kFrameTypeFlowOpen = 0x0c;
inline constexpr std::uint8_t kFrameTypeFlowClose = 0x0d;
inline constexpr std::uint8_t kFrameTypeDatagram = 0x0e;

std::size_t encoded_size(const FlowOpenFrame& f);
std::size_t encoded_size(const FlowCloseFrame& f);
std::size_t encoded_size(const DatagramFrame& f);
void encode_flow_frame(WireWriter& w, const FlowOpenFrame& f);
void encode_flow_frame(WireWriter& w, const FlowCloseFrame& f);
void encode_flow_frame(WireWriter& w, const DatagramFrame& f);

// After the type byte; nullopt on the first bad field.
std::optional<FlowOpenFrame> parse_flow_open(WireReader& r);
std::optional<FlowCloseFrame> parse_flow_close(WireReader& r);
std::optional<DatagramFrame> parse_datagram(WireReader& r);

}  // namespace egw::tunnel
