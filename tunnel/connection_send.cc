// Connection: send path (packet assembly), ACK and loss bookkeeping, timers
// (path MTU probes: connection_pmtu.cc).
//
// A packet is built in this order: an ACK (when due, or piggybacked when an
// ack-eliciting packet goes anyway), control frames, then STREAM frames of a
// single stream: the ensemble charges each packet to one member, which is
// what lets coupling `none` give every stream its own controller. Lost
// stream data goes before new data; new data comes from the member the
// ensemble's stride scheduler picks. ACK-only packets are neither congestion
// controlled nor tracked by the ensemble (RFC 9002 section 3); their bytes
// only count against ensemble.max_rate (Ensemble::on_unscheduled_sent).
//
// The urgent lane (issue 22). A receiver whose CPU is the bottleneck holds
// a queue in its socket (on the data-plane bench ~100-150 datagrams behind a
// bulk transfer), and a request waits behind all of it although none of the
// bulk's packets needs to go first. Towards a peer that announced it reads
// the lane (kFlagUrgentLane), some packets go as PacketType::data_urgent,
// which the peer's socket layer takes ahead of the queue: packets without
// stream data or datagrams (ACKs, credit, control), a realtime or
// interactive flow's datagrams, and a stream's packet that holds the whole
// of a new burst (the stream had nothing unacknowledged and has nothing
// more to send: a request, a small response, a keystroke). Never a bulk
// transfer's packets, nor retransmissions. The network keeps both lanes in
// one order as before; only the receiver reorders, so loss detection counts
// a lane's packets apart (congestion/sent_packets.h).
//
// Acknowledgements and credit never wait behind data (issue 20 item 4): a
// due ACK goes at once, alone if no data may go; and flow-control credit
// (MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS) goes past the window and the
// pacer in a packet of its own with the ACK and the other pending control
// frames: the peer's data is held until it arrives, so holding it behind our
// own data (an upload filling our window) would throttle the peer's
// transfer by our queue. Such a packet is ack-eliciting and reported to the
// ensemble (its loss must be found), and goes only when credit changed
// (half a window read, a stream or the connection), so it stays bounded.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "congestion/rtt_estimator.h"
#include "tunnel/connection_impl.h"
#include "tunnel/frame_codec.h"
#include "tunnel/packet_header.h"

