// The sending half of a stream (RFC 9000 sections 2.2, 3.1 and 4.1 in spirit).
//
// Model: the application writes into a bounded buffer that holds every byte
// not yet acknowledged, [acked_prefix, write_end). Bytes are sent once in
// order (next_offset advances) and then live in one of three states until
// the acked prefix passes them: in flight, acknowledged out of order
// (acked_ set), or declared lost (lost_ set, resent before any new byte).
// New bytes also stop at the peer's MAX_STREAM_DATA credit and at whatever
// connection-level credit the caller allows. FIN is one more "byte" at
// write_end with the same sent / lost / acknowledged life.
//
// Backpressure: write() accepts only what fits in the buffer's capacity; the
// caller learns when room is back with take_writable_signal(). The capacity
// follows the peer's credit (Linux grows a socket's send buffer with cwnd
// the same way): a buffer smaller than what the peer lets us have in
// flight would cap the stream below its receive window, which the peer
// auto-tunes to the path. So the capacity is the credit beyond the acked
// prefix, at least buffer_capacity_bytes and at most max_capacity_bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "common/units.h"
#include "tunnel/byte_ring.h"
#include "tunnel/range_set.h"

namespace egw::tunnel {

class SendStream {
 public:
  // `pool` (may be null) lends the buffer its storage; it must outlive the stream.
  // max_capacity_bytes 0 (or below buffer_capacity_bytes): a fixed capacity.
  SendStream(ByteCount buffer_capacity_bytes, std::uint64_t initial_peer_credit,
             BufferPool* pool = nullptr, ByteCount max_capacity_bytes = 0);

  // Application side.
  std::size_t write(std::span<const std::byte> data);
  // write() without a copy: room for up to `bytes` (at most buffer_room_bytes())
  // at the buffer's end, filled by the caller (a socket read), then
  // commit_write() of what was filled. Nothing else may touch the stream in
  // between. A finished stream gives no room.
  ByteRing::Pieces write_room(std::size_t bytes);
  void commit_write(std::size_t bytes);
  void finish();  // FIN after the bytes written so far; later writes are refused
  bool finished() const { return fin_requested_; }
  ByteCount buffer_room_bytes() const;
  ByteCount capacity_bytes() const;
  // True once after a write() was cut short (or mark_write_blocked()) and
  // room has come back.
  bool take_writable_signal();
  // The writer found no room and waits for the writable signal.
  void mark_write_blocked() { write_blocked_ = true; }

  // Peer credit (MAX_STREAM_DATA); it only grows.
  void on_max_stream_data(std::uint64_t maximum);
  std::uint64_t peer_credit() const { return peer_max_data_; }

  // A piece to put in one STREAM frame.
  struct Chunk {
    std::uint64_t offset = 0;
    std::size_t length = 0;
    bool fin = false;
    bool retransmission = false;
  };
  bool has_retransmission() const;
  // Is there a new byte (or the FIN) that may go out with `new_bytes_allowed`
  // bytes of connection credit?
  bool has_new_data(std::uint64_t new_bytes_allowed) const;
  // The offset the next take_chunk() would start at (so the caller can size
  // the frame header), or nullopt when nothing can be sent.
  std::optional<std::uint64_t> next_send_offset(std::uint64_t new_bytes_allowed) const;
  // Takes up to `max_length` bytes: lost ranges first, else new bytes within
  // the peer's credit and `new_bytes_allowed`. Marks them sent.
  std::optional<Chunk> take_chunk(std::size_t max_length, std::uint64_t new_bytes_allowed);
  // Copies the chunk's bytes (they are still buffered until acknowledged).
  void copy_out(const Chunk& chunk, std::span<std::byte> out) const;
  // The chunk's bytes where they are buffered (two spans when the ring
  // wraps): the packet seals them from there (PacketProtection::seal_gather).
  // Valid until the stream's buffer next changes (a write or an ACK).
  ByteRing::ConstPieces pieces(const Chunk& chunk) const;

  // Feedback from the packets that carried chunks.
  void on_acked(std::uint64_t offset, std::size_t length, bool fin);
  void on_lost(std::uint64_t offset, std::size_t length, bool fin);

  // Bytes sent and not yet acknowledged in order (out-of-order acked ones
  // included): a thin stream has at most a packet's worth.
  std::uint64_t unacked_bytes() const { return next_offset_ - acked_prefix_; }
  // Everything sent and not acknowledged (a sent FIN too) goes once more,
  // ahead of new data, as if lost: a redundant copy; whichever copy is
  // acknowledged first settles the bytes and cancels what is still queued.
  void resend_unacked() { on_lost(acked_prefix_, unacked_bytes(), fin_sent_); }

  // Every byte and the FIN acknowledged.
  bool all_acked() const;
  // Highest offset ever sent: the final size a RESET reports.
  std::uint64_t sent_end() const { return next_offset_; }
  std::uint64_t write_end() const { return write_end_; }
  std::uint64_t acked_prefix() const { return acked_prefix_; }
  ByteCount buffered_bytes() const { return buffer_.size(); }
  // Ranges acknowledged out of order / declared lost: the peer's ACK
  // pattern drives them, so the connection caps them.
  std::size_t acked_interval_count() const { return acked_.interval_count(); }
  std::size_t lost_interval_count() const { return lost_.interval_count(); }
  // Cap on either set (16 bytes per range): a peer acknowledging every
  // other tiny chunk would otherwise grow them up to the buffer size in
  // ranges. The connection closes (EXCESSIVE_LOAD) once too_fragmented().
  static constexpr std::size_t kMaxIntervals = 4096;
  bool too_fragmented() const {
    return acked_.interval_count() > kMaxIntervals || lost_.interval_count() > kMaxIntervals;
  }

 private:
  std::uint64_t new_data_end(std::uint64_t new_bytes_allowed) const;

  // 32-bit (buffers stay below 4 GiB): the per-stream state is kept within
  // a kilobyte (tests/alloc).
  std::uint32_t capacity_bytes_;
  std::uint32_t max_capacity_bytes_;
  ByteRing buffer_;                 // bytes [acked_prefix_, write_end_)
  std::uint64_t acked_prefix_ = 0;  // everything below is acknowledged and freed
  std::uint64_t next_offset_ = 0;   // first byte never sent
  std::uint64_t write_end_ = 0;     // first byte not yet written
  std::uint64_t peer_max_data_ = 0;
  RangeSet acked_;  // acknowledged above acked_prefix_
  RangeSet lost_;   // to resend, within [acked_prefix_, next_offset_)
  bool fin_requested_ = false;
  bool fin_sent_ = false;
  bool fin_lost_ = false;
  bool fin_acked_ = false;
  bool write_blocked_ = false;
};

}  // namespace egw::tunnel
