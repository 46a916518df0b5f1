// Private to connection*.cc: the state behind Connection (pimpl).
//
// Split across files by direction: connection.cc holds the setup, stream
// bookkeeping, the ensemble's life and the public API, connection_receive.cc
// the receive path (frames in), connection_send.cc the send path (frames
// out), loss/ack bookkeeping and timers.
//
// Invariants:
//  - streams_ holds every stream not yet closed or reset; each one is a
//    member of ensemble_ (which exists whenever streams_ is non-empty);
//  - history holds what every packet since the live ensemble started
//    carried (tunnel/sent_history.h): in flight, lost (kept for a late ACK
//    until 3 PTOs or kMaxDeclaredLostRecords), or settled (dropped from the
//    front); it resets when the ensemble retires;
//  - a stream's `backlogged` flag is what the ensemble was last told
//    (set_backlogged); backlogged_count counts the flags set. Every change
//    of what a stream could send goes through update_backlog(), so nothing
//    per packet scans the streams;
//  - nothing on the steady packet path allocates: frame records, events,
//    resets and id sets live in rings and vectors that keep their capacity,
//    and drained stream buffers go back to buffer_pool.
//  - every pending control frame is either a flag (its current value is
//    computed when sent, so a requeued frame is always current) or a RESET.
#pragma once

#include <cstdint>
#include <array>
#include <map>
#include <unordered_map>
#include <memory>
#include <optional>
#include <vector>

#include "common/ring_deque.h"

#include "tunnel/ack_share_meter.h"
#include "tunnel/ack_tracker.h"
#include "tunnel/connection.h"
#include "tunnel/flow_control.h"
#include "tunnel/flows.h"
#include "tunnel/range_set.h"
#include "tunnel/recv_stream.h"
#include "tunnel/send_stream.h"
#include "tunnel/sent_history.h"
#include "tunnel/sorted_ids.h"
#include "tunnel/wire_writer.h"