namespace egw::tunnel {

using congestion::kControlMember;

std::optional<Transmit> Connection::Impl::poll_transmit(Instant now,
                                                        std::span<std::byte> buffer) {
  // A buffer smaller than max_datagram_bytes limits the datagram; one too
  // small for any packet is a driver bug: nothing is sent (nor lost).
  const std::size_t datagram_limit = std::min<std::size_t>(buffer.size(), pmtu.current);
  const std::size_t overhead = kPacketHeaderBytes + protection->overhead();
  if (datagram_limit <= overhead) return std::nullopt;
  if (close_to_send) return build_close(buffer.first(datagram_limit));
  if (closed) return std::nullopt;
  if (auto due = pmtu_probe_due(now); due && *due <= now) {
    if (auto probe = build_pmtu_probe(now, buffer)) return probe;
  }
  pacing_release.reset();
  // Only a RESET (of a stream refused or reset before it was seen), a
  // MAX_STREAMS (the peer may be waiting for it to open any stream) or a
  // keep-alive PING can be pending without a stream; anything else waits for
  // the next stream.
  if (!ensemble && (!pending_resets.empty() || !pending_flow_closes.empty() || max_streams_pending ||
                    ping_pending)) {
    ensure_ensemble(now);
  }

  const auto deadline = ack_tracker.ack_deadline();
  const bool ack_due = deadline && *deadline <= now;

  // May an ack-eliciting packet go, and who pays for it?
  std::optional<StreamId> member;
  bool eliciting_allowed = false;
  bool credit_only = false;  // past the window: ACK and control frames only
  if (ensemble) {
    member = pick_data_member(now);
    eliciting_allowed =
        member || (control_pending() && ensemble->can_send(kControlMember, now));
    credit_only = !eliciting_allowed && credit_pending();
  }
  if (credit_only) {
    eliciting_allowed = true;
    ++stats.credit_packets_past_window;
  }
  if (ensemble && !member && stream_data_waiting()) ack_share.on_data_held();
  if (!eliciting_allowed && !ack_due) {
    if (ensemble) {
      const bool want = control_pending() || backlogged_flow_count > 0 || stream_data_waiting();
      if (want) pacing_release = ensemble->next_pacing_release(now);
    }
    return std::nullopt;
  }

  // The member is a stream or a datagram flow (looked up once per packet).
  Flow* flow = member && is_flow_member(*member) ? find_flow(flow_of_member(*member)) : nullptr;
  // While a call runs on a slow path, the others' packets are built small
  // (Ensemble::packet_bytes_limit); a flow's datagrams cannot be split.
  std::size_t packet_limit = datagram_limit;
  if (ensemble && !flow) {
    packet_limit = std::clamp<std::size_t>(ensemble->packet_bytes_limit(member.value_or(kControlMember), now),
                                           overhead + 1, datagram_limit);
  }
  const std::size_t budget = packet_limit - overhead;

  // Frames go straight into the caller's buffer, after the header.
  WireWriter w(buffer.subspan(kPacketHeaderBytes, budget));
  seal_source_count = 0;
  if (next_packet_number == next_skip) skip_packet_number();
  SentEntry& entry = history.begin(next_packet_number);
  bool whole_burst = false;  // a stream's packet: all it had to send, after an idle spell
  if (ack_due || (eliciting_allowed && ack_tracker.has_unacked_packets())) {
    // Leave most of a data packet to data; a due ACK alone may use it all.
    std::size_t ack_budget = eliciting_allowed ? budget / 4 : budget;
    // A datagram cannot be split: a piggybacked ACK leaves it room.
    if (flow && !ack_due) ack_budget = std::min(ack_budget, budget - std::min(budget, datagram_frame_need(*flow)));
    const std::optional<Duration> stamp =
        config.peer_reads_ack_timestamps ? std::optional<Duration>((now - epoch) % kAckTimestampRange) : std::nullopt;
    if (auto ack = ack_tracker.ack_frame(now, std::min(ack_budget, w.remaining()), stamp)) {
      encode_frame(w, *ack);
      entry.carries_ack = true;
      entry.largest_acked = ack->ranges.front().largest;
    }
    // Paid even if nothing fit, so a due ACK can never spin the caller.
    ack_tracker.on_ack_sent(now);
  }
  if (eliciting_allowed) {
    write_control_frames(w);
    if (member && is_flow_member(*member)) {
      if (flow) write_datagram_frames(*flow, w, entry, now);
    } else if (member) {
      Stream& s = streams.at(*member);
      // Nothing in flight nor to repeat before (a thin stream's redundant
      // copy, queued by write_stream_frames, does not count), all sent after.
      const bool idle_before = s.send.unacked_bytes() == 0 && !s.send.has_retransmission();
      write_stream_frames(s, w, entry, now);
      whole_burst = idle_before && s.send.sent_end() == s.send.write_end();
    }
  }
  if (w.written() == 0) {
    history.discard_back();
    return std::nullopt;
  }

  const bool eliciting = entry.chunk_count > 0 || entry.control_count > 0 || entry.datagram_count > 0;
  const PacketNumber number = next_packet_number;
  const bool urgent = config.peer_reads_urgent_lane && urgent_packet(entry, flow, whole_burst);
  Transmit t{seal(buffer, w.written(), urgent), false, eliciting};
  if (urgent) ++stats.urgent_packets_sent;
  entry.bytes = static_cast<std::uint32_t>(t.bytes);
  if (packet_limit < datagram_limit && entry.chunk_count > 0) ++stats.small_packets_sent;
  if (eliciting) {
    const congestion::MemberId charged =
        entry.chunk_count > 0 || entry.datagram_count > 0 ? entry.stream_id : kControlMember;
    congestion::SentPacket sent{number, charged, t.bytes, now, true};
    sent.urgent = urgent;
    t.low_priority = ensemble->on_packet_sent(sent);
    entry.state = SentState::in_flight;
    if (++recent_sent >= 8192) {
      recent_sent /= 2;
      recent_lost /= 2;
    }
    // RFC 9000 section 10.1: the first ack-eliciting packet after a receipt
    // also restarts the idle timer.
    if (!eliciting_sent_since_receive) {
      eliciting_sent_since_receive = true;
      last_activity = now;
    }
  } else if (ensemble) {
    ensemble->on_unscheduled_sent(now, t.bytes);
  }
  ack_share.on_sent(t.bytes, !eliciting);
  trim_history(now);
  return t;
}

std::optional<StreamId> Connection::Impl::pick_data_member(Instant now) {
  // Retransmissions first; they need no connection credit.
  for (std::size_t i = 0; i < retransmit_streams.size(); ++i) {
    if (ensemble->can_send(retransmit_streams[i], now)) return retransmit_streams[i];
  }
  // The ensemble knows which streams are backlogged (update_backlog); the
  // connection-level credit is checked here, once, for all of them.
  // Datagrams need none: without it only a flow may send.
  if (send_credit.available() == 0) return pick_flow(now);
  // A flow whose datagrams all expired is no sender after all: ask again
  // (it is no longer backlogged, so this ends).
  for (std::size_t tries = 0; tries <= flows.size(); ++tries) {
    const std::optional<StreamId> picked = ensemble->pick_sender(now);
    if (!picked || !is_flow_member(*picked)) return picked;
    Flow* f = find_flow(flow_of_member(*picked));
    if (!f) return std::nullopt;
    drop_expired(*f, now);
    if (f->backlogged) return picked;
  }
  return std::nullopt;
}

void Connection::Impl::write_control_frames(WireWriter& w) {
  auto try_write = [&](const Frame& f) {
    if (encoded_size(f) > w.remaining()) return false;
    encode_frame(w, f);
    return true;
  };
  if (max_data_pending && try_write(MaxDataFrame{recv_credit.maximum()})) {
    max_data_pending = false;
    history.add_control(SentMaxData{recv_credit.maximum()});
  }
  if (max_streams_pending && try_write(MaxStreamsFrame{local_max_streams})) {
    max_streams_pending = false;
    history.add_control(SentMaxStreams{local_max_streams});
  }
  while (!pending_resets.empty() && try_write(pending_resets.front())) {
    history.add_control(SentReset{pending_resets.front()});
    pending_resets.pop_front();
  }
  for (std::size_t i = 0; i < control_streams.size();) {
    Stream* s = find(control_streams[i]);
    if (!s || s->open_blocked) {  // a blocked stream is marked again when it opens
      control_streams.erase_at(i);
      continue;
    }
    // An older peer fails a frame with a category in it: it gets the nearest
    // content type (the stream keeps its category here).
    const ContentClass wire_class =
        config.peer_knows_categories ? s->content_class : nearest_content_type(s->content_class);
    if (s->open_pending && try_write(StreamOpenFrame{s->id, s->destination, wire_class})) {
      s->open_pending = false;
      history.add_control(SentStreamOpen{s->id});
    }
    if (s->class_pending && try_write(StreamClassFrame{s->id, wire_class})) {
      s->class_pending = false;
      history.add_control(SentStreamClass{s->id, s->content_class});
    }
    if (s->credit_pending && try_write(MaxStreamDataFrame{s->id, s->recv.max_stream_data()})) {
      s->credit_pending = false;
      history.add_control(SentMaxStreamData{s->id, s->recv.max_stream_data()});
    }
    if (s->open_pending || s->class_pending || s->credit_pending) break;  // packet full
    control_streams.erase_at(i);
  }
  if (control_streams.empty()) stream_credit_urgent = false;
  write_flow_control_frames(w);
  if (ping_pending && try_write(PingFrame{})) {
    ping_pending = false;
    history.add_control(SentPing{});
  }
}

// STREAM frames of one stream; their bytes stay in the stream's ring until
// seal() encrypts them from there into the packet (the frame header before
// them is written into the packet and sealed in place, in order).
void Connection::Impl::write_stream_frames(Stream& s, WireWriter& w, SentEntry& entry,
                                           Instant now) {
  bool new_only = true;
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
      new_only = false;
    } else {
      send_credit.on_new_bytes_sent(chunk->length);
    }
    encode_stream_frame_header(w, s.id, chunk->offset, chunk->length, chunk->fin);
    const std::size_t at = w.written();
    const std::span<std::byte> room = w.claim(chunk->length);
    if (chunk->length > 0 && seal_source_count + 2 <= kMaxSealSources &&
        room.size() == chunk->length) {
      const ByteRing::ConstPieces pieces = s.send.pieces(*chunk);
      seal_sources[seal_source_count++] = {at, pieces[0]};
      if (!pieces[1].empty()) seal_sources[seal_source_count++] = {at + pieces[0].size(), pieces[1]};
    } else {
      s.send.copy_out(*chunk, room);
    }
    history.add_chunk({chunk->offset, static_cast<std::uint32_t>(chunk->length), chunk->fin});
    entry.stream_id = s.id;
  }
  if (!s.send.has_retransmission()) retransmit_streams.erase(s.id);
  if (new_only && entry.chunk_count > 0) copy_thin_tail(s, entry);
  update_backlog(s, now);
}

