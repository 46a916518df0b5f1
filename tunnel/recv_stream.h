// The receiving half of a stream (RFC 9000 sections 2.2, 4.1, 4.5).
//
// Model: STREAM frames may arrive out of order, duplicated or overlapping;
// their bytes land in a ring addressed from read_offset and a RangeSet
// records which offsets are present. The application reads the contiguous
// prefix. Everything we hold is below the credit we advertised
// (max_stream_data), so memory is bounded by the window: a byte beyond it is
// a flow-control violation, and a frame that contradicts a known final size
// is a final-size violation; both close the connection.
//
// Credit: we advertise read_offset + window once half the window has been
// consumed (quiche/msquic style), so a reader that keeps up never stalls the
// sender and one that stops bounds it. The window auto-tunes between its
// initial size and a maximum (WindowTuner, tunnel/flow_control.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/units.h"
#include "tunnel/byte_ring.h"
#include "tunnel/flow_control.h"
#include "tunnel/range_set.h"

namespace egw::tunnel {

class RecvStream {
 public:
  // `initial_credit` is what the peer may send before hearing from us (the
  // protocol's initial stream credit); the window then takes over.
  // `pool` (may be null) lends the buffer its storage; it must outlive the stream.
  // The window may grow to max_window_bytes (0 or smaller: fixed).
  RecvStream(ByteCount window_bytes, std::uint64_t initial_credit, BufferPool* pool = nullptr,
             ByteCount max_window_bytes = 0);

  enum class Status { ok, flow_control_error, final_size_error, too_fragmented };
  struct FrameResult {
    Status status = Status::ok;
    // How far the highest received offset moved: what the frame consumed of
    // the connection-level credit.
    std::uint64_t new_bytes = 0;
  };
  FrameResult on_stream_frame(std::uint64_t offset, std::span<const std::byte> data, bool fin);

  // In-order read; *fin (if given) is set once every byte up to the FIN has
  // been read.
  std::size_t read(std::span<std::byte> out, bool* fin);
  // read() without a copy: the in-order bytes ready now, in place (valid
  // until the stream changes), then consume() of those the caller used
  // (sent to a socket); consume() sets *fin as read() does.
  ByteRing::ConstPieces peek() const;
  void consume(std::size_t bytes, bool* fin);
  // New in-order data or an unread FIN.
  bool readable() const;
  bool fin_read() const { return fin_read_; }

  // A new MAX_STREAM_DATA value when one is due, else nullopt; `now` and the
  // connection's smoothed `rtt` drive the auto-tuning (rtt 0: no growth).
  std::optional<std::uint64_t> take_credit_update(Instant now = Instant{}, Duration rtt = Duration{0});
  // take_credit_update would give one (the caller then finds the RTT).
  bool credit_update_due() const;
  ByteCount window() const { return tuner_.window(); }
  std::uint64_t max_stream_data() const { return max_stream_data_; }
  std::uint64_t read_offset() const { return read_offset_; }
  std::uint64_t highest_received() const { return highest_received_; }
  std::optional<std::uint64_t> final_size() const { return final_size_; }
  ByteCount buffered_bytes() const { return buffer_.size(); }
  // Reassembly holes (+1): the connection sums them over its streams.
  std::size_t interval_count() const { return received_.interval_count(); }

  // Cap on reassembly holes: an honest peer sending full packets leaves at
  // most window / packet holes; a hostile one sending 1-byte frames could
  // otherwise force a map node per byte.
  static constexpr std::size_t kMaxIntervals = 4096;

 private:
  WindowTuner tuner_;
  ByteRing buffer_;               // bytes [read_offset_, highest_received_)
  RangeSet received_;             // offsets present, >= read_offset_
  std::uint64_t read_offset_ = 0;
  std::uint64_t highest_received_ = 0;
  std::uint64_t max_stream_data_ = 0;
  std::optional<std::uint64_t> final_size_;
  bool fin_read_ = false;
};

}  // namespace egw::tunnel
