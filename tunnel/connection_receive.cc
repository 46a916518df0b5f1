// Connection: the receive path (datagram checks, frames, ACKs, stream data,
// resets, stream limits). Setup, stream bookkeeping, the ensemble's life and
// the public API are in connection.cc; the send path in connection_send.cc.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "tunnel/connection_impl.h"
#include "tunnel/frame_codec.h"
#include "tunnel/packet_header.h"

namespace egw::tunnel {
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
  if (config.ack_decimation_measured && check->ack_eliciting) {
    if (auto on = ack_share.on_eliciting_received(config.ack_every_packets, ack_tracker.decimation())) {
      ack_tracker.set_decimation(*on);
    }
  }
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

}  // namespace egw::tunnel
