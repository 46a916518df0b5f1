// The queueing delay of the ACK path, measured one way (issue 20, the
// asymmetric line). A peer that reads ACK timestamps (transport parameter
// kFlagAckTimestamps) stamps each ACK with its own clock at sending; here
// `now - stamp` is the ACK's one-way delay plus the two clocks' offset. The
// offset is unknown but constant (drift: tens of ppm, under a millisecond
// per window), so its windowed minimum is the empty ACK path and the excess
// over it is the ACK's wait in a queue: on the 4 / 1 Mbit/s line the
// download's ACKs wait behind the upload's 25-50 ms on the uplink, and a
// round trip only tells the hub it is longer than min RTT, not which way.
//
// The minimum spans two buckets of kBucket (5-10 s, as BBR's min_rtt): a
// reverse queue that never drains for that long reads short, the
// conservative error. A sample is bounded by the round trip's own excess
// over min RTT: a stamp from a restarted peer (a new epoch) or a stepped
// clock can only attribute the RTT's excess to the ACK path, never more,
// until the minimum catches up.
#pragma once

#include <algorithm>
#include <optional>

#include "common/units.h"

namespace egw::congestion {

class AckPathMeter {
 public:
  static constexpr Duration kBucket = std::chrono::seconds(5);

  // One ACK stamped `peer_sent_at` (the peer's clock, any epoch), received
  // at `now`, whose round trip sample (if it gave one) exceeded min RTT by
  // `rtt_excess`. Returns the ACK's wait above the path's minimum, or
  // nullopt without an RTT sample to bound it.
  std::optional<Duration> on_ack(Instant now, Duration peer_sent_at, std::optional<Duration> rtt_excess) {
    const Duration one_way = now.time_since_epoch() - peer_sent_at;  // + offset
    if (!started_ || now - bucket_start_ >= kBucket) {
      previous_ = started_ && now - bucket_start_ < 2 * kBucket ? current_ : one_way;
      current_ = one_way;
      bucket_start_ = now;
      started_ = true;
    }
    current_ = std::min(current_, one_way);
    if (!rtt_excess) return std::nullopt;
    const Duration excess = one_way - std::min(current_, previous_);
    return std::clamp(excess, Duration{0}, std::max(*rtt_excess, Duration{0}));
  }

 private:
  bool started_ = false;
  Instant bucket_start_{};
  Duration current_{0};
  Duration previous_{0};
};

}  // namespace egw::congestion
