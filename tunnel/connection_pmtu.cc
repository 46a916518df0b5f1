// Connection: path MTU discovery (DPLPMTUD, RFC 8899). Probes are PING +
// PADDING packets of the size under test, outside the ensemble's window
// (their loss says nothing about congestion); a binary search between the
// base size and the peer's ceiling, a raise timer, and black-hole detection
// when full-size packets keep getting lost.
#include <algorithm>

#include "tunnel/connection_impl.h"
#include "tunnel/frame_codec.h"
#include "tunnel/packet_header.h"

namespace egw::tunnel {

// When the next probe may go: nullopt when none is wanted.
std::optional<Instant> Connection::Impl::pmtu_probe_due(Instant) const {
  if (!pmtu.enabled || closed || pmtu.probe) return std::nullopt;
  // The first search starts as soon as the connection is up, streams or
  // not: a gateway's tunnel is up long before its first stream, whose first
  // response must neither queue behind a probe nor leave in base-size
  // packets (the WAN lab saw 30 ms more on a first page's HTML at 800
  // kbit/s). Later searches (raising, after a black hole) run in busy periods.
  if (!pmtu.first_search_done) return Instant{};
  if (!ensemble || streams.empty()) return std::nullopt;
  if (!pmtu.searching()) return pmtu.next_search;
  return Instant{};  // at once
}

std::optional<Transmit> Connection::Impl::build_pmtu_probe(Instant now,
                                                           std::span<std::byte> buffer) {
  if (!pmtu.searching()) {
    // The raise timer: search again above what works (the path may have grown).
    pmtu.next_search.reset();
    pmtu.high = std::min<ByteCount>(config.pmtu_probe_ceiling_bytes,
                                    config.peer.max_datagram_bytes) + 1;
    pmtu.failures = 0;
    pmtu.probe_size = pmtu.high - 1;
    if (!pmtu.searching()) return std::nullopt;
  }
  const ByteCount size = pmtu.probe_size;
  const ByteCount overhead = kPacketHeaderBytes + protection->overhead();
  if (buffer.size() < size || size <= overhead + 1) {
    pmtu.enabled = false;  // the driver's buffers cannot carry probes
    return std::nullopt;
  }
  if (next_packet_number == next_skip) skip_packet_number();
  WireWriter w(buffer.subspan(kPacketHeaderBytes, size - overhead));
  encode_frame(w, PingFrame{});
  encode_frame(w, PaddingFrame{w.remaining()});
  history.begin(next_packet_number);  // settled: the ensemble never sees it
  pmtu.probe = next_packet_number;
  pmtu.probe_size = size;
  pmtu.probe_deadline = now + probe_timeout();
  ++stats.pmtu_probes_sent;
  Transmit t{seal(buffer, w.written()), false, true};
  if (ensemble) ensemble->on_unscheduled_sent(now, t.bytes);
  return t;
}

void Connection::Impl::on_pmtu_probe_result(bool acked, Instant now) {
  const ByteCount size = pmtu.probe_size;
  pmtu.probe.reset();
  if (acked) {
    pmtu.low = std::max(pmtu.low, size);
    set_pmtu_current(pmtu.low);
    pmtu.failures = 0;
  } else {
    ++stats.pmtu_probes_lost;
    if (++pmtu.failures >= kPmtuMaxProbes) {
      pmtu.high = size;
      pmtu.failures = 0;
    }
  }
  if (pmtu.searching()) {
    // Next size: the middle of what is still unknown (the same again after
    // a loss that did not settle it yet).
    if (pmtu.failures == 0) pmtu.probe_size = pmtu.low + (pmtu.high - pmtu.low) / 2;
  } else {
    pmtu.first_search_done = true;
    pmtu.next_search = now + kPmtuRaiseInterval;
  }
}

// The ensemble counts its window in datagrams of the size in use (RFC 9002
// 7.2: the initial window is recalculated when the size changes), and so
// does every ensemble a later busy period starts.
void Connection::Impl::set_pmtu_current(ByteCount bytes) {
  pmtu.current = bytes;
  config.ensemble.max_datagram_bytes = bytes;  // for ensembles started later
  if (ensemble) ensemble->set_max_datagram_bytes(bytes);
}

// Black-hole detection: packets above the base lost again and again, none
// of them acknowledged, mean the path no longer carries the current size.
void Connection::Impl::on_pmtu_packet_fate(const SentEntry& e, bool acked) {
  if (!pmtu.enabled || e.bytes <= pmtu.base) return;
  if (acked) {
    pmtu.large_losses = 0;
    return;
  }
  if (++pmtu.large_losses < kPmtuBlackHoleLosses) return;
  ++stats.pmtu_black_holes;
  pmtu.large_losses = 0;
  pmtu.high = std::min<ByteCount>(pmtu.high, pmtu.current);
  pmtu.low = pmtu.base;
  set_pmtu_current(pmtu.base);
  pmtu.failures = 0;
  pmtu.probe_size = pmtu.low + (pmtu.high - pmtu.low) / 2;
  pmtu.probe.reset();
}

}  // namespace egw::tunnel