// RFC 9000 section 21.4: now and then a number is never sent; a peer that
// acknowledges one acknowledges what it did not receive (an optimistic ACK
// to inflate our window) and is closed (on_ack_frame).
void Connection::Impl::skip_packet_number() {
  history.begin(next_packet_number);  // settled, empty: nothing to act on
  skipped[skipped_count % kSkippedPacketNumbers] = next_packet_number;
  ++skipped_count;
  ++next_packet_number;
  ++stats.packet_numbers_skipped;
  next_skip = next_packet_number + 64 + skip_rng.next() % 192;
}

bool Connection::Impl::urgent_packet(const SentEntry& entry, const Flow* flow, bool whole_burst) const {
  if (entry.datagram_count > 0) {
    return flow && (flow->content_class == ContentClass::realtime || flow->content_class == ContentClass::interactive);
  }
  return entry.chunk_count == 0 || whole_burst;
}

std::size_t Connection::Impl::seal(std::span<std::byte> buffer, std::size_t frames_bytes, bool urgent) {
  const PacketHeader header{urgent ? PacketType::data_urgent : PacketType::data, protection->remote_index(),
                            next_packet_number++};
  ++stats.datagrams_sent;
  const std::span<const SealSource> sources(seal_sources.data(), seal_source_count);
  seal_source_count = 0;
  return seal_packet_in_place(*protection, header, buffer, frames_bytes, sources);
}

