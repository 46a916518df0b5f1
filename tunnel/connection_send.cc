// Connection: send path (packet assembly), ACK and loss bookkeeping, timers.
//
// A packet is built in this order: an ACK (when due, or piggybacked when an
// ack-eliciting packet goes anyway), control frames, then STREAM frames of a
// single stream: the ensemble charges each packet to one member, which is
// what lets coupling `none` give every stream its own controller. Lost
// stream data goes before new data; new data comes from the member the
// ensemble's stride scheduler picks. ACK-only packets are neither congestion
// controlled nor reported to the ensemble (RFC 9002 section 3).
#include <algorithm>

#include "tunnel/connection_impl.h"
#include "tunnel/frame_codec.h"
#include "tunnel/packet_header.h"

namespace egw::tunnel {

using congestion::kControlMember;

std::optional<Datagram> Connection::Impl::poll_transmit(Instant now) {
  if (close_to_send) return build_close();
  if (closed) return std::nullopt;
  pacing_release.reset();
  // Only a RESET (of a stream refused or reset before it was seen) can be
  // pending without a stream; anything else waits for the next stream.
  if (!ensemble && !pending_resets.empty()) ensure_ensemble(now);

  const std::size_t budget = config.max_datagram_bytes - kPacketHeaderBytes -
                             protection->overhead();
  const auto deadline = ack_tracker.ack_deadline();
  const bool ack_due = deadline && *deadline <= now;

  // May an ack-eliciting packet go, and who pays for it?
  std::optional<StreamId> member;
  bool eliciting_allowed = false;
  if (ensemble) {
    member = pick_data_member(now);
    eliciting_allowed =
        member || (control_pending() && ensemble->can_send(kControlMember, now));
  }
  if (!eliciting_allowed && !ack_due) {
    if (ensemble) {
      const bool want = control_pending() || !retransmit_streams.empty() ||
                        std::any_of(streams.begin(), streams.end(), [&](const auto& e) {
                          return e.second.send.has_new_data(send_credit.available());
                        });
      if (want) pacing_release = ensemble->next_pacing_release(now);
    }
    return std::nullopt;
  }

  std::vector<std::byte> payload;
  WireWriter w(payload, budget);
  SentRecord record;
  if (ack_due || (eliciting_allowed && ack_tracker.has_unacked_packets())) {
    // Leave most of a data packet to data; a due ACK alone may use it all.
    const std::size_t ack_budget = eliciting_allowed ? budget / 4 : budget;
    if (auto ack = ack_tracker.ack_frame(now, std::min(ack_budget, w.remaining()))) {
      encode_frame(w, *ack);
      record.largest_acked = ack->ranges.front().largest;
    }
    // Paid even if nothing fit, so a due ACK can never spin the caller.
    ack_tracker.on_ack_sent(now);
  }
  if (eliciting_allowed) {
    write_control_frames(w, record);
    if (member) write_stream_frames(streams.at(*member), w, record);
  }
  if (payload.empty()) return std::nullopt;

  const bool eliciting = !record.chunks.empty() || !record.controls.empty();
  const PacketNumber number = next_packet_number;
  Datagram d = seal(payload);
  if (eliciting) {
    const congestion::MemberId charged =
        record.chunks.empty() ? kControlMember : record.chunks.front().stream_id;
    ensemble->on_packet_sent({number, charged, d.bytes.size(), now, true});
    d.low_priority = ensemble->low_priority();
    sent.emplace(number, std::move(record));
    // RFC 9000 section 10.1: the first ack-eliciting packet after a receipt
    // also restarts the idle timer.
    if (!eliciting_sent_since_receive) {
      eliciting_sent_since_receive = true;
      last_activity = now;
    }
  }
  return d;
}

std::optional<StreamId> Connection::Impl::pick_data_member(Instant now) {
  for (StreamId id : retransmit_streams) {
    if (ensemble->can_send(id, now)) return id;
  }
  // Interim: backlog recomputed for every stream (O(streams) per packet).
  const std::uint64_t allowance = send_credit.available();
  for (auto& [id, s] : streams) ensemble->set_backlogged(id, s.send.has_new_data(allowance), now);
  return ensemble->pick_sender(now);
}

bool Connection::Impl::write_control_frames(WireWriter& w, SentRecord& record) {
  const std::size_t before = record.controls.size();
  auto try_write = [&](const Frame& f) {
    if (encoded_size(f) > w.remaining()) return false;
    encode_frame(w, f);
    return true;
  };
  if (max_data_pending && try_write(MaxDataFrame{recv_credit.maximum()})) {
    max_data_pending = false;
    record.controls.push_back({ControlKind::max_data, 0, recv_credit.maximum(), 0});
  }
  while (!pending_resets.empty() && try_write(pending_resets.front())) {
    const ResetStreamFrame& r = pending_resets.front();
    record.controls.push_back({ControlKind::reset, r.stream_id, r.error_code, r.final_size});
    pending_resets.pop_front();
  }
  for (auto it = control_streams.begin(); it != control_streams.end();) {
    Stream* s = find(*it);
    if (!s) {
      it = control_streams.erase(it);
      continue;
    }
    if (s->open_pending &&
        try_write(StreamOpenFrame{s->id, s->destination, s->content_class})) {
      s->open_pending = false;
      record.controls.push_back({ControlKind::stream_open, s->id, 0, 0});
    }
    if (s->class_pending && try_write(StreamClassFrame{s->id, s->content_class})) {
      s->class_pending = false;
      record.controls.push_back(
          {ControlKind::stream_class, s->id, static_cast<std::uint64_t>(s->content_class), 0});
    }
    if (s->credit_pending && try_write(MaxStreamDataFrame{s->id, s->recv.max_stream_data()})) {
      s->credit_pending = false;
      record.controls.push_back(
          {ControlKind::max_stream_data, s->id, s->recv.max_stream_data(), 0});
    }
    if (s->open_pending || s->class_pending || s->credit_pending) break;  // packet full
    it = control_streams.erase(it);
  }
  if (ping_pending && try_write(PingFrame{})) {
    ping_pending = false;
    record.controls.push_back({ControlKind::ping, 0, 0, 0});
  }
  return record.controls.size() > before;
}

void Connection::Impl::write_stream_frames(Stream& s, WireWriter& w, SentRecord& record) {
  while (true) {
    const std::uint64_t allowance = send_credit.available();
    const auto offset = s.send.next_send_offset(allowance);
    if (!offset) break;
    const auto fit = max_stream_data_that_fits(s.id, *offset, w.remaining());
    if (!fit) break;
    const auto chunk = s.send.take_chunk(*fit, allowance);
    if (!chunk) break;
    if (chunk->retransmission) {
      stats.stream_bytes_retransmitted += chunk->length;
    } else {
      send_credit.on_new_bytes_sent(chunk->length);
    }
    scratch.resize(chunk->length);
    s.send.copy_out(*chunk, scratch);
    encode_frame(w, StreamFrame{s.id, chunk->offset, chunk->fin, scratch});
    record.chunks.push_back({s.id, chunk->offset, chunk->length, chunk->fin});
  }
  if (!s.send.has_retransmission()) retransmit_streams.erase(s.id);
}

Datagram Connection::Impl::seal(std::vector<std::byte>& payload) {
  const PacketHeader header{PacketType::data, 0, next_packet_number++};
  Datagram d;
  d.bytes = seal_packet(*protection, header, payload);
  ++stats.datagrams_sent;
  return d;
}

std::optional<Datagram> Connection::Impl::build_close() {
  std::vector<std::byte> payload;
  WireWriter w(payload, config.max_datagram_bytes - kPacketHeaderBytes - protection->overhead());
  encode_frame(w, *close_to_send);
  close_to_send.reset();
  if (!w.ok()) return std::nullopt;
  return seal(payload);
}

// ------------------------------------------------------------ ack and loss

void Connection::Impl::on_packet_acked(PacketNumber number) {
  auto it = sent.find(number);
  if (it == sent.end()) return;
  const SentRecord& record = it->second;
  for (const SentChunk& c : record.chunks) {
    if (Stream* s = find(c.stream_id)) {
      s->send.on_acked(c.offset, c.length, c.fin);
      acked_streams.push_back(c.stream_id);
    }
  }
  if (record.largest_acked) ack_tracker.on_ack_acknowledged(*record.largest_acked);
  sent.erase(it);
}

// Requeue what the packet carried, if it still matters.
void Connection::Impl::on_packet_lost(PacketNumber number) {
  auto it = sent.find(number);
  if (it == sent.end()) return;
  const SentRecord& record = it->second;
  for (const SentChunk& c : record.chunks) {
    if (Stream* s = find(c.stream_id)) {
      s->send.on_lost(c.offset, c.length, c.fin);
      if (s->send.has_retransmission()) retransmit_streams.insert(c.stream_id);
    }
  }
  for (const SentControl& c : record.controls) {
    Stream* s = find(c.stream_id);
    switch (c.kind) {
      case ControlKind::stream_open:
        if (s) s->open_pending = true;
        break;
      case ControlKind::stream_class:
        if (s && static_cast<std::uint64_t>(s->content_class) == c.value) s->class_pending = true;
        break;
      case ControlKind::max_stream_data:
        // A newer value supersedes it (and is pending or sent already).
        if (s && s->recv.max_stream_data() == c.value && !s->recv.final_size()) {
          s->credit_pending = true;
        }
        break;
      case ControlKind::max_data:
        if (recv_credit.maximum() == c.value) max_data_pending = true;
        break;
      case ControlKind::reset:
        // Always current: the peer needs it to settle its credit.
        pending_resets.push_back({c.stream_id, c.value, c.final_size});
        break;
      case ControlKind::ping:
        break;
    }
    if (s && (s->open_pending || s->class_pending || s->credit_pending)) mark_control(*s);
  }
  if (!record.chunks.empty()) {
    declared_lost.emplace(number, record.chunks);
    if (declared_lost.size() > kMaxDeclaredLostRecords) declared_lost.erase(declared_lost.begin());
  }
  sent.erase(it);
}

// An ACK for packets already declared lost: their data arrived after all.
// Only the streams learn it (the ensemble has settled those packets).
void Connection::Impl::on_late_ack(PacketNumber smallest, PacketNumber largest) {
  auto it = declared_lost.lower_bound(smallest);
  while (it != declared_lost.end() && it->first <= largest) {
    for (const SentChunk& c : it->second) {
      Stream* s = find(c.stream_id);
      if (!s) continue;
      s->send.on_acked(c.offset, c.length, c.fin);  // cancels the pending resend
      if (!s->send.has_retransmission()) retransmit_streams.erase(c.stream_id);
      acked_streams.push_back(c.stream_id);
    }
    it = declared_lost.erase(it);
  }
}

// ------------------------------------------------------------ timers

std::optional<Instant> Connection::Impl::idle_deadline() const {
  return last_activity + config.idle_timeout;
}

// With streams open, a PING every idle_timeout / 2 keeps a quiet but live
// connection (an idle proxied TCP session) from timing out.
std::optional<Instant> Connection::Impl::keepalive_deadline() const {
  if (streams.empty()) return std::nullopt;
  Instant since = last_activity;
  if (last_keepalive) since = std::max(since, *last_keepalive);
  return since + config.idle_timeout / 2;
}

std::optional<Instant> Connection::Impl::next_timeout() const {
  if (closed) return std::nullopt;
  std::optional<Instant> earliest;
  auto consider = [&](std::optional<Instant> t) {
    if (t && (!earliest || *t < *earliest)) earliest = t;
  };
  consider(ack_tracker.ack_deadline());
  if (ensemble) consider(ensemble->next_timeout());
  consider(pacing_release);
  consider(idle_deadline());
  consider(keepalive_deadline());
  return earliest;
}

void Connection::Impl::on_timeout(Instant now) {
  if (closed) return;
  if (now >= *idle_deadline()) {
    closed = true;
    events.push_back(ConnectionClosed{kErrorIdleTimeout, "idle timeout"});
    return;
  }
  if (ensemble) {
    if (auto t = ensemble->next_timeout(); t && *t <= now) {
      const congestion::TimeoutOutcome& outcome = ensemble->on_timeout(now);
      for (const congestion::SentPacket& p : outcome.lost) on_packet_lost(p.number);
      // RFC 9002 6.2.4: a probe must go out even when nothing is left to resend.
      if (outcome.rto_fired && retransmit_streams.empty() && !control_pending()) {
        ping_pending = true;
      }
    }
  }
  if (auto k = keepalive_deadline(); k && now >= *k) {
    ping_pending = true;
    last_keepalive = now;
  }
  maybe_retire_ensemble(now);
}

}  // namespace egw::tunnel
