// Private to connection*.cc: the state behind Connection (pimpl).
//
// Split across files by direction: connection.cc holds the public API and the
// receive path (frames in), connection_send.cc the send path (frames out),
// loss/ack bookkeeping and timers.
//
// Invariants:
//  - streams_ holds every stream not yet closed or reset; each one is a
//    member of ensemble_ (which exists whenever streams_ is non-empty);
//  - sent_ holds one record per ack-eliciting packet the live ensemble
//    tracks; it empties when the ensemble retires, so its size is bounded by
//    the packets in flight;
//  - every pending control frame is either a flag (its current value is
//    computed when sent, so a requeued frame is always current) or a RESET.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "tunnel/ack_tracker.h"
#include "tunnel/connection.h"
#include "tunnel/flow_control.h"
#include "tunnel/range_set.h"
#include "tunnel/recv_stream.h"
#include "tunnel/send_stream.h"
#include "tunnel/wire_writer.h"

namespace egw::tunnel {

// Caps on network-driven state.
inline constexpr std::size_t kMaxPendingResets = 4096;
inline constexpr std::size_t kMaxResetTombstones = 4096;
inline constexpr std::size_t kMaxPeerIdIntervals = 1024;
inline constexpr std::size_t kMaxDeclaredLostRecords = 1024;

struct Stream {
  Stream(StreamId stream_id, bool opened_locally, const ConnectionConfig& config)
      : id(stream_id),
        local(opened_locally),
        send(config.stream_send_buffer_bytes, kInitialStreamCreditBytes),
        recv(config.stream_receive_window_bytes, kInitialStreamCreditBytes) {}

  StreamId id;
  bool local;
  Destination destination;
  ContentClass content_class = ContentClass::bulk;
  SendStream send;
  RecvStream recv;
  // A peer stream whose data arrived before its STREAM_OPEN is not shown to
  // the application until the STREAM_OPEN (with the destination) arrives.
  bool announced = false;
  bool readable_notified = false;  // a StreamReadable is out and unread
  // Pending control frames for this stream.
  bool open_pending = false;
  bool class_pending = false;
  bool credit_pending = false;
};

// A stream we reset: until the peer's RESET arrives, bytes it sent still
// count against connection credit, so we keep the highest offset we saw.
struct ResetTombstone {
  std::uint64_t highest_received = 0;
};

// What an ack-eliciting packet carried, to act on its ACK or loss.
struct SentChunk {
  StreamId stream_id = 0;
  std::uint64_t offset = 0;
  std::size_t length = 0;
  bool fin = false;
};
enum class ControlKind : std::uint8_t {
  stream_open, stream_class, max_stream_data, max_data, reset, ping
};
struct SentControl {
  ControlKind kind = ControlKind::ping;
  StreamId stream_id = 0;
  std::uint64_t value = 0;  // MAX_* value, class, or RESET error code
  std::uint64_t final_size = 0;  // RESET only
};
struct SentRecord {
  std::vector<SentChunk> chunks;  // all of one stream
  std::vector<SentControl> controls;
  std::optional<PacketNumber> largest_acked;  // the ACK frame it carried, if any
};

struct Connection::Impl {
  Impl(const ConnectionConfig& config, std::unique_ptr<PacketProtection> protection,
       congestion::TemporalCache* cache, Instant now);

  // --- receive path (connection.cc) ---
  void on_datagram(std::span<const std::byte> datagram, Instant now);
  void apply_frame(const Frame& frame, Instant now);
  void on_stream_open_frame(const StreamOpenFrame& f, Instant now);
  void on_stream_frame(const StreamFrame& f, Instant now);
  void on_reset_frame(const ResetStreamFrame& f, Instant now);
  void on_ack_frame(const AckFrame& f, Instant now);
  // The stream `id` names, creating a peer stream on first sight; nullptr when
  // the frame is for a closed stream (or the stream was refused / the
  // connection closed).
  Stream* stream_for_peer_frame(StreamId id, Instant now);
  void account_tombstone(StreamId id, std::uint64_t end);
  // Records a peer stream id as seen (opened, or reset unseen); false, with
  // the connection closed (EXCESSIVE_LOAD), beyond kMaxPeerIdIntervals.
  bool note_peer_id(StreamId id);
  // Queues a RESET to send; false, with the connection closed
  // (EXCESSIVE_LOAD), at kMaxPendingResets: a peer that does not ACK must not
  // make us queue answers without bound.
  bool queue_reset(const ResetStreamFrame& reset);
  void notify_readable(Stream& s);

