// One tunnel connection between two gateways: a sans-IO state machine that
// carries many reliable, ordered, flow-controlled streams (one per proxied TCP
// connection) over datagrams, with congestion control from congestion/.
//
// Driving it (the simulator and the Asio driver do exactly this):
//   conn.on_datagram(bytes, now);            // for every datagram received
//   while (auto t = conn.poll_transmit(now, buffer)) send(buffer.first(t->bytes));
//   arm a timer for conn.next_timeout(); when it fires: conn.on_timeout(now)
//   while (auto e = conn.poll_event()) handle(*e);
// and after any stream_write / stream_read / close, poll_transmit again.
//
// Events: StreamOpened once per peer stream (when its STREAM_OPEN arrives);
// StreamReadable when new in-order data (or the FIN) is available, again only
// after the owner called stream_read; StreamWritable after a stream_write
// was cut short (by the stream's send buffer or the connection's
// connection_send_buffer_bytes) and room came back; StreamReset when the *peer* reset a
// stream (RESET aborts both directions; the stream is gone, and the side
// that called stream_reset gets no event); StreamClosed when both
// directions finished normally; ConnectionClosed exactly once, however the
// connection ends (close(), CLOSE from the peer, a protocol error, idle
// timeout). A connection with open streams sends a PING every
// idle_timeout / 2, so only a silent peer times it out.
//
// Transport parameters: ConnectionConfig::peer holds what the peer
// advertised in the handshake (the session layer fills it in;
// local_transport_parameters() says what this side advertises). Its default,
// kAssumedPeerTransportParameters, is what both sides assumed before there
// was a handshake (kInitialStreamCreditBytes / kInitialConnectionCreditBytes,
// tunnel/flow_control.h), so a connection without a handshake still works:
// MAX_STREAM_DATA / MAX_DATA / MAX_STREAMS then raise the limits.
//
// Datagram flows (tunnel/flows.h): open_flow / send_datagram carry a UDP
// flow as unreliable datagrams (RFC 9221 semantics), scheduled by class
// beside the streams and counted in the same window, never retransmitted.
// Events: FlowOpened when the peer's FLOW_OPEN arrives, DatagramReceived
// per datagram, FlowClosed when the peer closed a flow (not for close_flow).
//
// Stream limit (RFC 9000 section 4.6): the peer may open at most
// `peer.initial_max_streams` streams, raised by MAX_STREAMS as its streams
// end. open_stream() never fails for that reason: a stream beyond the
// limit is usable locally (stream_write buffers), but its STREAM_OPEN and
// data wait until MAX_STREAMS allows it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "common/content_class.h"
#include "common/units.h"
#include "congestion/ensemble.h"
#include "congestion/temporal_cache.h"
#include "tunnel/error_codes.h"
#include "tunnel/frames.h"
#include "tunnel/flow_control.h"
#include "tunnel/packet_protection.h"
#include "tunnel/transport_parameters.h"

