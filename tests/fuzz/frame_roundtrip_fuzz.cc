// Fuzz target (quic-go FuzzFrames style): whatever parses must re-serialise
// to bytes that parse to equal frames, and encoding is canonical: a second
// round trip reproduces the first re-encoding byte for byte.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "tunnel/frame_codec.h"
#include "tunnel/wire_writer.h"

using namespace egw::tunnel;

namespace {

std::vector<std::byte> encode_all(const std::vector<Frame>& frames) {
  std::size_t expected_bytes = 0;
  for (const Frame& f : frames) expected_bytes += encoded_size(f);
  std::vector<std::byte> out;
  WireWriter writer(out);
  for (const Frame& f : frames) encode_frame(writer, f);
  if (!writer.ok() || out.size() != expected_bytes) std::abort();
  return out;
}

void require_equal(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  if (a.size() != b.size()) std::abort();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!frames_equal(a[i], b[i])) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto first = parse_frames(std::as_bytes(std::span(data, size)));
  if (!first) return 0;
  const std::vector<std::byte> encoded = encode_all(*first);
  const auto second = parse_frames(encoded);
  if (!second) std::abort();
  require_equal(*first, *second);
  if (encode_all(*second) != encoded) std::abort();
  return 0;
}
