// How large a bulk packet may be while a call runs (issue 21).
//
// On a slow path the packet in service at the bottleneck is what a call's
// datagram waits for: the gateway puts the datagram first (strict
// precedence, past the pacer's slot), but a 1,500-byte packet that started
// just before it takes 12 ms at 1 Mbit/s, above the call's whole delay
// budget. So while a realtime member has sent within `hold`, every packet
// of the other members is built small enough to take at most
// `serialisation_budget` on the wire at the path's rate (the rate the law
// measured, or max_rate when it is lower), never below `floor_bytes`. On a
// fast path the size in use already fits and nothing changes; when the
// call ends the packets are full size again after `hold`.
//
// The cost is headers: ~70 bytes a packet (IP/UDP, the tunnel's header
// and tag, a STREAM frame's header) are 5 % of 1,472 bytes and 12 % of 576.
// So the size also follows the call's cadence: a call sends a datagram every
// 10-60 ms (an audio frame), and a packet that leaves well before the next
// one is due delays it by no more than what it takes past that instant. With
// the shortest of the last gaps between realtime packets (a silence, a second
// call, a video frame's burst only shorten it), a packet built at `now` may
// take the budget plus the time left until the next realtime packet is due,
// less `cadence_margin` for the call's jitter: on a 1 Mbit/s uplink beside a
// 20 ms call, a full packet right after each call datagram, then smaller
// ones, instead of 576-byte packets throughout.
//
// Sans-IO: times and the rate come in; the answer is a size.
#pragma once

#include <array>
#include <cstddef>
#include <optional>

#include "common/units.h"
#include "congestion/ensemble_config.h"

namespace egw::congestion {

class RealtimePackets {
 public:
  // IPv4 and UDP headers: what a datagram adds on the wire.
  static constexpr ByteCount kIpUdpHeaderBytes = 28;

  explicit RealtimePackets(const RealtimePacketsConfig& config) : config_(config) {}

  // A realtime member's packet left.
  void on_realtime_sent(Instant now);
  // A realtime packet left within `hold` of now (and the feature is on).
  bool active(Instant now) const;
  // The largest datagram (UDP payload) a non-realtime packet may be while
  // active, for a path of `rate_bytes_per_s` (0: unknown, no limit) and
  // `max_datagram_bytes` in use, built at `now`.
  ByteCount limit(double rate_bytes_per_s, ByteCount max_datagram_bytes, Instant now) const;
  // The shortest of the last kGaps gaps between realtime packets, once that
  // many were seen (none before: no cadence to go by).
  std::optional<Duration> cadence() const;

  static constexpr std::size_t kGaps = 8;

 private:
  RealtimePacketsConfig config_;
  std::optional<Instant> last_sent_;
  std::array<Duration, kGaps> gaps_{};
  std::size_t gaps_seen_ = 0;
};

}  // namespace egw::congestion
