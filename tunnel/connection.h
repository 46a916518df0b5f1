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
// was cut short and room came back; StreamReset when the *peer* reset a
// stream (RESET aborts both directions; the stream is gone, and the side
// that called stream_reset gets no event); StreamClosed when both
// directions finished normally; ConnectionClosed exactly once, however the
// connection ends (close(), CLOSE from the peer, a protocol error, idle
// timeout). A connection with open streams sends a PING every
// idle_timeout / 2, so only a silent peer times it out.
//
// The protocol has no handshake for transport parameters: both sides assume
// kInitialStreamCreditBytes / kInitialConnectionCreditBytes
// (tunnel/flow_control.h) until MAX_STREAM_DATA / MAX_DATA say more.
#pragma once

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
#include "tunnel/packet_protection.h"

namespace egw::tunnel {

struct ConnectionConfig {
  // Which side: the branch (client) opens even stream ids, the hub odd ones.
  bool is_client = true;
  // Largest datagram this side sends, header and tag included.
  ByteCount max_datagram_bytes = 1200;
  congestion::EnsembleConfig ensemble;  // its max_datagram_bytes is set from ours
  // Key under which this connection's ensemble state is cached (the peer).
  std::string cache_key = "peer";
  // Flow control: receive windows we advertise, and so our memory bound.
  ByteCount stream_receive_window_bytes = 1 << 20;
  ByteCount connection_receive_window_bytes = 16 << 20;
  // How much a stream may buffer for sending before stream_write pushes back.
  ByteCount stream_send_buffer_bytes = 1 << 20;
  std::size_t max_incoming_streams = 1024;
  Duration max_ack_delay = ms(25);
  std::uint32_t ack_every_packets = 2;  // ack-eliciting packets per immediate ACK
  Duration idle_timeout = ms(30'000);
};

// Events for the owner of the connection (proxy relay, simulator app).
struct StreamOpened { StreamId id; Destination destination; ContentClass content_class; };
struct StreamReadable { StreamId id; };
struct StreamWritable { StreamId id; };
struct StreamReset { StreamId id; std::uint64_t error_code; };
// Every byte we wrote and our FIN were acknowledged, and the peer's FIN was read.
struct StreamClosed { StreamId id; };
struct ConnectionClosed { std::uint64_t error_code; std::string reason; };
using ConnectionEvent =
    std::variant<StreamOpened, StreamReadable, StreamWritable, StreamReset, StreamClosed,
                 ConnectionClosed>;

// A datagram poll_transmit wrote into the caller's buffer.
struct Transmit {
  std::size_t bytes = 0;      // its size: the first `bytes` bytes of the buffer
  bool low_priority = false;  // DSCP LE (RFC 8622): unvalidated resumed window
};

struct ConnectionStats {
  std::uint64_t datagrams_received = 0;
  std::uint64_t datagrams_dropped = 0;  // malformed, forged, duplicate
  // The three reasons, counted apart (they add up to datagrams_dropped).
  std::uint64_t datagrams_forged = 0;     // failed to open (or not a data packet)
  std::uint64_t datagrams_duplicate = 0;  // packet number already received
  std::uint64_t datagrams_malformed = 0;  // authentic but its frames do not parse
  std::uint64_t datagrams_sent = 0;
  std::uint64_t stream_bytes_retransmitted = 0;
  // Drained stream buffers kept for reuse (bounded: BufferPool::kMaxBytes).
  std::uint64_t buffer_pool_bytes = 0;
  // Ensembles created so far (one per busy period; temporal sharing links them).
  std::uint64_t ensembles_started = 0;
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
  void on_datagram(std::span<std::byte> datagram, Instant now);
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
  // Accepts what fits in the stream's send buffer; 0 means "wait for StreamWritable".
  std::size_t stream_write(StreamId id, std::span<const std::byte> data, Instant now);
  void stream_finish(StreamId id, Instant now);  // FIN after the written bytes
  // Reads in order; returns bytes read. *fin is set once the peer's FIN is read.
  std::size_t stream_read(StreamId id, std::span<std::byte> out, bool* fin, Instant now);
  void stream_reset(StreamId id, std::uint64_t error_code, Instant now);
  void set_stream_class(StreamId id, ContentClass cls, Instant now);
  // Scheduling policy and tickets (admin reload): applies to running streams
  // at their next packet, without back-credit.
  void set_scheduler_config(const congestion::SchedulerConfig& scheduler);
  bool stream_exists(StreamId id) const;
  // The class the stream is scheduled with (ours, or the latest STREAM_CLASS
  // from the peer); nullopt for an unknown stream.
  std::optional<ContentClass> stream_class(StreamId id) const;

  void close(std::uint64_t error_code, std::string reason, Instant now);
  bool is_closed() const;
  ConnectionStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace egw::tunnel