namespace egw::tunnel {

// Caps on network-driven state.
inline constexpr std::size_t kMaxPendingResets = 4096;
// Unsettled tombstones: a peer stream's slot (MAX_STREAMS) comes back only
// when its tombstone settles, so the peer's own streams cannot pass
// max_incoming_streams; beyond this cap (a peer that never answers RESETs)
// the connection closes (EXCESSIVE_LOAD) rather than forget a final size,
// which would leak connection credit.
inline constexpr std::size_t kMaxResetTombstones = 4096;
inline constexpr std::size_t kMaxPeerIdIntervals = 1024;
// Reassembly holes over all streams of the connection (RecvStream caps
// each stream at kMaxIntervals): 16 bytes each, so 256 KiB at most.
inline constexpr std::size_t kMaxConnectionRecvIntervals = 16'384;
// Final sizes of streams the peer reset, kept to check data that arrives
// after the RESET (the oldest are forgotten beyond this).
inline constexpr std::size_t kMaxResetFinalSizes = 4096;
// Skipped packet numbers remembered (optimistic-ACK defence): one skip per
// 64..255 packets, so 16 cover thousands of packets in flight.
inline constexpr std::size_t kSkippedPacketNumbers = 16;
// DPLPMTUD: probes per size before it counts as too big; losses in a row of
// packets above the base that mean a black hole; search granularity; how
// long after a search (or a black hole) to probe again (RFC 8899's
// PMTU_RAISE_TIMER).
inline constexpr int kPmtuMaxProbes = 3;
inline constexpr int kPmtuBlackHoleLosses = 6;
inline constexpr ByteCount kPmtuGranularityBytes = 16;
inline constexpr Duration kPmtuRaiseInterval = ms(600'000);

// When room comes back in the connection's send budget, StreamWritable goes
// to the blocked streams in order, one per this much room.
inline constexpr std::size_t kWritableQuantumBytes = 16 * 1024;
// Lost packets kept in the history for a late ACK (beyond 3 PTOs they go anyway).
inline constexpr std::size_t kMaxDeclaredLostRecords = 1024;

struct Stream {
  Stream(StreamId stream_id, bool opened_locally, const ConnectionConfig& config,
         BufferPool* pool)
      : id(stream_id),
        local(opened_locally),
        send(config.stream_send_buffer_bytes, config.peer.initial_max_stream_data, pool,
             config.stream_send_buffer_max_bytes),
        recv(config.stream_receive_window_bytes, kInitialStreamCreditBytes, pool,
             config.stream_receive_window_max_bytes) {}

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
  // A local stream beyond the peer's MAX_STREAMS: neither its STREAM_OPEN
  // nor its data go out until the limit allows it.
  bool open_blocked = false;
  // stream_write was cut short by the connection's send budget.
  bool connection_write_blocked = false;
  // What this stream adds to the connection's totals (recv_intervals,
  // send_buffered): the last values sync_accounting() saw.
  std::size_t counted_recv_intervals = 0;
  std::uint64_t counted_send_bytes = 0;
  // Pending control frames for this stream.
  bool open_pending = false;
  bool class_pending = false;
  bool credit_pending = false;
  // A retransmission, or new data (or the FIN) within the stream's own
  // credit: the last value given to the ensemble's set_backlogged.
  bool backlogged = false;
};

// A stream we reset: until the peer's RESET arrives, bytes it sent still
// count against connection credit, so we keep the highest offset we saw.
struct ResetTombstone {
  std::uint64_t highest_received = 0;
};

// A small xorshift generator: which packet numbers to skip.
struct SkipRng {
  std::uint64_t state;
  std::uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

struct Connection::Impl {
  Impl(const ConnectionConfig& config, std::unique_ptr<PacketProtection> protection,
       congestion::TemporalCache* cache, Instant now);

  // --- receive path (connection_receive.cc) ---
  void on_datagram(std::span<std::byte> datagram, Instant now);
  void apply_frame(const Frame& frame, Instant now);
  void on_stream_open_frame(const StreamOpenFrame& f, Instant now);
  void on_stream_frame(const StreamFrame& f, Instant now);
  void on_reset_frame(const ResetStreamFrame& f, Instant now);
  void on_ack_frame(const AckFrame& f, Instant now);
  // The stream `id` names, creating a peer stream on first sight; nullptr when
  // the frame is for a closed stream (or the stream was refused / the
  // connection closed).
  // With create = false, a stream not seen yet is not created (nullptr).
  Stream* stream_for_peer_frame(StreamId id, Instant now, bool create = true);
  void remember_final_size(StreamId id, std::uint64_t final_size);
  void account_tombstone(StreamId id, std::uint64_t end);
  // Records a peer stream id as seen (opened, or reset unseen); false, with
  // the connection closed (EXCESSIVE_LOAD), beyond kMaxPeerIdIntervals.
  bool note_peer_id(StreamId id);
  // Queues a RESET to send; false, with the connection closed
  // (EXCESSIVE_LOAD), at kMaxPendingResets: a peer that does not ACK must not
  // make us queue answers without bound.
  bool queue_reset(const ResetStreamFrame& reset);
  void notify_readable(Stream& s);
  // Peer stream ids at or above the limit we advertised: STREAM_LIMIT
  // (closes; true when it did).
  bool beyond_stream_limit(StreamId id);
  // A peer stream ended for good (its slot comes back): maybe MAX_STREAMS.
  void on_peer_stream_ended();
  void maybe_raise_max_streams();
  void on_max_streams_frame(std::uint64_t maximum, Instant now);
  // Folds a stream's reassembly holes and send buffer into the connection's
  // totals; false (connection closed) beyond a per-connection cap.
  bool sync_accounting(Stream& s);
  void forget_accounting(Stream& s);
  void release_write_blocked();
  void return_credit();

  // --- shared (connection.cc) ---
  bool is_peer_stream(StreamId id) const { return (id % 2) != (config.is_client ? 0u : 1u); }
  Stream* find(StreamId id);
  Stream& create_stream(StreamId id, bool local, Instant now);
  void remove_stream(StreamId id, Instant now);
  // Local reset (also used to refuse a stream): RESET + tombstone (none
  // when the peer's final size is known already).
  void reset_locally(StreamId id, std::uint64_t error_code, std::uint64_t sent_end,
                     std::uint64_t highest_received, std::uint64_t read_offset,
                     bool final_size_known);
  void check_stream_done(StreamId id, Instant now);
  void after_read(Stream& s, std::size_t bytes, Instant now);
  Duration autotune_rtt() const;
  void close_with_error(std::uint64_t code, std::string reason);
  void ensure_ensemble(Instant now);
  void count_busy_period();
  void maybe_retire_ensemble(Instant now);
  Duration ensemble_linger(const congestion::EnsembleStats& es) const;
  bool control_pending() const;
  bool credit_pending() const;
  // Stream data that only the window, the pacer or a join keeps from going:
  // lost data to resend, or new data the peer's connection credit allows.
  bool stream_data_waiting() const {
    return !retransmit_streams.empty() || (backlogged_count > 0 && send_credit.available() > 0);
  }
  void mark_control(Stream& s);
  // A MAX_STREAM_DATA for `s` is due (marks it urgent, see credit_pending).
  void mark_credit(Stream& s);
  // Tells the ensemble when what `s` could send changed (see invariants).
  void update_backlog(Stream& s, Instant now);

  // --- datagram flows (connection_flows.cc) ---
  void on_flow_open_frame(const FlowOpenFrame& f, Instant now);
  void on_flow_close_frame(const FlowCloseFrame& f, Instant now);
  void on_datagram_frame(const DatagramFrame& f);
  Flow* find_flow(FlowId id);
  Flow& create_flow(FlowId id, bool local, const Destination& destination, ContentClass cls,
                    Instant now);
  void remove_flow(FlowId id, Instant now);
  // Queues a FLOW_CLOSE; false, with the connection closed, at kMaxPendingFlowCloses.
  bool queue_flow_close(const FlowCloseFrame& close);
  Duration datagram_deadline(ContentClass cls) const;
  // Drops the datagrams at the front older than the flow's deadline.
  void drop_expired(Flow& f, Instant now);
  void update_flow_backlog(Flow& f, Instant now);
  bool flow_control_pending() const;
  void write_flow_control_frames(WireWriter& w);
  void write_datagram_frames(Flow& f, WireWriter& w, SentEntry& entry, Instant now);
  // Bytes the front datagram of `f` needs in a packet (with its FLOW_OPEN).
  std::size_t datagram_frame_need(const Flow& f) const;
  // A backlogged flow that may send now (when connection credit holds the
  // streams back, or the scheduler picked a flow whose datagrams expired).
  std::optional<congestion::MemberId> pick_flow(Instant now);
  void on_flow_controls_acked(const SentEntry& e);
  std::size_t datagram_payload_limit() const;

  // --- send path (connection_send.cc) ---
  std::optional<Transmit> poll_transmit(Instant now, std::span<std::byte> buffer);
  std::optional<Transmit> build_close(std::span<std::byte> buffer);
  void write_control_frames(WireWriter& w);
  void write_stream_frames(Stream& s, WireWriter& w, SentEntry& entry, Instant now);
  std::optional<StreamId> pick_data_member(Instant now);
  // Seals the packet being built (history's back entry): in place, but for
  // the seal_sources, which it consumes.
  std::size_t seal(std::span<std::byte> buffer, std::size_t frames_bytes, bool urgent = false);
  // Does the packet go on the urgent lane? (connection_send.cc)
  bool urgent_packet(const SentEntry& entry, const Flow* flow, bool whole_burst) const;
  void on_packet_acked(PacketNumber number);
  void on_packet_lost(PacketNumber number, Instant now);
  void arm_tail_probe(const congestion::SentPacket& newest, Instant now);
  // A packet of new data just left `s`: a thin stream's tail goes again on
  // a lossy path (config.thin_stream_copy_loss_ppm).
  void copy_thin_tail(Stream& s, const SentEntry& entry);
  bool path_lossy() const;
  void on_late_ack(PacketNumber smallest, PacketNumber largest);
  // Drops settled history entries, and lost ones past their lifetime.
  void trim_history(Instant now);
  struct ControlLost;  // what the loss of each kind of control frame requeues
  std::optional<Instant> next_timeout() const;
  void on_timeout(Instant now);
  std::optional<Instant> idle_deadline() const;
  std::optional<Instant> keepalive_deadline() const;

  ConnectionConfig config;
  std::unique_ptr<PacketProtection> protection;
  congestion::TemporalCache* cache;
  // The stream bytes of the packet being built, left in their send rings:
  // seal() encrypts them from there into the packet (seal_gather), which
  // saves copying them in first (~4 % of the branch's CPU in a bulk
  // transfer). A chunk takes one or two (a wrapped ring); past the array
  // they are copied in as before.
  static constexpr std::size_t kMaxSealSources = 8;
  std::array<SealSource, kMaxSealSources> seal_sources{};
  std::size_t seal_source_count = 0;

  AckTracker ack_tracker;
  AckShareMeter ack_share;  // config.ack_decimation_measured
  std::unique_ptr<congestion::Ensemble> ensemble;
  bool ensemble_resumed = false;          // it started from the temporal cache
  bool ensemble_carried_streams = false;  // a busy period, not only control frames
  // When an ensemble that carried streams, now without any, retires
  // (maybe_retire_ensemble): set when it falls idle, cleared by a new stream.
  std::optional<Instant> ensemble_retire_at;
  congestion::EnsembleStats last_ensemble_stats;
  // The retired ensembles' counts (ConnectionStats::packets_lost, loss_rounds).
  std::uint64_t retired_packets_lost = 0;
  std::uint64_t retired_loss_rounds = 0;
  std::uint64_t retired_random_loss_rounds = 0;
  std::uint64_t retired_tail_probes = 0;
  std::uint64_t retired_rtos = 0;
  SentHistory history;
  PacketNumber next_packet_number = 0;
  // Optimistic-ACK defence: numbers we skipped on purpose.
  SkipRng skip_rng;
  PacketNumber next_skip = 0;
  std::array<PacketNumber, kSkippedPacketNumbers> skipped{};
  std::size_t skipped_count = 0;  // valid entries (ring, newest at (count-1) % N)
  bool acks_skipped_number(const AckFrame& f) const;
  void skip_packet_number();

  // DPLPMTUD (RFC 8899) state: the size in use, the search interval
  // (pmtu_low works, pmtu_high does not or is the ceiling + 1), the probe in
  // flight and its deadline.
  struct Pmtu {
    bool enabled = false;
    ByteCount base = 0;
    ByteCount current = 0;
    ByteCount low = 0;
    ByteCount high = 0;  // exclusive
    std::optional<PacketNumber> probe;
    ByteCount probe_size = 0;
    Instant probe_deadline{};
    int failures = 0;              // lost probes of probe_size
    int large_losses = 0;          // lost packets above the base, in a row
    std::optional<Instant> next_search;  // when searching is done, search again then
    bool first_search_done = false;      // the one that runs right after the handshake
    bool searching() const { return high - low > kPmtuGranularityBytes; }
  } pmtu;
  std::optional<Instant> pmtu_probe_due(Instant now) const;
  std::optional<Transmit> build_pmtu_probe(Instant now, std::span<std::byte> buffer);
  void on_pmtu_probe_result(bool acked, Instant now);
  void on_pmtu_packet_fate(const SentEntry& e, bool acked);
  void set_pmtu_current(ByteCount bytes);
  Duration probe_timeout() const;

  // Before `streams`: their buffers go back to it when they are destroyed.
  BufferPool buffer_pool;
  // Hashed, not ordered: a lookup per frame must not walk a tree of 10,000
  // streams. Iteration order is not relied on.
  std::unordered_map<StreamId, Stream> streams;
  std::size_t backlogged_count = 0;  // streams with `backlogged` set
  SortedIds control_streams;     // streams with a pending control flag
  SortedIds retransmit_streams;  // streams with lost data to resend
  // The path's recent loss rate, for thin-stream copies: ack-eliciting
  // packets sent and declared lost, both halved when sent reaches 8,192.
  std::uint32_t recent_sent = 0;
  std::uint32_t recent_lost = 0;
  std::vector<StreamId> acked_streams;    // touched by the ACK being processed
  StreamId next_local_id;
  RangeSet peer_ids_seen;  // peer stream indexes (id / 2) ever opened
  std::size_t peer_stream_count = 0;
  std::map<StreamId, ResetTombstone> tombstones;
  std::map<StreamId, std::uint64_t> reset_final_sizes;  // peer streams the peer reset
  RingDeque<ResetStreamFrame> pending_resets;
  bool max_data_pending = false;
  bool ping_pending = false;
  // A stream's MAX_STREAM_DATA is pending (set with its flag, cleared when
  // every pending stream control frame went out).
  bool stream_credit_urgent = false;

  // Stream limits (RFC 9000 section 4.6). Ours: the peer may use stream
  // indexes (id / 2) below local_max_streams; theirs: we may use indexes
  // below peer_max_streams, later streams wait in blocked_opens (ascending).
  std::uint64_t local_max_streams = 0;
  std::uint64_t peer_streams_ended = 0;
  std::uint64_t peer_streams_used = 0;  // highest peer index seen + 1
  bool max_streams_pending = false;
  std::uint64_t peer_max_streams = 0;
  RingDeque<StreamId> blocked_opens;
  std::map<StreamId, std::uint64_t> deferred_resets;  // blocked streams reset locally

  // Per-connection totals of per-stream memory.
  std::size_t recv_intervals = 0;    // reassembly holes, all streams
  std::uint64_t send_buffered = 0;   // send buffer bytes, all streams
  RingDeque<StreamId> write_blocked;  // cut short by connection_send_buffer_bytes

  SendCredit send_credit;
  RecvCredit recv_credit;

  // Datagram flows: every flow not yet closed is a member of the ensemble.
  std::unordered_map<FlowId, Flow> flows;
  FlowId next_local_flow = 0;
  RangeSet peer_flow_ids_seen;  // peer flow indexes (id / 2) ever opened
  std::size_t peer_flow_count = 0;
  std::size_t backlogged_flow_count = 0;
  std::vector<FlowId> flow_opens_pending;  // flows with open_pending set
  RingDeque<FlowCloseFrame> pending_flow_closes;

  RingDeque<ConnectionEvent> events;
  ConnectionStats stats;

  bool closed = false;
  std::optional<CloseFrame> close_to_send;
  Instant epoch;  // our ACK timestamps count from here
  std::optional<Duration> peer_ack_clock;  // the peer's last ACK timestamp, unwrapped
  Instant last_activity;
  bool eliciting_sent_since_receive = false;
  std::optional<Instant> last_keepalive;
  std::optional<Instant> pacing_release;  // set when only pacing held data back
};

}  // namespace egw::tunnel