namespace egw::tunnel {

// The peer's transport parameters a connection assumes without a handshake:
// the protocol's initial credits, the default stream limit and timers.
inline constexpr TransportParameters kAssumedPeerTransportParameters = [] {
  TransportParameters p;
  p.initial_max_stream_data = kInitialStreamCreditBytes;
  p.initial_max_data = kInitialConnectionCreditBytes;
  p.initial_max_streams = 1024;  // ConnectionConfig::max_incoming_streams' default
  p.max_datagram_bytes = 1472;   // ConnectionConfig::max_receive_datagram_bytes' default
  p.idle_timeout_ms = 30'000;
  p.max_ack_delay_ms = 25;
  return p;
}();

struct ConnectionConfig {
  // Which side: the branch (client) opens even stream ids, the hub odd ones.
  bool is_client = true;
  // Largest datagram this side sends, header and tag included (never more
  // than peer.max_datagram_bytes).
  ByteCount max_datagram_bytes = 1200;
  // Largest datagram this side accepts (advertised as max_datagram_bytes);
  // a bigger one is dropped unread (counted as malformed). At most 65535.
  ByteCount max_receive_datagram_bytes = 1472;
  // Its max_datagram_bytes is set from ours, then follows the size path MTU
  // discovery puts in use.
  congestion::EnsembleConfig ensemble;
  // Key under which this connection's ensemble state is cached (the peer).
  std::string cache_key = "peer";
  // Flow control: receive windows we advertise, and so our memory bound.
  // Each starts at its size and auto-tunes (WindowTuner, flow_control.h) up
  // to its *_max_bytes when the peer uses it within two RTTs; a max of 0 (or
  // below the size) keeps the window fixed. The max is the memory bound.
  ByteCount stream_receive_window_bytes = 1 << 20;
  ByteCount stream_receive_window_max_bytes = 0;
  ByteCount connection_receive_window_bytes = 16 << 20;
  ByteCount connection_receive_window_max_bytes = 0;
  // How much a stream may buffer for sending before stream_write pushes back;
  // it grows with the peer's stream credit up to stream_send_buffer_max_bytes
  // (0: fixed), so an auto-tuned peer window is not capped by our buffer.
  ByteCount stream_send_buffer_bytes = 1 << 20;
  ByteCount stream_send_buffer_max_bytes = 0;
  // The same over all streams of the connection: stream_write accepts only
  // what fits in both budgets.
  ByteCount connection_send_buffer_bytes = 16 << 20;
  // Peer streams open at once: the MAX_STREAMS we advertise is this plus the
  // number of peer streams that ended.
  std::size_t max_incoming_streams = 1024;
  Duration max_ack_delay = ms(25);
  std::uint32_t ack_every_packets = 2;  // ack-eliciting packets per immediate ACK
  // ACK decimation past startup (AckTracker, "Decimation"): about one ACK
  // per quarter RTT, at most ack_decimation_max_packets packets apart, each
  // within max_ack_delay. false: every ack_every_packets. Off by default: a
  // sparser ACK clock releases joins and credit in bigger steps (the papers'
  // join and pacing scenarios lose their bounds), so it is for a side whose
  // uplink is scarce (ensemble.ack_decimation: auto, the default, sets it
  // with max_rate.up; or true).
  bool ack_decimation = false;
  // With ack_decimation false: decimate while this side's ACKs take a
  // measured share of its own busy uplink (AckShareMeter).
  bool ack_decimation_measured = false;
  std::uint32_t ack_decimation_max_packets = 10;
  Duration idle_timeout = ms(30'000);  // the connection uses min(ours, the peer's)
  // PING every idle_timeout / 2 even without streams, so the connection (and
  // its keys) stays up between bursts: the branch keeps its tunnel warm and a
  // new client connection never waits for a handshake.
  bool keep_alive = false;
  // Silence after which a PING goes (with streams open, or keep_alive); 0:
  // idle_timeout / 2. Short enough and the session layer notices a dead
  // peer quickly (SessionTimers::dead_peer_after): the PING goes unanswered.
  Duration keep_alive_interval{0};
  // Seeds the choice of skipped packet numbers (optimistic-ACK defence,
  // RFC 9000 section 21.4); sans-IO, so not from the clock. Give each
  // connection its own (e.g. from the handshake's randomness). 0 disables
  // skipping (comparisons only: it also disables the defence). A skip costs
  // the receiver one immediate ACK (it looks like a loss) and one more ACK
  // range; in the paper scenarios that moves results within their spread.
  std::uint64_t packet_number_skip_seed = 0x9e3779b97f4a7c15ull;
  // The peer's transport parameters (from the handshake).
  TransportParameters peer = kAssumedPeerTransportParameters;
  // DPLPMTUD (RFC 8899): 0 disables it (datagrams stay at
  // max_datagram_bytes). Otherwise max_datagram_bytes is the base size that
  // always works, and PING + PADDING probes (not congestion controlled, their
  // loss no congestion signal) search up to min(this, peer.max_datagram_bytes);
  // an acknowledged probe raises the datagram size. Repeated losses of
  // packets above the base (a black hole) fall back to the base and search
  // again. poll_transmit's buffer must hold the ceiling for probes to go.
  ByteCount pmtu_probe_ceiling_bytes = 0;
  // The rate at which this side wants to receive (ensemble.max_rate.down,
  // bits/s of whole datagrams; 0: none), advertised in the transport
  // parameters. What this side sends is capped by ensemble.max_rate_bps
  // (its `up`) and the peer's advertised receive rate: the connection gives
  // its ensemble send_rate_limit_bps() of the two.
  std::uint64_t max_receive_rate_bps = 0;
  // Datagram flows. A datagram still queued this long after send_datagram
  // is dropped (counted) instead of sent: late audio is worse than none.
  // Per class (indexed by ContentClass); 0 takes datagram_deadline.
  Duration datagram_deadline = ms(50);
  std::array<Duration, kContentClassCount> datagram_deadline_by_class{};
  // Datagrams a flow may queue; beyond it the oldest goes (counted).
  std::size_t datagram_queue_datagrams = 64;
  // Peer flows open at once; a FLOW_OPEN beyond it is refused (FLOW_CLOSE).
  std::size_t max_incoming_flows = 4096;
  // Thin streams on a lossy path (issue 20: a request's p99 beside bulk).
  // When a packet of new data leaves a stream with nothing more to send and
  // at most a packet's worth unacknowledged (a request, a response, a
  // keystroke), that data goes once more right behind it while the path's
  // recent loss rate (declared lost / ack-eliciting packets sent, over the
  // last 4,096-8,192 sent) is at least this many per million; 0: never. A
  // lost message otherwise costs a round trip or more (the thresholds wait
  // for later packets' ACKs, or a PTO); both copies are lost at the rate
  // squared. The core's default is off (the papers' simulator); the
  // gateway's is on (ensemble.thin_stream_copies).
  std::uint32_t thin_stream_copy_loss_ppm = 0;
  // The peer schedules the application categories (ContentClass realtime and
  // after, wire values 4-7). An older peer fails a frame carrying one, so
  // without this the class hints it gets are nearest_content_type(). The
  // session sets it per connection from the handshake (kFlagCategories in
  // transport_parameters.h) or from the override below.
  bool peer_knows_categories = false;
  // The peer set kFlagAckTimestamps: our ACKs carry our clock (frames.h).
  bool peer_reads_ack_timestamps = false;
  // The peer set kFlagUrgentLane: packets that nothing should queue behind
  // go as PacketType::data_urgent (connection_send.cc, "The urgent lane").
  bool peer_reads_urgent_lane = false;
  // scheduler.peer_knows_categories: nullopt (`auto`) takes the handshake's
  // answer; true sends categories regardless; false treats the peer as an
  // older build (no announcement either, so no initiation is dropped).
  std::optional<bool> peer_knows_categories_override;
};

// The rate this side may send at: min of its own configured rate and the
// peer's advertised receive rate, either 0 meaning none.
std::uint64_t send_rate_limit_bps(std::uint64_t own_up_bps, std::uint64_t peer_down_bps);

// What this side advertises in the handshake: receive windows (as the
// receiver enforces them), max_incoming_streams, max_receive_datagram_bytes,
// idle timeout and max_ack_delay.
TransportParameters local_transport_parameters(const ConnectionConfig& config);

// Events for the owner of the connection (proxy relay, simulator app).
struct StreamOpened { StreamId id; Destination destination; ContentClass content_class; };
struct StreamReadable { StreamId id; };
struct StreamWritable { StreamId id; };
struct StreamReset { StreamId id; std::uint64_t error_code; };
// Every byte we wrote and our FIN were acknowledged, and the peer's FIN was read.
struct StreamClosed { StreamId id; };
struct ConnectionClosed { std::uint64_t error_code; std::string reason; };
struct FlowOpened { FlowId id; Destination destination; ContentClass content_class; };
// The peer closed the flow (error_code 0) or refused it (a stream error code).
struct FlowClosed { FlowId id; std::uint64_t error_code; };
struct DatagramReceived { FlowId flow; std::vector<std::byte> data; };
using ConnectionEvent =
    std::variant<StreamOpened, StreamReadable, StreamWritable, StreamReset, StreamClosed,
                 ConnectionClosed, FlowOpened, FlowClosed, DatagramReceived>;

// Datagram flow counts (ConnectionStats::flows).
struct FlowStats {
  std::uint64_t flows_open = 0;
  std::uint64_t flows_opened = 0;   // local and peer, since the start
  std::uint64_t flows_refused = 0;  // peer flows beyond max_incoming_flows
  std::uint64_t datagrams_sent = 0;
  std::uint64_t datagrams_received = 0;
  std::uint64_t datagrams_lost = 0;  // in packets declared lost: never resent
  // Dropped by this side, by reason.
  std::uint64_t dropped_deadline = 0;      // older than the flow's deadline
  std::uint64_t dropped_queue = 0;         // the flow's queue was full
  std::uint64_t dropped_too_large = 0;     // larger than max_datagram_payload()
  std::uint64_t dropped_unknown_flow = 0;  // received for a flow not open here
};

// One flow's counts (Connection::flow_counters; `ensemble-gw status`).
struct FlowCounters {
  ContentClass content_class = ContentClass::bulk;
  std::uint64_t datagrams_sent = 0;  // DATAGRAM frames written to the peer
  std::uint64_t bytes_sent = 0;      // their payload bytes
  std::uint64_t datagrams_received = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t dropped_deadline = 0;  // queued past the flow's deadline
  std::uint64_t dropped_queue = 0;     // the oldest, its queue full
};

// A datagram poll_transmit wrote into the caller's buffer.
struct Transmit {
  std::size_t bytes = 0;      // its size: the first `bytes` bytes of the buffer
  bool low_priority = false;  // DSCP LE (RFC 8622): unvalidated resumed window
  // The peer owes it an ACK (RFC 9002 section 2): a session that sent only
  // ACKs since it last heard from its peer has not "sent and heard nothing".
  bool ack_eliciting = false;
};

struct ConnectionStats {
  std::uint64_t datagrams_received = 0;
  std::uint64_t datagrams_dropped = 0;  // malformed, forged, duplicate
  // The three reasons, counted apart (they add up to datagrams_dropped).
  std::uint64_t datagrams_forged = 0;     // failed to open (or not a data packet)
  std::uint64_t datagrams_duplicate = 0;  // packet number already received
  std::uint64_t datagrams_malformed = 0;  // authentic but its frames do not parse
  // Of datagrams_malformed: larger than max_receive_datagram_bytes (dropped
  // before any field is read), or more than one ACK frame in the payload.
  std::uint64_t datagrams_oversized = 0;
  std::uint64_t datagrams_extra_ack = 0;
  std::uint64_t datagrams_sent = 0;
  std::uint64_t ack_timestamps_received = 0;  // ACK_TIMESTAMPED frames applied
  // Whether this side decimates its ACKs now (ack_decimation, or measured).
  bool ack_decimating = false;
  // Packets of flow-control credit (with the ACK and control frames) sent
  // past the window and the pacer.
  std::uint64_t credit_packets_past_window = 0;
  // Times a stream with data to send ran out of the peer's stream credit.
  std::uint64_t stream_credit_blocked = 0;
  std::uint64_t stream_bytes_retransmitted = 0;
  // Redundant copies of a thin stream's tail (thin_stream_copy_loss_ppm);
  // their bytes count in stream_bytes_retransmitted too.
  std::uint64_t thin_stream_copies = 0;
  // Memory in use now, over all streams: reassembly holes (16 bytes each,
  // capped at kMaxConnectionRecvIntervals) and send buffers (capped at
  // connection_send_buffer_bytes).
  std::uint64_t recv_reassembly_intervals = 0;
  std::uint64_t send_buffered_bytes = 0;
  // Received stream bytes not read yet (at most the connection receive window).
  std::uint64_t recv_buffered_bytes = 0;
  // The connection's receive window as auto-tuned now (MAX_DATA's step).
  std::uint64_t recv_window_bytes = 0;
  // Local streams waiting for the peer's MAX_STREAMS; packet numbers skipped.
  std::uint64_t streams_blocked_by_limit = 0;
  std::uint64_t packet_numbers_skipped = 0;
  // DPLPMTUD: the datagram size in use, probes sent and lost, black holes.
  std::uint64_t pmtu_bytes = 0;
  std::uint64_t pmtu_probes_sent = 0;
  std::uint64_t pmtu_probes_lost = 0;
  std::uint64_t pmtu_black_holes = 0;
  // Packets of stream data built below the size in use because a call was
  // running on a slow path (Ensemble::packet_bytes_limit).
  std::uint64_t small_packets_sent = 0;
  // Packets sent on the urgent lane (PacketType::data_urgent).
  std::uint64_t urgent_packets_sent = 0;
  // Drained stream buffers kept for reuse (bounded: BufferPool::kMaxBytes).
  std::uint64_t buffer_pool_bytes = 0;
  // Ensembles created so far (one per busy period; temporal sharing links them).
  std::uint64_t ensembles_started = 0;
  std::uint64_t ensembles_resumed = 0;  // of those, started from the temporal cache
  std::uint64_t streams_open = 0;
  // Over every ensemble of this connection: `ensemble` below restarts its
  // counts with each busy period, these do not.
  std::uint64_t packets_lost = 0;
  std::uint64_t loss_rounds = 0;
  std::uint64_t random_loss_rounds = 0;  // of loss_rounds: taken as random (`random_loss: veno`)
  std::uint64_t tail_probes = 0;  // PTOs answered by a probe (EnsembleConfig::tail_probes)
  std::uint64_t rtos = 0;         // retransmission timeouts: the window back to one packet
  FlowStats flows;
  // The live ensemble's stats, or the last one's when none is live.
  congestion::EnsembleStats ensemble;
};

class Connection {
 public:
  // `cache` may be null (no temporal sharing); it must outlive the connection.
  Connection(const ConnectionConfig& config, std::unique_ptr<PacketProtection> protection,
             congestion::TemporalCache* cache, Instant now);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // I/O boundary. Neither allocates per packet in steady state.
  //
  // on_datagram opens the datagram in place (the AEAD decrypts where it
  // lies): `datagram` is the driver's receive buffer, and its bytes are
  // unspecified afterwards. Nothing keeps a reference to it after the call.
  // True when the datagram was accepted: authentic, new, well-formed, and
  // applied. Only then may the caller act on it (e.g. follow the sender's
  // new address).
  bool on_datagram(std::span<std::byte> datagram, Instant now);
  // Writes the next datagram, sealed, into the front of `buffer` and says
  // how long it is; nullopt when there is nothing to send now. `buffer` must
  // hold at least max_datagram_bytes (a smaller one limits the datagram to
  // its size; below the smallest possible packet nothing is sent). A driver
  // with GSO can hand consecutive slices of one batch buffer.
  std::optional<Transmit> poll_transmit(Instant now, std::span<std::byte> buffer);
  std::optional<Instant> next_timeout() const;
  void on_timeout(Instant now);
  std::optional<ConnectionEvent> poll_event();

