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
  return c;
}
}  // namespace

Connection::Impl::Impl(const ConnectionConfig& cfg, std::unique_ptr<PacketProtection> prot,
                       congestion::TemporalCache* temporal_cache, Instant now)
    : config(cfg),
      protection(std::move(prot)),
      cache(temporal_cache),
      ack_tracker(AckTrackerConfig{cfg.max_ack_delay, cfg.ack_every_packets}),
      next_local_id(cfg.is_client ? 0 : 1),
      recv_credit(cfg.connection_receive_window_bytes, kInitialConnectionCreditBytes),
      last_activity(now) {
  config.ensemble = ensemble_config(cfg);
  // The peer assumes the initial credit until told otherwise.
  max_data_pending = recv_credit.maximum() > kInitialConnectionCreditBytes;
}

// ---------------------------------------------------------------- receive path

void Connection::Impl::on_datagram(std::span<std::byte> datagram, Instant now) {
  if (closed) return;
  ++stats.datagrams_received;
  auto opened = open_packet(*protection, datagram);
  if (!opened) {
    ++stats.datagrams_dropped;
    ++stats.datagrams_forged;
    return;
  }
  const PacketNumber number = opened->header.packet_number;
  if (!ack_tracker.is_new(number)) {
    ++stats.datagrams_dropped;
    ++stats.datagrams_duplicate;
    return;
  }
  // Two passes over the payload: check all of it, then act (a receiver never
  // acts on half a packet). Both parse into one reused Frame: no allocation.
  const auto check = check_frames(opened->payload);
  if (!check) {
    // Not acknowledged either: the packet never happened as far as we know.
    ++stats.datagrams_dropped;
    ++stats.datagrams_malformed;
    return;
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
          }
        } else if constexpr (std::is_same_v<F, StreamClassFrame>) {
          // The peer learned the class (e.g. from a response's first bytes):
          // our sending side schedules this stream the same way.
          if (Stream* s = find(f.stream_id)) {
            s->content_class = f.content_class;
            if (ensemble) ensemble->set_class(s->id, f.content_class);
          }
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
  // Acks of a retired ensemble's packets: nothing is waiting for them.
  if (!ensemble) return;
  std::array<congestion::AckedRange, AckRanges::kCapacity> ranges;
  for (std::size_t i = 0; i < f.ranges.size(); ++i) {
    ranges[i] = {f.ranges[i].smallest, f.ranges[i].largest};
  }
  const congestion::AckOutcome& outcome =
      ensemble->on_ack(std::span(ranges).first(f.ranges.size()), f.ack_delay, now);
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
    if (s->send.take_writable_signal()) events.push_back(StreamWritable{id});
    update_backlog(*s, now);  // an ACK may have cancelled a retransmission
    check_stream_done(id, now);
  }
}