std::optional<Transmit> Connection::Impl::build_close(std::span<std::byte> buffer) {
  WireWriter w(buffer.subspan(kPacketHeaderBytes,
                              buffer.size() - kPacketHeaderBytes - protection->overhead()));
  encode_frame(w, *close_to_send);
  close_to_send.reset();
  if (!w.ok()) return std::nullopt;
  history.begin(next_packet_number);  // settled: nothing to act on
  return Transmit{seal(buffer, w.written()), false};
}

// ------------------------------------------------------------ DPLPMTUD
//
// RFC 8899 in the core: the base size always works; probes of PING +
// PADDING search upward one at a time while streams are open. A probe is
// not reported to the ensemble (not congestion controlled, and its loss is
// no congestion signal); it is lost when not acknowledged within
// probe_timeout(). kPmtuMaxProbes lost probes of one size make it the new
// upper bound (binary search down to kPmtuGranularityBytes).

Duration Connection::Impl::probe_timeout() const {
  if (!ensemble) return ms(1000);
  const congestion::EnsembleStats es = ensemble->stats();
  return congestion::probe_timeout(es.srtt, es.rttvar, ms(config.peer.max_ack_delay_ms));
}

// ------------------------------------------------------------ ack and loss
//
// What a packet carried decides what its ACK or loss does, one handler per
// frame kind: stream chunks settle or requeue their bytes; control frames
// are requeued on loss only if still current (a requeued flag is always
// sent with the current value); the ACK frame, once acknowledged, lets the
// AckTracker forget what it covered.