  // Streams. open_stream fails (nullopt) when the connection is closed.
  std::optional<StreamId> open_stream(const Destination& destination, ContentClass cls, Instant now);
  // Accepts what fits in both the stream's send buffer and the connection's
  // send budget; 0 means "wait for StreamWritable". A stream still waiting
  // for the peer's MAX_STREAMS buffers locally like any other.
  std::size_t stream_write(StreamId id, std::span<const std::byte> data, Instant now);
  // How many bytes stream_write would accept now (both budgets), so a relay
  // reads no more from its socket than the stream takes and needs no
  // buffer of its own. 0 registers for StreamWritable, as a short write does.
  std::size_t stream_writable_bytes(StreamId id);
  // stream_write without a copy, for a relay that reads its socket straight
  // into the stream's buffer: room for up to `max_bytes` (no more than
  // stream_writable_bytes, which it registers like), as two pieces (the
  // second empty unless the buffer wraps), then stream_commit_write of the
  // bytes the caller put there (0 if none). Nothing else may use the
  // connection in between.
  std::array<std::span<std::byte>, 2> stream_write_room(StreamId id, std::size_t max_bytes);
  void stream_commit_write(StreamId id, std::size_t bytes, Instant now);
  void stream_finish(StreamId id, Instant now);  // FIN after the written bytes
  // Reads in order; returns bytes read. *fin is set once the peer's FIN is read.
  std::size_t stream_read(StreamId id, std::span<std::byte> out, bool* fin, Instant now);
  // stream_read without a copy, for a relay that sends to its socket straight
  // from the stream's buffer: the in-order bytes ready now, in place (valid
  // until the next call on the connection), then stream_consume of the bytes
  // used (0 if none: *fin still reports a FIN that needs no byte).
  std::array<std::span<const std::byte>, 2> stream_peek(StreamId id);
  void stream_consume(StreamId id, std::size_t bytes, bool* fin, Instant now);
  void stream_reset(StreamId id, std::uint64_t error_code, Instant now);
  void set_stream_class(StreamId id, ContentClass cls, Instant now);
  // Scheduling policy and tickets (admin reload): applies to running streams
  // at their next packet, without back-credit.
  void set_scheduler_config(const congestion::SchedulerConfig& scheduler);
  bool stream_exists(StreamId id) const;
  // Bytes the stream holds: written and not yet acknowledged, plus received
  // and not yet read (0 for an unknown stream). A gateway closes an idle
  // stream only when nothing is in flight.
  std::uint64_t stream_buffered_bytes(StreamId id) const;
  // The class the stream is scheduled with (ours, or the latest STREAM_CLASS
  // from the peer); nullopt for an unknown stream.
  std::optional<ContentClass> stream_class(StreamId id) const;

