// Connection: public API, receive path and stream bookkeeping. The send path,
// loss handling and timers are in connection_send.cc.
#include "tunnel/connection.h"

#include <algorithm>
#include <array>
#include <utility>

#include "tunnel/connection_impl.h"
#include "tunnel/frame_codec.h"
#include "tunnel/packet_header.h"

namespace egw::tunnel {

namespace {
congestion::EnsembleConfig ensemble_config(const ConnectionConfig& config) {
  congestion::EnsembleConfig c = config.ensemble;
  c.max_datagram_bytes = config.max_datagram_bytes;
  c.max_ack_delay = ms(config.peer.max_ack_delay_ms);  // the PTO allows for the peer's delay
  c.max_rate_bps = send_rate_limit_bps(config.ensemble.max_rate_bps, config.peer.max_receive_rate_bps);
  return c;
}

// The configuration as the connection runs it: what the peer's transport
// parameters limit (datagram size, idle timeout) applied.
ConnectionConfig effective_config(const ConnectionConfig& cfg) {
  ConnectionConfig c = cfg;
  c.max_datagram_bytes = std::min<ByteCount>(c.max_datagram_bytes, cfg.peer.max_datagram_bytes);
  c.idle_timeout = std::min(c.idle_timeout, ms(cfg.peer.idle_timeout_ms));
  c.ensemble = ensemble_config(c);
  return c;
}
}  // namespace

std::uint64_t send_rate_limit_bps(std::uint64_t own_up_bps, std::uint64_t peer_down_bps) {
  if (own_up_bps == 0) return peer_down_bps;
  if (peer_down_bps == 0) return own_up_bps;
  return std::min(own_up_bps, peer_down_bps);
}

TransportParameters local_transport_parameters(const ConnectionConfig& config) {
  TransportParameters p;
  // Version 2 only with a rate to tell or to hear (a configured max_rate):
  // without one, exactly what older peers speak.
  if (config.max_receive_rate_bps != 0 || config.ensemble.max_rate_bps != 0) {
    p.version = TransportParameters::kVersion2;
    p.max_receive_rate_bps = config.max_receive_rate_bps;
  }
  // What the receiver enforces: at least the protocol's initial credits.
  p.initial_max_stream_data =
      std::max<std::uint64_t>(config.stream_receive_window_bytes, kInitialStreamCreditBytes);
  p.initial_max_data = std::max<std::uint64_t>(config.connection_receive_window_bytes,
                                               kInitialConnectionCreditBytes);
  p.initial_max_streams = static_cast<std::uint32_t>(
      std::min<std::size_t>(config.max_incoming_streams, 0xffff'ffffu));
  p.max_datagram_bytes = static_cast<std::uint16_t>(
      std::clamp<ByteCount>(config.max_receive_datagram_bytes, 1200, 0xffff));
  p.idle_timeout_ms = static_cast<std::uint32_t>(
      std::clamp<std::int64_t>(config.idle_timeout.count() / 1000, 1, 0xffff'ffff));
  p.max_ack_delay_ms = static_cast<std::uint16_t>(
      std::clamp<std::int64_t>(config.max_ack_delay.count() / 1000, 0, 16'383));
  return p;
}

Connection::Impl::Impl(const ConnectionConfig& cfg, std::unique_ptr<PacketProtection> prot,
                       congestion::TemporalCache* temporal_cache, Instant now)
    : config(effective_config(cfg)),
      protection(std::move(prot)),
      cache(temporal_cache),
      ack_tracker(AckTrackerConfig{.max_ack_delay = cfg.max_ack_delay,
                                   .ack_every_packets = cfg.ack_every_packets,
                                   .decimation = cfg.ack_decimation,
                                   .decimation_max_packets = cfg.ack_decimation_max_packets}),
      skip_rng{cfg.packet_number_skip_seed | 1},
      next_local_id(cfg.is_client ? 0 : 1),
      local_max_streams(cfg.max_incoming_streams),
      peer_max_streams(cfg.peer.initial_max_streams),
      send_credit(cfg.peer.initial_max_data),
      recv_credit(cfg.connection_receive_window_bytes, kInitialConnectionCreditBytes,
                  cfg.connection_receive_window_max_bytes),
      epoch(now),
      last_activity(now) {
  next_local_flow = cfg.is_client ? 0 : 1;
  // A peer without a handshake assumes the initial credit until told otherwise.
  max_data_pending = recv_credit.maximum() > kInitialConnectionCreditBytes;
  pmtu.base = pmtu.current = pmtu.low = config.max_datagram_bytes;
  const ByteCount ceiling =
      std::min<ByteCount>(cfg.pmtu_probe_ceiling_bytes, cfg.peer.max_datagram_bytes);
  pmtu.enabled = ceiling > pmtu.base;
  pmtu.high = pmtu.enabled ? ceiling + 1 : pmtu.base + 1;
  pmtu.probe_size = pmtu.high - 1;  // the ceiling first: most paths carry it
  next_skip = cfg.packet_number_skip_seed == 0 ? ~PacketNumber{0} : 64 + skip_rng.next() % 192;
}

// ---------------------------------------------------------------- receive path

// Per datagram, in this order (docs/protocol.md section 6), and nothing is
// applied before the last step: size and layout; the anti-replay pre-check
// on the header's number (cheap, before any cryptography); open
// (authenticate and decrypt in place); the replay check again; parse every
// frame; apply.
void Connection::Impl::on_datagram(std::span<std::byte> datagram, Instant now) {
  if (closed) return;
  ++stats.datagrams_received;
  auto drop = [&](std::uint64_t& reason) {
    ++stats.datagrams_dropped;
    ++reason;
  };
  if (datagram.size() > config.max_receive_datagram_bytes) {
    ++stats.datagrams_oversized;
    return drop(stats.datagrams_malformed);
  }
  const auto parsed = parse_packet(datagram, protection->overhead());
  if (!parsed) return drop(stats.datagrams_forged);
  if (!ack_tracker.is_new(parsed->header.packet_number)) return drop(stats.datagrams_duplicate);
  auto opened = open_packet(*protection, datagram);
  if (!opened) return drop(stats.datagrams_forged);
  const PacketNumber number = opened->header.packet_number;
  if (!ack_tracker.is_new(number)) return drop(stats.datagrams_duplicate);
  // Two passes over the payload: check all of it, then act (a receiver never
  // acts on half a packet). Both parse into one reused Frame: no allocation.
  // Not acknowledged either: the packet never happened as far as we know.
  const auto check = check_frames(opened->payload);
  if (!check) return drop(stats.datagrams_malformed);
  if (check->ack_frames > 1) {
    // One ACK frame per packet: more would only multiply the work per packet.
    ++stats.datagrams_extra_ack;
    return drop(stats.datagrams_malformed);
  }
  ack_tracker.on_packet_received(number, check->ack_eliciting, now);
  last_activity = now;
  eliciting_sent_since_receive = false;

  FrameParser parser(opened->payload);
  Frame frame;
  while (parser.next(frame)) {
    apply_frame(frame, now);
    if (closed) return;
  }
  maybe_retire_ensemble(now);
}

void Connection::Impl::apply_frame(const Frame& frame, Instant now) {
  std::visit(
      [&](const auto& f) {
        using F = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<F, AckFrame>) {
          on_ack_frame(f, now);
        } else if constexpr (std::is_same_v<F, StreamOpenFrame>) {
          on_stream_open_frame(f, now);
        } else if constexpr (std::is_same_v<F, StreamFrame>) {
          on_stream_frame(f, now);
        } else if constexpr (std::is_same_v<F, ResetStreamFrame>) {
          on_reset_frame(f, now);
        } else if constexpr (std::is_same_v<F, MaxDataFrame>) {
          send_credit.on_max_data(f.maximum);
        } else if constexpr (std::is_same_v<F, MaxStreamDataFrame>) {
          if (!is_peer_stream(f.stream_id) && f.stream_id >= next_local_id) {
            close_with_error(kErrorProtocolViolation, "MAX_STREAM_DATA for an unopened stream");
          } else if (Stream* s = find(f.stream_id)) {
            s->send.on_max_stream_data(f.maximum);
            update_backlog(*s, now);
            // More credit may mean a larger send buffer (SendStream's capacity).
            if (s->send.take_writable_signal()) events.push_back(StreamWritable{s->id});
          }
        } else if constexpr (std::is_same_v<F, StreamClassFrame>) {
          // The peer learned the class (e.g. from a response's first bytes):
          // our sending side schedules this stream the same way.
          if (Stream* s = find(f.stream_id)) {
            s->content_class = f.content_class;
            if (ensemble) ensemble->set_class(s->id, f.content_class);
          }
        } else if constexpr (std::is_same_v<F, MaxStreamsFrame>) {
          on_max_streams_frame(f.maximum, now);
        } else if constexpr (std::is_same_v<F, FlowOpenFrame>) {
          on_flow_open_frame(f, now);
        } else if constexpr (std::is_same_v<F, FlowCloseFrame>) {
          on_flow_close_frame(f, now);
        } else if constexpr (std::is_same_v<F, DatagramFrame>) {
          on_datagram_frame(f);
        } else if constexpr (std::is_same_v<F, CloseFrame>) {
          closed = true;
          events.push_back(ConnectionClosed{f.error_code, f.reason});
        }
        // PADDING and PING only elicit an ACK.
      },
      frame);
}

void Connection::Impl::on_ack_frame(const AckFrame& f, Instant now) {
  if (f.ranges.empty()) return;
  if (f.ranges.front().largest >= next_packet_number) {
    close_with_error(kErrorProtocolViolation, "ACK of a packet never sent");
    return;
  }
  if (pmtu.probe) {
    for (const AckRange& r : f.ranges) {
      if (r.smallest <= *pmtu.probe && *pmtu.probe <= r.largest) {
        on_pmtu_probe_result(true, now);
        break;
      }
    }
  }
  // RFC 9000 section 21.4: only a peer acknowledging what it never
  // received names a number we skipped.
  if (acks_skipped_number(f)) {
    close_with_error(kErrorProtocolViolation, "ACK of a skipped packet number");
    return;
  }
  if (f.timestamp) ++stats.ack_timestamps_received;
  // Acks of a retired ensemble's packets: nothing is waiting for them.
  if (!ensemble) return;
  std::array<congestion::AckedRange, AckRanges::kCapacity> ranges;
  for (std::size_t i = 0; i < f.ranges.size(); ++i) {
    ranges[i] = {f.ranges[i].smallest, f.ranges[i].largest};
  }
  // RFC 9002 section 5.3: never more than the peer's max_ack_delay, so a
  // peer cannot drag the RTT estimate below the path's.
  const Duration ack_delay = std::min(f.ack_delay, ms(config.peer.max_ack_delay_ms));
  std::optional<Duration> peer_clock;
  if (f.timestamp) peer_clock = unwrap_ack_timestamp(peer_ack_clock, *f.timestamp);
  const congestion::AckOutcome& outcome =
      ensemble->on_ack(std::span(ranges).first(f.ranges.size()), ack_delay, now, peer_clock);
  // The path's RTT for our own ACK timer: the newest packet this ACK names,
  // if newly acknowledged (raw, as min RTT is: the minimum is what counts).
  if (!outcome.acked.empty() && outcome.acked.back().number == f.ranges.front().largest) {
    ack_tracker.on_rtt_sample(now - outcome.acked.back().sent_time);
  }
  acked_streams.clear();
  for (const congestion::SentPacket& p : outcome.acked) on_packet_acked(p.number);
  for (const congestion::SentPacket& p : outcome.lost) on_packet_lost(p.number, now);
  for (const AckRange& r : f.ranges) on_late_ack(r.smallest, r.largest);
  trim_history(now);
  // Streams whose data was acknowledged may have room again, or be done.
  std::sort(acked_streams.begin(), acked_streams.end());
  acked_streams.erase(std::unique(acked_streams.begin(), acked_streams.end()),
                      acked_streams.end());
  for (StreamId id : acked_streams) {
    Stream* s = find(id);
    if (!s) continue;
    if (!sync_accounting(*s)) return;
    if (s->send.take_writable_signal()) events.push_back(StreamWritable{id});
    update_backlog(*s, now);  // an ACK may have cancelled a retransmission
    check_stream_done(id, now);
  }
  release_write_blocked();
}

bool Connection::Impl::acks_skipped_number(const AckFrame& f) const {
  const std::size_t n = std::min(skipped_count, kSkippedPacketNumbers);
  for (std::size_t i = 0; i < n; ++i) {
    for (const AckRange& r : f.ranges) {
      if (r.smallest <= skipped[i] && skipped[i] <= r.largest) return true;
    }
  }
  return false;
}

// Stream-level memory summed over the connection, so that neither the peer
// (reassembly holes) nor a peer withholding credit (send buffers) can grow
// it with the number of streams.
bool Connection::Impl::sync_accounting(Stream& s) {
  const std::size_t intervals = s.recv.interval_count();
  recv_intervals = recv_intervals - s.counted_recv_intervals + intervals;
  s.counted_recv_intervals = intervals;
  const std::uint64_t buffered = s.send.buffered_bytes();
  send_buffered = send_buffered - s.counted_send_bytes + buffered;
  s.counted_send_bytes = buffered;
  if (recv_intervals > kMaxConnectionRecvIntervals) {
    close_with_error(kErrorExcessiveLoad, "reassembly too fragmented over the connection");
    return false;
  }
  if (s.send.too_fragmented()) {
    close_with_error(kErrorExcessiveLoad, "stream acknowledgements too fragmented");
    return false;
  }
  return true;
}

void Connection::Impl::forget_accounting(Stream& s) {
  recv_intervals -= s.counted_recv_intervals;
  send_buffered -= s.counted_send_bytes;
  s.counted_recv_intervals = 0;
  s.counted_send_bytes = 0;
}

// Room came back in the connection's send budget: StreamWritable to the
// streams it cut short, oldest first, one per kWritableQuantumBytes of room
// (the rest wait for the next ACK), so no stream starves the others.
void Connection::Impl::release_write_blocked() {
  if (closed) return;
  std::uint64_t room = config.connection_send_buffer_bytes > send_buffered
                           ? config.connection_send_buffer_bytes - send_buffered
                           : 0;
  while (!write_blocked.empty() && room > 0) {
    const StreamId id = write_blocked.front();
    write_blocked.pop_front();
    Stream* s = find(id);
    if (!s || !s->connection_write_blocked) continue;
    s->connection_write_blocked = false;
    events.push_back(StreamWritable{id});
    room -= std::min<std::uint64_t>(room, kWritableQuantumBytes);
  }
}

Stream* Connection::Impl::stream_for_peer_frame(StreamId id, Instant now, bool create) {
  if (Stream* s = find(id)) return s;
  if (!is_peer_stream(id)) {
    if (id >= next_local_id) close_with_error(kErrorProtocolViolation, "frame for an unopened stream");
    return nullptr;  // one of ours, already closed
  }
  if (peer_ids_seen.contains(id / 2)) return nullptr;  // closed or reset
  if (beyond_stream_limit(id) || !create) return nullptr;
  if (!note_peer_id(id)) return nullptr;
  if (peer_stream_count >= config.max_incoming_streams) {
    reset_locally(id, kErrorStreamRefused, 0, 0, 0, false);
    return nullptr;
  }
  return &create_stream(id, false, now);
}

void Connection::Impl::on_stream_open_frame(const StreamOpenFrame& f, Instant now) {
  if (!is_peer_stream(f.stream_id)) {
    close_with_error(kErrorProtocolViolation, "STREAM_OPEN with our stream id parity");
    return;
  }
  Stream* s = stream_for_peer_frame(f.stream_id, now);
  if (!s || s->announced) return;  // closed, refused, or a retransmission
  s->announced = true;
  s->destination = f.destination;
  s->content_class = f.class_hint;
  if (ensemble) ensemble->set_class(s->id, f.class_hint);
  events.push_back(StreamOpened{s->id, f.destination, f.class_hint});
  notify_readable(*s);  // data may have come before the STREAM_OPEN
}

void Connection::Impl::on_stream_frame(const StreamFrame& f, Instant now) {
  // An empty STREAM frame without FIN for a stream we have not seen carries
  // nothing to keep: it creates no state (it must not hold a stream slot).
  const bool creates = !f.data.empty() || f.fin;
  Stream* s = stream_for_peer_frame(f.stream_id, now, creates);
  if (!s) {
    if (closed) return;
    const std::uint64_t end = f.offset + f.data.size();
    if (auto it = reset_final_sizes.find(f.stream_id); it != reset_final_sizes.end()) {
      // Data after the peer's own RESET must agree with its final size.
      if (end > it->second || (f.fin && end != it->second)) {
        close_with_error(kErrorFinalSize, "stream data beyond the final size of its RESET");
      }
      return;
    }
    account_tombstone(f.stream_id, end);
    return;
  }
  const RecvStream::FrameResult result = s->recv.on_stream_frame(f.offset, f.data, f.fin);
  switch (result.status) {
    case RecvStream::Status::ok: break;
    case RecvStream::Status::flow_control_error:
      close_with_error(kErrorFlowControl, "stream data beyond MAX_STREAM_DATA");
      return;
    case RecvStream::Status::final_size_error:
      close_with_error(kErrorFinalSize, "stream data beyond its final size");
      return;
    case RecvStream::Status::too_fragmented:
      close_with_error(kErrorExcessiveLoad, "stream reassembly too fragmented");
      return;
  }
  if (!sync_accounting(*s)) return;
  if (!recv_credit.on_received(result.new_bytes)) {
    close_with_error(kErrorFlowControl, "stream data beyond MAX_DATA");
    return;
  }
  notify_readable(*s);
}

// Bytes for a stream we reset still use connection credit: count them as
// received and at once as consumed, so the credit comes back.
void Connection::Impl::account_tombstone(StreamId id, std::uint64_t end) {
  auto it = tombstones.find(id);
  if (it == tombstones.end() || end <= it->second.highest_received) return;
  const std::uint64_t delta = end - it->second.highest_received;
  it->second.highest_received = end;
  if (!recv_credit.on_received(delta)) {
    close_with_error(kErrorFlowControl, "data on a reset stream beyond MAX_DATA");
    return;
  }
  recv_credit.on_consumed(delta);
  return_credit();
}

// Credit consumed without a read (reset streams, tombstones): advertise it.
void Connection::Impl::return_credit() {
  if (recv_credit.take_update()) max_data_pending = true;
}

void Connection::Impl::on_reset_frame(const ResetStreamFrame& f, Instant now) {
  if (auto it = tombstones.find(f.stream_id); it != tombstones.end()) {
    // The answer to (or a crossing of) our own RESET: settle the credit.
    if (f.final_size < it->second.highest_received) {
      close_with_error(kErrorFinalSize, "RESET final size below data received");
      return;
    }
    account_tombstone(f.stream_id, f.final_size);
    if (closed) return;
    tombstones.erase(f.stream_id);
    if (is_peer_stream(f.stream_id)) on_peer_stream_ended();
    return;
  }
  if (auto it = reset_final_sizes.find(f.stream_id); it != reset_final_sizes.end()) {
    if (it->second != f.final_size) {
      close_with_error(kErrorFinalSize, "RESET repeated with another final size");
    }
    return;
  }
  Stream* s = find(f.stream_id);
  if (!s) {
    const bool unseen_peer_stream =
        is_peer_stream(f.stream_id) && !peer_ids_seen.contains(f.stream_id / 2);
    if (!unseen_peer_stream) {
      if (!is_peer_stream(f.stream_id) && f.stream_id >= next_local_id) {
        close_with_error(kErrorProtocolViolation, "RESET for an unopened stream");
      }
      return;  // already closed
    }
    if (beyond_stream_limit(f.stream_id)) return;
    // Opened and reset before we heard of it: settle credit, answer, forget.
    if (f.final_size > std::max<std::uint64_t>(config.stream_receive_window_bytes,
                                               kInitialStreamCreditBytes)) {
      close_with_error(kErrorFlowControl, "RESET final size beyond MAX_STREAM_DATA");
      return;
    }
    if (!note_peer_id(f.stream_id)) return;
    peer_streams_used = std::max<std::uint64_t>(peer_streams_used, f.stream_id / 2 + 1);
    if (!recv_credit.on_received(f.final_size)) {
      close_with_error(kErrorFlowControl, "RESET final size beyond MAX_DATA");
      return;
    }
    recv_credit.on_consumed(f.final_size);
    return_credit();
    remember_final_size(f.stream_id, f.final_size);
    if (!queue_reset({f.stream_id, f.error_code, 0})) return;
    ensure_ensemble(now);
    on_peer_stream_ended();
    return;
  }
  if (f.final_size > s->recv.max_stream_data()) {
    close_with_error(kErrorFlowControl, "RESET final size beyond MAX_STREAM_DATA");
    return;
  }
  if (f.final_size < s->recv.highest_received() ||
      (s->recv.final_size() && *s->recv.final_size() != f.final_size)) {
    close_with_error(kErrorFinalSize, "RESET final size contradicts received data");
    return;
  }
  if (!recv_credit.on_received(f.final_size - s->recv.highest_received())) {
    close_with_error(kErrorFlowControl, "RESET final size beyond MAX_DATA");
    return;
  }
  // Nothing more will be read: all of it is consumed as far as credit goes.
  recv_credit.on_consumed(f.final_size - s->recv.read_offset());
  return_credit();
  if (!s->local) remember_final_size(f.stream_id, f.final_size);
  // RESET aborts both directions: answer with our final size so the peer
  // can settle its credit too.
  if (!queue_reset({f.stream_id, f.error_code, s->send.sent_end()})) return;
  const bool announced = s->announced || s->local;
  const StreamId id = s->id;
  remove_stream(id, now);
  if (announced) events.push_back(StreamReset{id, f.error_code});
}

// Both caps below are hit only by a peer that opens (or resets) streams
// faster than it lets us answer, or with ids chosen to fragment the record.
bool Connection::Impl::note_peer_id(StreamId id) {
  peer_ids_seen.insert(id / 2, id / 2 + 1);
  if (peer_ids_seen.interval_count() <= kMaxPeerIdIntervals) return true;
  close_with_error(kErrorExcessiveLoad, "stream ids too sparse");
  return false;
}

void Connection::Impl::remember_final_size(StreamId id, std::uint64_t final_size) {
  if (reset_final_sizes.size() >= kMaxResetFinalSizes) {
    reset_final_sizes.erase(reset_final_sizes.begin());  // the oldest id
  }
  reset_final_sizes[id] = final_size;
}

bool Connection::Impl::beyond_stream_limit(StreamId id) {
  if (id / 2 < local_max_streams) return false;
  close_with_error(kErrorStreamLimit, "stream id beyond MAX_STREAMS");
  return true;
}

void Connection::Impl::on_peer_stream_ended() {
  ++peer_streams_ended;
  maybe_raise_max_streams();
}

// The limit follows the streams that ended (cumulative, RFC 9000 4.6); it
// is advertised once the peer has used half of its room, so a connection
// with few streams never sends MAX_STREAMS.
void Connection::Impl::maybe_raise_max_streams() {
  const std::uint64_t target = peer_streams_ended + config.max_incoming_streams;
  if (target <= local_max_streams) return;
  const std::uint64_t room =
      local_max_streams > peer_streams_used ? local_max_streams - peer_streams_used : 0;
  if (room > config.max_incoming_streams / 2) return;
  local_max_streams = target;
  max_streams_pending = true;
}

void Connection::Impl::on_max_streams_frame(std::uint64_t maximum, Instant now) {
  if (maximum <= peer_max_streams) return;
  peer_max_streams = maximum;
  while (!blocked_opens.empty() && blocked_opens.front() / 2 < peer_max_streams) {
    const StreamId id = blocked_opens.front();
    blocked_opens.pop_front();
    if (Stream* s = find(id)) {
      s->open_blocked = false;
      s->open_pending = true;
      mark_control(*s);
      update_backlog(*s, now);
    } else if (auto it = deferred_resets.find(id); it != deferred_resets.end()) {
      // Reset before it was ever announced: the peer still counts the id.
      const std::uint64_t code = it->second;
      deferred_resets.erase(it);
      if (!queue_reset({id, code, 0})) return;
      ensure_ensemble(now);
    }
  }
}

bool Connection::Impl::queue_reset(const ResetStreamFrame& reset) {
  if (pending_resets.size() >= kMaxPendingResets) {
    close_with_error(kErrorExcessiveLoad, "too many streams to reset");
    return false;
  }
  pending_resets.push_back(reset);
  return true;
}

void Connection::Impl::notify_readable(Stream& s) {
  if ((s.announced || s.local) && !s.readable_notified && s.recv.readable()) {
    s.readable_notified = true;
    events.push_back(StreamReadable{s.id});
  }
}

// ------------------------------------------------------------ stream helpers

Stream* Connection::Impl::find(StreamId id) {
  auto it = streams.find(id);
  return it == streams.end() ? nullptr : &it->second;
}

Stream& Connection::Impl::create_stream(StreamId id, bool local, Instant now) {
  ensure_ensemble(now);
  Stream& s = streams.try_emplace(id, id, local, config, &buffer_pool).first->second;
  if (!local) {
    ++peer_stream_count;
    peer_streams_used = std::max<std::uint64_t>(peer_streams_used, id / 2 + 1);
    maybe_raise_max_streams();
  }
  // Tell the peer our real window if it is larger than the one it assumes.
  // Not urgent (see credit_pending): the peer has the initial credit for the
  // first round trip, and a new stream's announcement past a full window
  // would add a packet to the queue exactly when a stream joins.
  if (s.recv.max_stream_data() > kInitialStreamCreditBytes) {
    s.credit_pending = true;
    mark_control(s);
  }
  ensemble->add_member(id, s.content_class, now);
  count_busy_period();
  return s;
}

void Connection::Impl::remove_stream(StreamId id, Instant now) {
  auto it = streams.find(id);
  if (it == streams.end()) return;
  forget_accounting(it->second);
  // A peer stream we reset ends when its tombstone settles (on_reset_frame).
  if (!it->second.local) {
    --peer_stream_count;
    if (!tombstones.contains(id)) on_peer_stream_ended();
  }
  if (it->second.backlogged) --backlogged_count;  // the ensemble forgets the member
  streams.erase(it);
  control_streams.erase(id);
  retransmit_streams.erase(id);
  if (ensemble) ensemble->remove_member(id, now);
  maybe_retire_ensemble(now);
}

void Connection::Impl::reset_locally(StreamId id, std::uint64_t error_code,
                                     std::uint64_t sent_end, std::uint64_t highest_received,
                                     std::uint64_t read_offset, bool final_size_known) {
  if (!queue_reset({id, error_code, sent_end})) return;
  // What was received but will never be read is consumed as far as credit goes.
  recv_credit.on_consumed(highest_received - read_offset);
  return_credit();
  // A known final size (the peer's FIN came) settles now: no tombstone.
  if (final_size_known) return;
  if (tombstones.size() >= kMaxResetTombstones) {
    close_with_error(kErrorExcessiveLoad, "too many resets unanswered");
    return;
  }
  tombstones[id] = ResetTombstone{highest_received};
}

void Connection::Impl::check_stream_done(StreamId id, Instant now) {
  Stream* s = find(id);
  if (!s || !s->send.all_acked() || !s->recv.fin_read()) return;
  remove_stream(id, now);
  events.push_back(StreamClosed{id});
}

void Connection::Impl::after_read(Stream& s, std::size_t bytes, Instant now) {
  sync_accounting(s);  // reading only shrinks the totals: cannot close
  recv_credit.on_consumed(bytes);
  // The RTT only when an update is due: stats() walks the members (coupling
  // none), which must not happen per read.
  std::optional<Duration> rtt;
  const auto autotune = [&] { return rtt ? *rtt : *(rtt = autotune_rtt()); };
  if (s.recv.credit_update_due() && s.recv.take_credit_update(now, autotune())) mark_credit(s);
  if (recv_credit.update_due() && recv_credit.take_update(now, autotune())) max_data_pending = true;
}

// The RTT that receive windows auto-tune against: the ensemble's smoothed
// RTT (its RTT samples come from our own ack-eliciting packets, the credit
// updates among them); without an ensemble or before the first sample (a
// min RTT of 0: srtt is then the 333 ms guess, under which a burst of reads
// on a fast path would double the window for nothing), none: no growth.
Duration Connection::Impl::autotune_rtt() const {
  if (!ensemble) return Duration{0};
  const congestion::EnsembleStats s = ensemble->stats();
  return s.min_rtt > Duration{0} ? s.srtt : Duration{0};
}

void Connection::Impl::mark_control(Stream& s) { control_streams.insert(s.id); }

void Connection::Impl::mark_credit(Stream& s) {
  s.credit_pending = true;
  stream_credit_urgent = true;
  mark_control(s);
}

void Connection::Impl::update_backlog(Stream& s, Instant now) {
  // The stream's own credit only: connection credit is checked once per
  // packet before asking the ensemble for new data.
  constexpr std::uint64_t kIgnoreConnectionCredit = std::uint64_t{1} << 62;
  const bool backlogged = !s.open_blocked && (s.send.has_retransmission() ||
                                              s.send.has_new_data(kIgnoreConnectionCredit));
  if (backlogged == s.backlogged) return;
  // Data waiting for the peer's MAX_STREAM_DATA (QUIC's STREAM_DATA_BLOCKED):
  // the receive window, not the path, holds this stream back.
  if (!backlogged && !s.open_blocked && s.send.write_end() > s.send.sent_end() &&
      s.send.peer_credit() <= s.send.sent_end()) {
    ++stats.stream_credit_blocked;
  }
  s.backlogged = backlogged;
  if (backlogged) {
    ++backlogged_count;
  } else {
    --backlogged_count;
  }
  if (ensemble) ensemble->set_backlogged(s.id, backlogged, now);
}

// Credit the peer may be waiting for (it read half a window, or a loss took
// the update): it goes past the window and the pacer (poll_transmit).
bool Connection::Impl::credit_pending() const {
  return max_data_pending || max_streams_pending || stream_credit_urgent;
}

bool Connection::Impl::control_pending() const {
  return max_data_pending || max_streams_pending || ping_pending || !pending_resets.empty() ||
         !control_streams.empty() || flow_control_pending();
}

void Connection::Impl::close_with_error(std::uint64_t code, std::string reason) {
  if (closed) return;
  closed = true;
  if (reason.size() > kMaxCloseReasonBytes) reason.resize(kMaxCloseReasonBytes);
  close_to_send = CloseFrame{code, reason};
  events.push_back(ConnectionClosed{code, std::move(reason)});
}

void Connection::Impl::ensure_ensemble(Instant now) {
  ensemble_retire_at.reset();  // a stream or flow is coming: the busy period goes on
  if (ensemble) return;
  std::optional<congestion::PathState> resume;
  if (cache) resume = cache->lookup(config.cache_key, now);
  ensemble = std::make_unique<congestion::Ensemble>(config.ensemble, now, resume);
  ensemble_resumed = resume.has_value();
  ensemble_carried_streams = false;
  for (const auto& [id, s] : streams) {
    ensemble->add_member(id, s.content_class, now);
    if (s.backlogged) ensemble->set_backlogged(id, true, now);
  }
  for (const auto& [id, f] : flows) {
    ensemble->add_member(flow_member(id), f.content_class, now);
    if (f.backlogged) ensemble->set_backlogged(flow_member(id), true, now);
  }
  if (!streams.empty() || !flows.empty()) count_busy_period();
}

// An ensemble started only for control frames (a keep-alive PING, a RESET,
// MAX_STREAMS) is no busy period: it is not counted, and what it saw is not
// taught to the cache (a PING says nothing about the window the path takes).
void Connection::Impl::count_busy_period() {
  if (ensemble_carried_streams) return;
  ensemble_carried_streams = true;
  ++stats.ensembles_started;
  if (ensemble_resumed) ++stats.ensembles_resumed;
}

// E-TCP temporal sharing: when the last stream has gone and nothing is in
// flight, the ensemble's state goes to the cache and the next busy period
// starts a new ensemble from it. Not at once, though: an ensemble that
// carried streams lingers for ensemble_linger() (about two RTTs, never past
// the RTO after which TCP restarts its window anyway, RFC 5681 4.1), so the
// requests a page's HTML triggers, which reach the hub about when the HTML's
// last ACK does, join the same ensemble with its window and its law's rate
// estimate instead of a slow start from the cache's window (issue 21 item 4:
// the model law restarted its startup at ~2.8 IW / RTT and the
// render-blocking CSS+JS took 1.53x of their bound in the WAN lab;
// ScenarioModernPage).
void Connection::Impl::maybe_retire_ensemble(Instant now) {
  // A pending MAX_DATA does not keep it alive: credit only matters to
  // streams, and it goes out with the next busy period's first packet.
  if (!ensemble || !streams.empty() || !flows.empty() || !pending_resets.empty() ||
      !pending_flow_closes.empty() || ping_pending || max_streams_pending) {
    ensemble_retire_at.reset();
    return;
  }
  const congestion::EnsembleStats es = ensemble->stats();
  if (es.bytes_in_flight > 0) return;
  if (ensemble_carried_streams) {
    if (!ensemble_retire_at) ensemble_retire_at = now + ensemble_linger(es);
    if (now < *ensemble_retire_at) return;
  }
  ensemble_retire_at.reset();
  if (cache && ensemble_carried_streams) cache->learn(config.cache_key, ensemble->observe(now), now);
  last_ensemble_stats = es;
  retired_packets_lost += es.packets_lost;
  retired_loss_rounds += es.loss_rounds;
  retired_random_loss_rounds += es.random_loss_rounds;
  retired_tail_probes += es.tail_probes;
  retired_rtos += es.rto_count;
  ensemble.reset();
  history.reset(next_packet_number);  // only packets the retired ensemble no longer tracks
  pacing_release.reset();
}

// Two min RTTs (a page's next requests come about one round trip after its
// root's last packet), at most the RTO (past it the window would restart
// anyway), at least 200 ms (the RTO's floor). Not the RTO itself: after a
// loss the RTT variance can stretch it past 1 s, and a later page would then
// find an ensemble whose inflated RTT delays its probes (ScenarioHtmlStall).
Duration Connection::Impl::ensemble_linger(const congestion::EnsembleStats& es) const {
  if (es.srtt <= Duration{0}) return Duration{0};  // nothing measured: nothing worth keeping
  return std::max(std::min(2 * es.min_rtt, es.srtt + 4 * es.rttvar), Duration{ms(200)});
}

// ---------------------------------------------------------------- public API

Connection::Connection(const ConnectionConfig& config,
                       std::unique_ptr<PacketProtection> protection,
                       congestion::TemporalCache* cache, Instant now)
    : impl_(std::make_unique<Impl>(config, std::move(protection), cache, now)) {}

Connection::~Connection() = default;

bool Connection::on_datagram(std::span<std::byte> datagram, Instant now) {
  const bool was_closed = impl_->closed;
  const std::uint64_t dropped = impl_->stats.datagrams_dropped;
  impl_->on_datagram(datagram, now);
  return !was_closed && impl_->stats.datagrams_dropped == dropped;
}

std::optional<Transmit> Connection::poll_transmit(Instant now, std::span<std::byte> buffer) {
  return impl_->poll_transmit(now, buffer);
}

std::optional<Instant> Connection::next_timeout() const { return impl_->next_timeout(); }

void Connection::on_timeout(Instant now) { impl_->on_timeout(now); }

std::optional<ConnectionEvent> Connection::poll_event() {
  if (impl_->events.empty()) return std::nullopt;
  ConnectionEvent e = std::move(impl_->events.front());
  impl_->events.pop_front();
  return e;
}

std::optional<StreamId> Connection::open_stream(const Destination& destination, ContentClass cls,
                                                Instant now) {
  Impl& m = *impl_;
  if (m.closed) return std::nullopt;
  const StreamId id = m.next_local_id;
  m.next_local_id += 2;
  Stream& s = m.create_stream(id, true, now);
  s.destination = destination;
  s.content_class = cls;
  m.ensemble->set_class(id, cls);
  if (id / 2 >= m.peer_max_streams) {
    // Beyond the peer's MAX_STREAMS: usable here, announced when it allows.
    s.open_blocked = true;
    m.blocked_opens.push_back(id);
    m.control_streams.erase(id);
    return id;
  }
  s.open_pending = true;
  m.mark_control(s);
  return id;
}

std::size_t Connection::stream_write(StreamId id, std::span<const std::byte> data, Instant now) {
  if (impl_->closed) return 0;
  Impl& m = *impl_;
  Stream* s = m.find(id);
  if (!s) return 0;
  // Both budgets: the stream's (SendStream) and the connection's.
  const std::uint64_t room = m.config.connection_send_buffer_bytes > m.send_buffered
                                 ? m.config.connection_send_buffer_bytes - m.send_buffered
                                 : 0;
  if (room < data.size() && room < s->send.buffer_room_bytes()) {
    data = data.first(static_cast<std::size_t>(room));
    if (!s->connection_write_blocked) {
      s->connection_write_blocked = true;
      m.write_blocked.push_back(id);
    }
  }
  const std::size_t written = s->send.write(data);
  m.sync_accounting(*s);  // sending-side growth: within the budget by construction
  m.update_backlog(*s, now);
  return written;
}

std::size_t Connection::stream_writable_bytes(StreamId id) {
  Impl& m = *impl_;
  Stream* s = m.closed ? nullptr : m.find(id);
  if (!s) return 0;
  const std::uint64_t connection_room = m.config.connection_send_buffer_bytes > m.send_buffered
                                            ? m.config.connection_send_buffer_bytes - m.send_buffered
                                            : 0;
  const std::uint64_t stream_room = s->send.buffer_room_bytes();
  if (connection_room == 0 && stream_room > 0) {
    if (!s->connection_write_blocked) {
      s->connection_write_blocked = true;
      m.write_blocked.push_back(id);
    }
  } else if (stream_room == 0) {
    s->send.mark_write_blocked();
  }
  return static_cast<std::size_t>(std::min(connection_room, stream_room));
}

std::array<std::span<std::byte>, 2> Connection::stream_write_room(StreamId id, std::size_t max_bytes) {
  const std::size_t room = std::min(stream_writable_bytes(id), max_bytes);
  if (room == 0) return {};
  return impl_->find(id)->send.write_room(room);
}

void Connection::stream_commit_write(StreamId id, std::size_t bytes, Instant now) {
  Impl& m = *impl_;
  Stream* s = m.closed ? nullptr : m.find(id);
  if (!s) return;
  s->send.commit_write(bytes);
  if (bytes == 0) return;
  m.sync_accounting(*s);  // within both budgets: stream_write_room gave no more
  m.update_backlog(*s, now);
}

void Connection::stream_finish(StreamId id, Instant now) {
  if (Stream* s = impl_->find(id)) {
    s->send.finish();
    impl_->update_backlog(*s, now);
  }
}

std::size_t Connection::stream_read(StreamId id, std::span<std::byte> out, bool* fin,
                                    Instant now) {
  if (fin) *fin = false;
  Stream* s = impl_->find(id);
  if (!s) return 0;
  const std::size_t n = s->recv.read(out, fin);
  s->readable_notified = false;
  impl_->after_read(*s, n, now);
  impl_->check_stream_done(id, now);
  return n;
}

std::array<std::span<const std::byte>, 2> Connection::stream_peek(StreamId id) {
  Stream* s = impl_->find(id);
  return s ? s->recv.peek() : std::array<std::span<const std::byte>, 2>{};
}

void Connection::stream_consume(StreamId id, std::size_t bytes, bool* fin, Instant now) {
  if (fin) *fin = false;
  Stream* s = impl_->find(id);
  if (!s) return;
  s->recv.consume(bytes, fin);
  s->readable_notified = false;
  impl_->after_read(*s, bytes, now);
  impl_->check_stream_done(id, now);
}

void Connection::stream_reset(StreamId id, std::uint64_t error_code, Instant now) {
  Impl& m = *impl_;
  Stream* s = m.find(id);
  if (!s || m.closed) return;
  if (s->open_blocked) {
    // The peer has not heard of it: its RESET waits for MAX_STREAMS too.
    m.deferred_resets[id] = error_code;
    m.remove_stream(id, now);
    return;
  }
  m.reset_locally(id, error_code, s->send.sent_end(), s->recv.highest_received(),
                  s->recv.read_offset(), s->recv.final_size().has_value());
  m.remove_stream(id, now);
}

void Connection::set_stream_class(StreamId id, ContentClass cls, Instant) {
  Impl& m = *impl_;
  Stream* s = m.find(id);
  if (!s || s->content_class == cls) return;
  s->content_class = cls;
  if (m.ensemble) m.ensemble->set_class(id, cls);
  s->class_pending = true;
  m.mark_control(*s);
}

void Connection::set_scheduler_config(const congestion::SchedulerConfig& scheduler) {
  impl_->config.ensemble.scheduler = scheduler;  // for ensembles started later
  if (impl_->ensemble) impl_->ensemble->set_scheduler_config(scheduler);
}

bool Connection::stream_exists(StreamId id) const { return impl_->streams.contains(id); }

std::uint64_t Connection::stream_buffered_bytes(StreamId id) const {
  auto it = impl_->streams.find(id);
  if (it == impl_->streams.end()) return 0;
  return it->second.send.buffered_bytes() + it->second.recv.buffered_bytes();
}

std::optional<ContentClass> Connection::stream_class(StreamId id) const {
  auto it = impl_->streams.find(id);
  if (it == impl_->streams.end()) return std::nullopt;
  return it->second.content_class;
}

void Connection::close(std::uint64_t error_code, std::string reason, Instant) {
  impl_->close_with_error(error_code, std::move(reason));
}

bool Connection::is_closed() const { return impl_->closed; }

std::uint64_t Connection::send_rate_limit_bps() const { return impl_->config.ensemble.max_rate_bps; }

void Connection::set_initial_rtt(Duration rtt) {
  auto& initial = impl_->config.ensemble.initial_rtt;
  if (rtt > Duration::zero()) initial = std::min(initial, rtt);
}

ConnectionStats Connection::stats() const {
  ConnectionStats s = impl_->stats;
  s.buffer_pool_bytes = impl_->buffer_pool.bytes_held();
  s.recv_reassembly_intervals = impl_->recv_intervals;
  s.send_buffered_bytes = impl_->send_buffered;
  s.recv_buffered_bytes = impl_->recv_credit.unconsumed();
  s.recv_window_bytes = impl_->recv_credit.window();
  s.streams_open = impl_->streams.size();
  s.flows.flows_open = impl_->flows.size();
  s.streams_blocked_by_limit = impl_->blocked_opens.size();
  s.pmtu_bytes = impl_->pmtu.current;
  s.ensemble = impl_->ensemble ? impl_->ensemble->stats() : impl_->last_ensemble_stats;
  s.packets_lost = impl_->retired_packets_lost + (impl_->ensemble ? s.ensemble.packets_lost : 0);
  s.loss_rounds = impl_->retired_loss_rounds + (impl_->ensemble ? s.ensemble.loss_rounds : 0);
  s.random_loss_rounds =
      impl_->retired_random_loss_rounds + (impl_->ensemble ? s.ensemble.random_loss_rounds : 0);
  s.tail_probes = impl_->retired_tail_probes + (impl_->ensemble ? s.ensemble.tail_probes : 0);
  s.rtos = impl_->retired_rtos + (impl_->ensemble ? s.ensemble.rto_count : 0);
  return s;
}

}  // namespace egw::tunnel