  // --- shared ---
  bool is_peer_stream(StreamId id) const { return (id % 2) != (config.is_client ? 0u : 1u); }
  Stream* find(StreamId id);
  Stream& create_stream(StreamId id, bool local, Instant now);
  void remove_stream(StreamId id, Instant now);
  // Local reset (also used to refuse a stream): RESET + tombstone.
  void reset_locally(StreamId id, std::uint64_t error_code, std::uint64_t sent_end,
                     std::uint64_t highest_received, std::uint64_t read_offset);
  void check_stream_done(StreamId id, Instant now);
  void after_read(Stream& s, std::size_t bytes);
  void close_with_error(std::uint64_t code, std::string reason);
  void ensure_ensemble(Instant now);
  void maybe_retire_ensemble(Instant now);
  bool control_pending() const;
  void mark_control(Stream& s);

  // --- send path (connection_send.cc) ---
  std::optional<Datagram> poll_transmit(Instant now);
  std::optional<Datagram> build_close();
  bool write_control_frames(WireWriter& w, SentRecord& record);
  void write_stream_frames(Stream& s, WireWriter& w, SentRecord& record);
  std::optional<StreamId> pick_data_member(Instant now);
  Datagram seal(std::vector<std::byte>& payload);
  void on_packet_acked(PacketNumber number);
  void on_packet_lost(PacketNumber number);
  void on_late_ack(PacketNumber smallest, PacketNumber largest);
  std::optional<Instant> next_timeout() const;
  void on_timeout(Instant now);
  std::optional<Instant> idle_deadline() const;
  std::optional<Instant> keepalive_deadline() const;

  ConnectionConfig config;
  std::unique_ptr<PacketProtection> protection;
  congestion::TemporalCache* cache;

  AckTracker ack_tracker;
  std::unique_ptr<congestion::Ensemble> ensemble;
  congestion::EnsembleStats last_ensemble_stats;
  std::map<PacketNumber, SentRecord> sent;
  // Stream chunks of packets declared lost, so a late ACK still settles them
  // and they are not sent again (TCP fast start 3.4.4: a failed resume keeps
  // what got through; RFC 9002 6.1.2 spurious losses). Oldest dropped beyond
  // kMaxDeclaredLostRecords; cleared with sent.
  std::map<PacketNumber, std::vector<SentChunk>> declared_lost;
  PacketNumber next_packet_number = 0;

  std::map<StreamId, Stream> streams;
  std::set<StreamId> control_streams;     // streams with a pending control flag
  std::set<StreamId> retransmit_streams;  // streams with lost data to resend
  std::vector<StreamId> acked_streams;    // touched by the ACK being processed
  StreamId next_local_id;
  RangeSet peer_ids_seen;  // peer stream indexes (id / 2) ever opened
  std::size_t peer_stream_count = 0;
  std::map<StreamId, ResetTombstone> tombstones;
  std::deque<ResetStreamFrame> pending_resets;
  bool max_data_pending = false;
  bool ping_pending = false;

  SendCredit send_credit{kInitialConnectionCreditBytes};
  RecvCredit recv_credit;

  std::deque<ConnectionEvent> events;
  ConnectionStats stats;

  bool closed = false;
  std::optional<CloseFrame> close_to_send;
  Instant last_activity;
  bool eliciting_sent_since_receive = false;
  std::optional<Instant> last_keepalive;
  std::optional<Instant> pacing_release;  // set when only pacing held data back
  std::vector<std::byte> scratch;         // stream bytes being framed
};

}  // namespace egw::tunnel