  // Datagram flows. open_flow fails (nullopt) when the connection is closed.
  std::optional<FlowId> open_flow(const Destination& destination, ContentClass cls, Instant now);
  // Queues one datagram (copied); false when it was dropped at once (closed
  // or unknown flow, larger than max_datagram_payload()).
  bool send_datagram(FlowId flow, std::span<const std::byte> payload, Instant now);
  // FLOW_CLOSE to the peer (reliably); queued datagrams are dropped.
  void close_flow(FlowId flow, std::uint64_t error_code, Instant now);
  bool flow_exists(FlowId flow) const;
  // Its counts while it is open (nullopt: no such flow).
  std::optional<FlowCounters> flow_counters(FlowId flow) const;
  // The largest datagram payload a packet carries on this path (the base
  // datagram size, not what PMTU probing found: a probe may be undone).
  std::size_t max_datagram_payload() const;

  void close(std::uint64_t error_code, std::string reason, Instant now);
  bool is_closed() const;
  ConnectionStats stats() const;
  // The path's RTT as the handshake measured it: the initial RTT of the
  // ensembles started from now on (RFC 9002 6.2.2), if shorter than configured.
  void set_initial_rtt(Duration rtt);
  // The rate this side's ensemble may send at (bits/s; 0: none): its
  // configured ensemble.max_rate_bps and the peer's advertised receive rate.
  std::uint64_t send_rate_limit_bps() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace egw::tunnel