Stream* Connection::Impl::stream_for_peer_frame(StreamId id, Instant now) {
  if (Stream* s = find(id)) return s;
  if (!is_peer_stream(id)) {
    if (id >= next_local_id) close_with_error(kErrorProtocolViolation, "frame for an unopened stream");
    return nullptr;  // one of ours, already closed
  }
  if (peer_ids_seen.contains(id / 2)) return nullptr;  // closed or reset
  if (!note_peer_id(id)) return nullptr;
  if (peer_stream_count >= config.max_incoming_streams) {
    reset_locally(id, kErrorStreamRefused, 0, 0, 0);
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
  Stream* s = stream_for_peer_frame(f.stream_id, now);
  if (!s) {
    if (!closed) account_tombstone(f.stream_id, f.offset + f.data.size());
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
}

void Connection::Impl::on_reset_frame(const ResetStreamFrame& f, Instant now) {
  if (auto it = tombstones.find(f.stream_id); it != tombstones.end()) {
    // The answer to (or a crossing of) our own RESET: settle the credit.
    account_tombstone(f.stream_id, f.final_size);
    tombstones.erase(f.stream_id);
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
    // Opened and reset before we heard of it: settle credit, answer, forget.
    if (!note_peer_id(f.stream_id)) return;
    if (!recv_credit.on_received(f.final_size)) {
      close_with_error(kErrorFlowControl, "RESET final size beyond MAX_DATA");
      return;
    }
    recv_credit.on_consumed(f.final_size);
    if (!queue_reset({f.stream_id, f.error_code, 0})) return;
    ensure_ensemble(now);
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
  if (recv_credit.take_update()) max_data_pending = true;
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
  if (!local) ++peer_stream_count;
  // Tell the peer our real window if it is larger than the one it assumes.
  if (s.recv.max_stream_data() > kInitialStreamCreditBytes) {
    s.credit_pending = true;
    mark_control(s);
  }
  ensemble->add_member(id, s.content_class, now);
  return s;
}

void Connection::Impl::remove_stream(StreamId id, Instant now) {
  auto it = streams.find(id);
  if (it == streams.end()) return;
  if (!it->second.local) --peer_stream_count;
  if (it->second.backlogged) --backlogged_count;  // the ensemble forgets the member
  streams.erase(it);
  control_streams.erase(id);
  retransmit_streams.erase(id);
  if (ensemble) ensemble->remove_member(id, now);
  maybe_retire_ensemble(now);
}

void Connection::Impl::reset_locally(StreamId id, std::uint64_t error_code,
                                     std::uint64_t sent_end, std::uint64_t highest_received,
                                     std::uint64_t read_offset) {
  if (!queue_reset({id, error_code, sent_end})) return;
  // What was received but will never be read is consumed as far as credit goes.
  recv_credit.on_consumed(highest_received - read_offset);
  if (recv_credit.take_update()) max_data_pending = true;
  if (tombstones.size() >= kMaxResetTombstones) tombstones.erase(tombstones.begin());
  tombstones[id] = ResetTombstone{highest_received};
}

void Connection::Impl::check_stream_done(StreamId id, Instant now) {
  Stream* s = find(id);
  if (!s || !s->send.all_acked() || !s->recv.fin_read()) return;
  remove_stream(id, now);
  events.push_back(StreamClosed{id});
}

void Connection::Impl::after_read(Stream& s, std::size_t bytes) {
  recv_credit.on_consumed(bytes);
  if (s.recv.take_credit_update()) {
    s.credit_pending = true;
    mark_control(s);
  }
  if (recv_credit.take_update()) max_data_pending = true;
}

void Connection::Impl::mark_control(Stream& s) { control_streams.insert(s.id); }

void Connection::Impl::update_backlog(Stream& s, Instant now) {
  // The stream's own credit only: connection credit is checked once per
  // packet before asking the ensemble for new data.
  constexpr std::uint64_t kIgnoreConnectionCredit = std::uint64_t{1} << 62;
  const bool backlogged =
      s.send.has_retransmission() || s.send.has_new_data(kIgnoreConnectionCredit);
  if (backlogged == s.backlogged) return;
  s.backlogged = backlogged;
  if (backlogged) {
    ++backlogged_count;
  } else {
    --backlogged_count;
  }
  if (ensemble) ensemble->set_backlogged(s.id, backlogged, now);
}

bool Connection::Impl::control_pending() const {
  return max_data_pending || ping_pending || !pending_resets.empty() || !control_streams.empty();
}

void Connection::Impl::close_with_error(std::uint64_t code, std::string reason) {
  if (closed) return;
  closed = true;
  if (reason.size() > kMaxCloseReasonBytes) reason.resize(kMaxCloseReasonBytes);
  close_to_send = CloseFrame{code, reason};
  events.push_back(ConnectionClosed{code, std::move(reason)});
}

void Connection::Impl::ensure_ensemble(Instant now) {
  if (ensemble) return;
  std::optional<congestion::PathState> resume;
  if (cache) resume = cache->lookup(config.cache_key, now);
  ensemble = std::make_unique<congestion::Ensemble>(config.ensemble, now, resume);
  ++stats.ensembles_started;
  for (const auto& [id, s] : streams) {
    ensemble->add_member(id, s.content_class, now);
    if (s.backlogged) ensemble->set_backlogged(id, true, now);
  }
}

// E-TCP temporal sharing: when the last stream has gone and nothing is in
// flight, the ensemble's state goes to the cache and the next busy period
// starts a new ensemble from it.
void Connection::Impl::maybe_retire_ensemble(Instant now) {
  // A pending MAX_DATA does not keep it alive: credit only matters to
  // streams, and it goes out with the next busy period's first packet.
  if (!ensemble || !streams.empty() || !pending_resets.empty() || ping_pending) return;
  const congestion::EnsembleStats es = ensemble->stats();
  if (es.bytes_in_flight > 0) return;
  if (cache) cache->learn(config.cache_key, ensemble->observe(now), now);
  last_ensemble_stats = es;
  ensemble.reset();
  history.reset(next_packet_number);  // only packets the retired ensemble no longer tracks
  pacing_release.reset();
}

// ---------------------------------------------------------------- public API

Connection::Connection(const ConnectionConfig& config,
                       std::unique_ptr<PacketProtection> protection,
                       congestion::TemporalCache* cache, Instant now)
    : impl_(std::make_unique<Impl>(config, std::move(protection), cache, now)) {}

Connection::~Connection() = default;

void Connection::on_datagram(std::span<std::byte> datagram, Instant now) {
  impl_->on_datagram(datagram, now);
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
  s.open_pending = true;
  m.mark_control(s);
  return id;
}

std::size_t Connection::stream_write(StreamId id, std::span<const std::byte> data, Instant now) {
  if (impl_->closed) return 0;
  Stream* s = impl_->find(id);
  if (!s) return 0;
  const std::size_t written = s->send.write(data);
  impl_->update_backlog(*s, now);
  return written;
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
  impl_->after_read(*s, n);
  impl_->check_stream_done(id, now);
  return n;
}

void Connection::stream_reset(StreamId id, std::uint64_t error_code, Instant now) {
  Impl& m = *impl_;
  Stream* s = m.find(id);
  if (!s || m.closed) return;
  m.reset_locally(id, error_code, s->send.sent_end(), s->recv.highest_received(),
                  s->recv.read_offset());
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

std::optional<ContentClass> Connection::stream_class(StreamId id) const {
  auto it = impl_->streams.find(id);
  if (it == impl_->streams.end()) return std::nullopt;
  return it->second.content_class;
}

void Connection::close(std::uint64_t error_code, std::string reason, Instant) {
  impl_->close_with_error(error_code, std::move(reason));
}

bool Connection::is_closed() const { return impl_->closed; }

ConnectionStats Connection::stats() const {
  ConnectionStats s = impl_->stats;
  s.buffer_pool_bytes = impl_->buffer_pool.bytes_held();
  s.ensemble = impl_->ensemble ? impl_->ensemble->stats() : impl_->last_ensemble_stats;
  return s;
}

}  // namespace egw::tunnel
