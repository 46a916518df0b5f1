// Frame encoding and parsing: the byte layout of docs/protocol.md section 4.
//
// Parsing follows msquic frame.c: every value is sanity-checked right after
// it is decoded (ACK ranges must not underflow and so come out descending,
// non-overlapping and non-adjacent; at most kMaxAckRanges ranges; stream
// offset + length < 2^62; address family 4 or 6; close
// reason <= kMaxCloseReasonBytes), and one bad or unknown frame rejects the
// whole payload: a receiver never acts on half a packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tunnel/frames.h"
#include "tunnel/wire_reader.h"
#include "tunnel/wire_writer.h"

namespace egw::tunnel {

// Frame type bytes (docs/protocol.md section 4). Anything else is rejected.
enum class FrameType : std::uint8_t {
  padding = 0x00,
  ping = 0x01,
  ack = 0x02,
  stream_open = 0x03,
  stream = 0x04,
  stream_fin = 0x05,  // STREAM with FIN set
  reset_stream = 0x06,
  max_data = 0x07,
  max_stream_data = 0x08,
  stream_class = 0x09,
  close = 0x0a,
  max_streams = 0x0b,
  flow_open = 0x0c,  // datagram flows: tunnel/flow_frame_codec.h
  flow_close = 0x0d,
  datagram = 0x0e,
  ack_timestamped = 0x0f,  // ACK + the sender's timestamp (AckFrame::timestamp)
};

// Bytes encode_frame() appends for `frame`. Preconditions for both: every
// integer <= kVarintMax, an AckFrame satisfies is_valid_ack(), STREAM offset +
// length < 2^62. A frame that breaks them puts the writer in its failed state
// (writer.ok() == false) instead of producing bytes the parser would reject or
// read differently. A CloseFrame reason is truncated to kMaxCloseReasonBytes.
std::size_t encoded_size(const Frame& frame);
void encode_frame(WireWriter& writer, const Frame& frame);
// The same for an ACK frame without wrapping it in a Frame (it is large).
std::size_t encoded_size(const AckFrame& ack);
void encode_frame(WireWriter& writer, const AckFrame& ack);
// A STREAM frame's fields up to its length; the caller then writes exactly
// `length` data bytes (w.claim(length): the send path copies them straight
// from the stream's buffer into the packet).
void encode_stream_frame_header(WireWriter& writer, StreamId stream_id, std::uint64_t offset,
                                std::size_t length, bool fin);

// Reads the frames of a decrypted packet payload one at a time into a Frame
// the caller reuses (no allocation, except a CLOSE frame's reason).
// Consecutive PADDING bytes become one PaddingFrame. StreamFrame::data
// points into the payload. A receiver must not act on a payload before the
// whole of it parsed (check_frames), so it reads it twice: once to check,
// once to act.
class FrameParser {
 public:
  explicit FrameParser(std::span<const std::byte> payload) : reader_(payload) {}
  // The next frame into `out`: false at the end or at a malformed, unknown or
  // out-of-range frame (then failed() is true and `out` is unspecified).
  bool next(Frame& out);
  bool failed() const { return failed_; }

 private:
  WireReader reader_;
  bool failed_ = false;
};

// What a receiver needs to know about a whole payload before acting on it;
// nullopt if any byte of it is malformed, unknown or out of range, or the
// payload is empty.
struct PayloadCheck {
  bool ack_eliciting = false;
  std::size_t ack_frames = 0;  // a receiver accepts at most one (protocol.md 4.3)
};
std::optional<PayloadCheck> check_frames(std::span<const std::byte> payload);

// All frames of a payload in a vector (tests and tools), nullopt as for
// check_frames. StreamFrame::data points into `payload`, so the payload must
// outlive the returned frames.
std::optional<std::vector<Frame>> parse_frames(std::span<const std::byte> payload);

// Does the frame elicit an ACK (RFC 9000 section 13.2.1)? All but PADDING,
// ACK and CLOSE do.
bool is_ack_eliciting(const Frame& frame);

// 1..kMaxAckRanges ranges, each smallest <= largest, strictly descending with
// at least one missing packet number between neighbours, largest <= kVarintMax.
bool is_valid_ack(const AckFrame& ack);

// The ACK frame for `ranges_descending` (as is_valid_ack() wants them,
// newest first) carrying as many of the newest ranges as fit in
// `budget_bytes`, at most kMaxAckRanges; nullopt if not even the first fits.
// An ACK timestamp (modulo kAckTimestampRange) as the peer's clock without
// the wrap: the value nearest to `last`, which it updates (ACKs may come
// reordered, never half a range apart). The first one is taken as it is.
Duration unwrap_ack_timestamp(std::optional<Duration>& last, Duration wire);

// With `timestamp`, an ACK_TIMESTAMPED frame that carries it.
std::optional<AckFrame> fit_ack_frame(std::span<const AckRange> ranges_descending,
                                      Duration ack_delay, std::size_t budget_bytes,
                                      std::optional<Duration> timestamp = std::nullopt);

// The most stream data bytes a STREAM frame for (`stream_id`, `offset`) can
// carry within `budget_bytes`, or nullopt when not even an empty frame (a
// bare FIN) fits. Also respects offset + length < 2^62.
std::optional<std::size_t> max_stream_data_that_fits(StreamId stream_id, std::uint64_t offset,
                                                     std::size_t budget_bytes);

// Structural equality for every frame type; StreamFrame data is compared by
// content (Frame has no operator== because StreamFrame holds a span).
bool frames_equal(const Frame& a, const Frame& b);

}  // namespace egw::tunnel