// Loss handlers for control frames.
struct Connection::Impl::ControlLost {
  Impl& m;

  void operator()(const SentPing&) const {}  // a probe is never repeated
  void operator()(const SentStreamOpen& f) const {
    if (Stream* s = m.find(f.stream_id)) requeue(*s, s->open_pending);
  }
  void operator()(const SentStreamClass& f) const {
    Stream* s = m.find(f.stream_id);
    if (s && s->content_class == f.content_class) requeue(*s, s->class_pending);
  }
  void operator()(const SentMaxStreamData& f) const {
    // A newer value supersedes it (and is pending or sent already).
    Stream* s = m.find(f.stream_id);
    if (s && s->recv.max_stream_data() == f.maximum && !s->recv.final_size()) {
      requeue(*s, s->credit_pending);
      m.stream_credit_urgent = true;
    }
  }
  void operator()(const SentMaxData& f) const {
    if (m.recv_credit.maximum() == f.maximum) m.max_data_pending = true;
  }
  void operator()(const SentMaxStreams& f) const {
    if (m.local_max_streams == f.maximum) m.max_streams_pending = true;
  }
  void operator()(const SentReset& f) const {
    // Always current: the peer needs it to settle its credit.
    m.pending_resets.push_back(f.frame);
  }
  void operator()(const SentFlowOpen& f) const {
    Flow* flow = m.find_flow(f.flow_id);
    if (!flow || flow->open_acked || flow->open_pending) return;
    flow->open_pending = true;
    m.flow_opens_pending.push_back(f.flow_id);
  }
  void operator()(const SentFlowClose& f) const { m.queue_flow_close(f.frame); }

  void requeue(Stream& s, bool& pending_flag) const {
    pending_flag = true;
    m.mark_control(s);
  }
};

void Connection::Impl::on_packet_acked(PacketNumber number) {
  SentEntry* e = history.find(number);
  if (!e || e->state != SentState::in_flight) return;
  on_pmtu_packet_fate(*e, true);
  if (e->control_count > 0 && !flows.empty()) on_flow_controls_acked(*e);
  if (e->chunk_count > 0) {
    if (Stream* s = find(e->stream_id)) {
      for (std::uint32_t i = 0; i < e->chunk_count; ++i) {
        const SentChunk& c = history.chunk(*e, i);
        s->send.on_acked(c.offset, c.length, c.fin);
      }
      acked_streams.push_back(e->stream_id);
    }
  }
  if (e->carries_ack) ack_tracker.on_ack_acknowledged(e->largest_acked);
  history.mark_settled(*e);
}

