// Connection: datagram flows (tunnel/flows.h), both directions, and their
// public API. The packet path calls in from connection_send.cc.
#include <algorithm>

#include "tunnel/connection_impl.h"
#include "tunnel/flow_frame_codec.h"
#include "tunnel/packet_header.h"

namespace egw::tunnel {

namespace {
// The largest FLOW_OPEN (an IPv6 destination, an 8-byte id) and DATAGRAM
// header (8-byte id, 2-byte length): what a datagram may need beside its
// payload in a packet of its own.
constexpr std::size_t kDatagramOverheadBytes = (1 + 8 + 1 + 16 + 2 + 1) + (1 + 8 + 2);
}  // namespace

// ---------------------------------------------------------------- receive

void Connection::Impl::on_flow_open_frame(const FlowOpenFrame& f, Instant now) {
  if ((f.flow_id % 2) == (config.is_client ? 0u : 1u)) {
    close_with_error(kErrorProtocolViolation, "FLOW_OPEN with our flow id parity");
    return;
  }
  // A repeat (it rides with each datagram until acknowledged), or a late
  // copy of a flow that is gone: nothing to do.
  if (find_flow(f.flow_id) || peer_flow_ids_seen.contains(f.flow_id / 2)) return;
  peer_flow_ids_seen.insert(f.flow_id / 2, f.flow_id / 2 + 1);
  if (peer_flow_ids_seen.interval_count() > kMaxPeerIdIntervals) {
    close_with_error(kErrorExcessiveLoad, "flow ids too sparse");
    return;
  }
  if (peer_flow_count >= config.max_incoming_flows) {
    ++stats.flows.flows_refused;
    queue_flow_close({f.flow_id, kErrorStreamRefused});
    return;
  }
  create_flow(f.flow_id, false, f.destination, f.content_class, now);
  events.push_back(FlowOpened{f.flow_id, f.destination, f.content_class});
}

void Connection::Impl::on_flow_close_frame(const FlowCloseFrame& f, Instant now) {
  if (!find_flow(f.flow_id)) {
    // A peer flow closed before its FLOW_OPEN came: a late one must not open it.
    const bool peer_flow = (f.flow_id % 2) != (config.is_client ? 0u : 1u);
    if (peer_flow && !peer_flow_ids_seen.contains(f.flow_id / 2)) {
      peer_flow_ids_seen.insert(f.flow_id / 2, f.flow_id / 2 + 1);
      if (peer_flow_ids_seen.interval_count() > kMaxPeerIdIntervals) {
        close_with_error(kErrorExcessiveLoad, "flow ids too sparse");
      }
    }
    return;
  }
  remove_flow(f.flow_id, now);
  events.push_back(FlowClosed{f.flow_id, f.error_code});
}

void Connection::Impl::on_datagram_frame(const DatagramFrame& f) {
  if (!find_flow(f.flow_id)) {
    ++stats.flows.dropped_unknown_flow;
    return;
  }
  ++stats.flows.datagrams_received;
  Flow& flow = flows.find(f.flow_id)->second;
  ++flow.counters.datagrams_received;
  flow.counters.bytes_received += f.data.size();
  events.push_back(DatagramReceived{f.flow_id, std::vector<std::byte>(f.data.begin(), f.data.end())});
}

// ---------------------------------------------------------------- state

Flow* Connection::Impl::find_flow(FlowId id) {
  auto it = flows.find(id);
  return it == flows.end() ? nullptr : &it->second;
}

Flow& Connection::Impl::create_flow(FlowId id, bool local, const Destination& destination,
                                    ContentClass cls, Instant now) {
  ensure_ensemble(now);
  Flow& f = flows[id];
  f.id = id;
  f.local = local;
  f.destination = destination;
  f.content_class = cls;
  f.deadline = datagram_deadline(cls);
  f.open_acked = !local;  // the peer told us
  if (!local) ++peer_flow_count;
  ++stats.flows.flows_opened;
  ensemble->add_member(flow_member(id), cls, now);
  count_busy_period();
  return f;
}

void Connection::Impl::remove_flow(FlowId id, Instant now) {
  auto it = flows.find(id);
  if (it == flows.end()) return;
  if (!it->second.local) --peer_flow_count;
  if (it->second.backlogged) --backlogged_flow_count;
  flows.erase(it);
  std::erase(flow_opens_pending, id);
  if (ensemble) ensemble->remove_member(flow_member(id), now);
  maybe_retire_ensemble(now);
}

bool Connection::Impl::queue_flow_close(const FlowCloseFrame& close) {
  if (pending_flow_closes.size() >= kMaxPendingFlowCloses) {
    close_with_error(kErrorExcessiveLoad, "too many flow closes unsent");
    return false;
  }
  pending_flow_closes.push_back(close);
  return true;
}

Duration Connection::Impl::datagram_deadline(ContentClass cls) const {
  const auto i = static_cast<std::size_t>(cls);
  const Duration d =
      i < config.datagram_deadline_by_class.size() ? config.datagram_deadline_by_class[i] : Duration{0};
  return d > Duration{0} ? d : config.datagram_deadline;
}

void Connection::Impl::drop_expired(Flow& f, Instant now) {
  while (!f.queue.empty() && now - f.queue.front().queued_at > f.deadline) {
    f.queue.pop_front();
    ++stats.flows.dropped_deadline;
    ++f.counters.dropped_deadline;
  }
  update_flow_backlog(f, now);
}

void Connection::Impl::update_flow_backlog(Flow& f, Instant now) {
  const bool backlogged = !f.queue.empty();
  if (backlogged == f.backlogged) return;
  f.backlogged = backlogged;
  if (backlogged) {
    ++backlogged_flow_count;
  } else {
    --backlogged_flow_count;
  }
  if (ensemble) ensemble->set_backlogged(flow_member(f.id), backlogged, now);
}

std::size_t Connection::Impl::datagram_payload_limit() const {
  const std::size_t frames = pmtu.base - kPacketHeaderBytes - protection->overhead();
  return frames > kDatagramOverheadBytes ? frames - kDatagramOverheadBytes : 0;
}

// ---------------------------------------------------------------- send

bool Connection::Impl::flow_control_pending() const {
  return !flow_opens_pending.empty() || !pending_flow_closes.empty();
}

void Connection::Impl::write_flow_control_frames(WireWriter& w) {
  while (!pending_flow_closes.empty() && encoded_size(pending_flow_closes.front()) <= w.remaining()) {
    encode_flow_frame(w, pending_flow_closes.front());
    history.add_control(SentFlowClose{pending_flow_closes.front()});
    pending_flow_closes.pop_front();
  }
  // In the order the flows opened (the peer's limit refuses the last ones).
  std::size_t done = 0;
  for (; done < flow_opens_pending.size(); ++done) {
    Flow* f = find_flow(flow_opens_pending[done]);
    if (f && f->open_pending && !f->open_acked && f->open_sent_in != next_packet_number) {
      const FlowOpenFrame open{f->id, f->destination, f->content_class};
      if (encoded_size(open) > w.remaining()) break;
      encode_flow_frame(w, open);
      history.add_control(SentFlowOpen{f->id});
      f->open_sent_in = next_packet_number;
    }
    if (f) f->open_pending = false;
  }
  flow_opens_pending.erase(flow_opens_pending.begin(),
                           flow_opens_pending.begin() + static_cast<std::ptrdiff_t>(done));
}

std::size_t Connection::Impl::datagram_frame_need(const Flow& f) const {
  if (f.queue.empty()) return 0;
  std::size_t need = encoded_size(DatagramFrame{f.id, f.queue.front().data});
  if (!f.open_acked && f.open_sent_in != next_packet_number) {
    need += encoded_size(FlowOpenFrame{f.id, f.destination, f.content_class});
  }
  return need;
}

// DATAGRAM frames of one flow, oldest first, as many as fit; each leaves
// its queue for good (never retransmitted).
void Connection::Impl::write_datagram_frames(Flow& f, WireWriter& w, SentEntry& entry,
                                             Instant now) {
  drop_expired(f, now);
  if (f.queue.empty()) return;
  if (!f.open_acked && f.open_sent_in != next_packet_number) {
    const FlowOpenFrame open{f.id, f.destination, f.content_class};
    if (encoded_size(open) > w.remaining()) return;
    encode_flow_frame(w, open);
    history.add_control(SentFlowOpen{f.id});
    f.open_sent_in = next_packet_number;
  }
  while (!f.queue.empty()) {
    const DatagramFrame frame{f.id, f.queue.front().data};
    if (encoded_size(frame) > w.remaining()) break;
    encode_flow_frame(w, frame);
    ++f.counters.datagrams_sent;
    f.counters.bytes_sent += frame.data.size();
    f.queue.pop_front();
    ++entry.datagram_count;
    ++stats.flows.datagrams_sent;
    entry.stream_id = flow_member(f.id);
  }
  update_flow_backlog(f, now);
}

std::optional<congestion::MemberId> Connection::Impl::pick_flow(Instant now) {
  if (backlogged_flow_count == 0) return std::nullopt;
  for (auto& [id, f] : flows) {
    if (!f.backlogged) continue;
    drop_expired(f, now);
    if (f.backlogged && ensemble->can_send(flow_member(id), now)) return flow_member(id);
  }
  return std::nullopt;
}

// A packet that carried FLOW_OPENs was acknowledged: those flows are known.
void Connection::Impl::on_flow_controls_acked(const SentEntry& e) {
  for (std::uint32_t i = 0; i < e.control_count; ++i) {
    if (const auto* open = std::get_if<SentFlowOpen>(&history.control(e, i))) {
      if (Flow* f = find_flow(open->flow_id)) f->open_acked = true;
    }
  }
}

// ---------------------------------------------------------------- public API

std::optional<FlowId> Connection::open_flow(const Destination& destination, ContentClass cls,
                                            Instant now) {
  Impl& m = *impl_;
  if (m.closed) return std::nullopt;
  const FlowId id = m.next_local_flow;
  m.next_local_flow += 2;
  Flow& f = m.create_flow(id, true, destination, cls, now);
  // Announced at once, with or without a datagram to ride with.
  f.open_pending = true;
  m.flow_opens_pending.push_back(id);
  return id;
}

bool Connection::send_datagram(FlowId flow, std::span<const std::byte> payload, Instant now) {
  Impl& m = *impl_;
  Flow* f = m.closed ? nullptr : m.find_flow(flow);
  if (!f) return false;
  if (payload.size() > m.datagram_payload_limit()) {
    ++m.stats.flows.dropped_too_large;
    return false;
  }
  m.drop_expired(*f, now);
  // Full: the oldest goes, which is the one a live application needs least.
  if (f->queue.size() >= std::max<std::size_t>(m.config.datagram_queue_datagrams, 1)) {
    f->queue.pop_front();
    ++m.stats.flows.dropped_queue;
    ++f->counters.dropped_queue;
  }
  f->queue.push_back({now, std::vector<std::byte>(payload.begin(), payload.end())});
  m.update_flow_backlog(*f, now);
  return true;
}

void Connection::close_flow(FlowId flow, std::uint64_t error_code, Instant now) {
  Impl& m = *impl_;
  if (m.closed || !m.find_flow(flow)) return;
  if (!m.queue_flow_close({flow, error_code})) return;
  m.remove_flow(flow, now);
}

bool Connection::flow_exists(FlowId flow) const { return impl_->flows.contains(flow); }

std::optional<FlowCounters> Connection::flow_counters(FlowId flow) const {
  const auto it = impl_->flows.find(flow);
  if (it == impl_->flows.end()) return std::nullopt;
  FlowCounters c = it->second.counters;
  c.content_class = it->second.content_class;
  return c;
}

std::size_t Connection::max_datagram_payload() const { return impl_->datagram_payload_limit(); }

}  // namespace egw::tunnel
