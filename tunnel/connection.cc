// Connection: setup, stream bookkeeping, the ensemble's life and the public
// API. The receive path is in connection_receive.cc; the send path, loss
// handling and timers in connection_send.cc.
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
  s.ack_decimating = impl_->ack_tracker.decimation();
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