// Requeues what the packet carried, if it still matters.
void Connection::Impl::on_packet_lost(PacketNumber number, Instant now) {
  SentEntry* e = history.find(number);
  if (!e || e->state != SentState::in_flight) return;
  ++recent_lost;
  on_pmtu_packet_fate(*e, false);
  stats.flows.datagrams_lost += e->datagram_count;  // gone for good: RFC 9221
  if (e->chunk_count > 0) {
    if (Stream* s = find(e->stream_id)) {
      for (std::uint32_t i = 0; i < e->chunk_count; ++i) {
        const SentChunk& c = history.chunk(*e, i);
        s->send.on_lost(c.offset, c.length, c.fin);
      }
      if (s->send.has_retransmission()) retransmit_streams.insert(s->id);
      if (s->send.too_fragmented()) {
        close_with_error(kErrorExcessiveLoad, "stream losses too fragmented");
      }
      update_backlog(*s, now);
    }
  }
  for (std::uint32_t i = 0; i < e->control_count; ++i) {
    std::visit(ControlLost{*this}, history.control(*e, i));
  }
  // Stream data stays recorded for a late ACK; nothing else needs it.
  if (e->chunk_count > 0) {
    history.mark_lost(*e, now);
  } else {
    history.mark_settled(*e);
  }
}

// An ACK for packets already declared lost: their data arrived after all.
// Only the streams learn it (the ensemble has settled those packets).
void Connection::Impl::on_late_ack(PacketNumber smallest, PacketNumber largest) {
  if (history.lost_count() == 0 || history.size() == 0) return;
  const PacketNumber from = std::max(smallest, history.front_number());
  const PacketNumber to = std::min(largest, history.next_number() - 1);
  for (PacketNumber n = from; n <= to && history.lost_count() > 0; ++n) {
    SentEntry* e = history.find(n);
    if (!e || e->state != SentState::lost) continue;
    if (Stream* s = find(e->stream_id)) {
      for (std::uint32_t i = 0; i < e->chunk_count; ++i) {
        const SentChunk& c = history.chunk(*e, i);
        s->send.on_acked(c.offset, c.length, c.fin);  // cancels the pending resend
      }
      if (!s->send.has_retransmission()) retransmit_streams.erase(s->id);
      acked_streams.push_back(s->id);
    }
    if (e->carries_ack) ack_tracker.on_ack_acknowledged(e->largest_acked);
    history.mark_settled(*e);
  }
}

void Connection::Impl::trim_history(Instant now) {
  if (history.lost_count() == 0 || !ensemble) {
    history.drop_front(Instant{}, kMaxDeclaredLostRecords);  // settled entries only
    return;
  }
  // A late ACK comes within a few PTOs of the loss or not at all.
  history.drop_front(now - 3 * probe_timeout(), kMaxDeclaredLostRecords);
}

// ------------------------------------------------------------ timers

std::optional<Instant> Connection::Impl::idle_deadline() const {
  return last_activity + config.idle_timeout;
}

// With streams open (or keep_alive), a PING every idle_timeout / 2 keeps a
// quiet but live connection (an idle proxied TCP session) from timing out.
std::optional<Instant> Connection::Impl::keepalive_deadline() const {
  if (streams.empty() && flows.empty() && !config.keep_alive) return std::nullopt;
  Instant since = last_activity;
  if (last_keepalive) since = std::max(since, *last_keepalive);
  const Duration half = config.idle_timeout / 2;
  const Duration interval = config.keep_alive_interval.count() > 0 ? std::min(config.keep_alive_interval, half) : half;
  return since + interval;
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
  consider(ensemble_retire_at);
  consider(idle_deadline());
  consider(keepalive_deadline());
  consider(pmtu_probe_due(Instant{}));
  if (pmtu.probe) consider(pmtu.probe_deadline);
  return earliest;
}

