// Fuzz target: parse arbitrary bytes as a frame payload and as a datagram.
// Passing means no crash, no sanitizer report, and the invariants the
// parser promises (below) hold for whatever it accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "tunnel/frame_codec.h"
#include "tunnel/packet_header.h"
#include "tests/support/test_protection.h"
#include "tunnel/varint.h"

using namespace egw::tunnel;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = std::as_bytes(std::span(data, size));

  // check_frames (what the connection runs first) agrees with parse_frames.
  if (check_frames(input).has_value() != parse_frames(input).has_value()) std::abort();

  if (auto frames = parse_frames(input)) {
    std::size_t total_bytes = 0;
    for (const Frame& frame : *frames) {
      total_bytes += encoded_size(frame);
      if (const auto* ack = std::get_if<AckFrame>(&frame); ack && !is_valid_ack(*ack)) {
        std::abort();  // the parser must only produce well-formed ranges
      }
      if (const auto* stream = std::get_if<StreamFrame>(&frame)) {
        const bool inside = stream->data.empty() ||
                            (stream->data.data() >= input.data() &&
                             stream->data.data() + stream->data.size() <= input.data() + size);
        if (!inside || stream->offset + stream->data.size() > kVarintMax) std::abort();
      }
      // A DATAGRAM's bytes alias the payload too (the connection copies them
      // into its event), and flow frames name only classes that exist.
      if (const auto* datagram = std::get_if<DatagramFrame>(&frame)) {
        const bool inside = datagram->data.empty() ||
                            (datagram->data.data() >= input.data() &&
                             datagram->data.data() + datagram->data.size() <= input.data() + size);
        if (!inside || datagram->flow_id > kVarintMax) std::abort();
      }
      if (const auto* open = std::get_if<FlowOpenFrame>(&frame)) {
        if (static_cast<int>(open->content_class) >= egw::kContentClassCount || open->flow_id > kVarintMax) std::abort();
      }
    }
    // Shortest encodings can only be shorter than what was read.
    if (total_bytes > size) std::abort();
  }

  // The same bytes as a whole datagram: layout checks, then tag check.
  // (Opened in place, so in a copy: libFuzzer's input is read-only.)
  TestProtection protection(0x5eed);
  std::vector<std::byte> datagram(input.begin(), input.end());
  (void)open_packet(protection, datagram);
  return 0;
}