// A tail loss probe carries its member's data: a retransmission or new data
// if it has some, else the newest packet's data again, which repairs a
// single tail loss in one round trip (Linux TLP). The packet stays in
// flight; whichever copy is acknowledged first settles the bytes. The
// newest packet's control frames go again too (a stream's open, credit): a
// probe with the data but not the open it needs, or a PING for a lost
// control packet, left the peer waiting a round trip more for each loss
// (issue 20: a lossy page's request cost 1-3 s). Only without anything to
// carry does a PING elicit the ACK that lets the thresholds judge.
void Connection::Impl::arm_tail_probe(const congestion::SentPacket& newest, Instant now) {
  const SentEntry* e = history.find(newest.number);
  const bool in_flight = e && e->state == SentState::in_flight;
  if (in_flight) {
    for (std::uint32_t i = 0; i < e->control_count; ++i) {
      std::visit(ControlLost{*this}, history.control(*e, i));
    }
  }
  Stream* s = newest.member == kControlMember ? nullptr : find(newest.member);
  if (s && (s->send.has_retransmission() || s->send.has_new_data(send_credit.available()))) return;
  if (!s || !in_flight || e->chunk_count == 0) {
    if (!control_pending()) ping_pending = true;
    return;
  }
  for (std::uint32_t i = 0; i < e->chunk_count; ++i) {
    const SentChunk& c = history.chunk(*e, i);
    s->send.on_lost(c.offset, c.length, c.fin);
  }
  if (s->send.has_retransmission()) retransmit_streams.insert(s->id);
  update_backlog(*s, now);
}

// A request, a response or a keystroke lost on a lossy path waits at least
// a round trip: its loss is only found from later packets' ACKs, and a thin
// stream has none of its own (beside bulk the ensemble's later packets find
// it in ~1 RTT; alone, a PTO). On the WAN lab's 0.2 % loss that decided a
// request flow's p99 beside bulk (134-146 ms against ~65 for the few that
// lost a packet; the goal is +15). So when a packet leaves a stream with nothing more to send
// and at most one packet's worth unacknowledged, that data goes once more
// (as a retransmission: first in the send order, in the window and the
// pacer like any packet) while the path shows loss; a clean path sends
// nothing extra. Streams with more in flight have later packets of their
// own to reveal a loss, and a copy per packet would double a transfer.
void Connection::Impl::copy_thin_tail(Stream& s, const SentEntry& entry) {
  if (config.thin_stream_copy_loss_ppm == 0 || !path_lossy()) return;
  if (s.send.sent_end() != s.send.write_end() || s.send.has_retransmission()) return;
  if (s.send.has_new_data(std::numeric_limits<std::uint64_t>::max())) return;  // a FIN still to go
  const std::uint64_t unacked = s.send.unacked_bytes();
  const std::size_t payload = pmtu.current - kPacketHeaderBytes - protection->overhead();
  if (unacked == 0 || unacked > payload) return;
  s.send.resend_unacked();
  if (!s.send.has_retransmission()) return;
  retransmit_streams.insert(s.id);
  ++stats.thin_stream_copies;
  // A new stream's copy carries its open too (a page's request): the peer
  // holds data until the open arrives, and would wait for the original's
  // loss to be found after all.
  for (std::uint32_t i = 0; i < entry.control_count; ++i) {
    const auto* open = std::get_if<SentStreamOpen>(&history.control(entry, i));
    if (open && open->stream_id == s.id) ControlLost{*this}(*open);
  }
}

bool Connection::Impl::path_lossy() const {
  return std::uint64_t{recent_lost} * 1'000'000 >=
         std::uint64_t{config.thin_stream_copy_loss_ppm} * std::max<std::uint32_t>(recent_sent, 1);
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
      for (const congestion::SentPacket& p : outcome.lost) on_packet_lost(p.number, now);
      for (const congestion::SentPacket& p : outcome.probes) arm_tail_probe(p, now);
      // RFC 9002 6.2.4: a probe must go out even when nothing is left to resend.
      if (outcome.rto_fired && retransmit_streams.empty() && !control_pending()) {
        ping_pending = true;
      }
    }
  }
  if (pmtu.probe && now >= pmtu.probe_deadline) on_pmtu_probe_result(false, now);
  if (auto k = keepalive_deadline(); k && now >= *k) {
    ping_pending = true;
    last_keepalive = now;
  }
  trim_history(now);
  maybe_retire_ensemble(now);
}

}  // namespace egw::tunnel
