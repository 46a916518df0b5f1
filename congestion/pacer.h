// Rate pacing with small bursts (EFCM section 2.4.3, TCP fast start).
//
// EFCM sends at most `max_burst_packets` (2) segments back to back and spaces
// consecutive bursts by
//     dt = alpha * SRTT / CWND        (CWND in segments)
// so with alpha = 2 and bursts of 2 one window goes out per SRTT; alpha = 1
// sends twice as fast. EFCM appendix C: alpha should grow with SRTT from about
// 1 (SRTT below ~60 ms, where pacing at 2 was too conservative) to 2; we ramp
// it linearly from alpha_min at 20 ms to alpha_max at 100 ms.
//
// The Pacer itself only remembers when the current burst started and how many
// packets it holds; the interval is passed in on every call, so the answer is
// a pure function of (state, interval, now) and callers may pace different
// things (an idle restart, a resumed window, a joiner's share) with their own
// rates.
#pragma once

#include <cstdint>
#include <optional>

#include "common/units.h"
#include "congestion/ensemble_config.h"

namespace egw::congestion {

// alpha(SRTT) of EFCM appendix C, between config.alpha_min and alpha_max.
double efcm_alpha(const PacingConfig& config, Duration srtt);

// EFCM's burst interval alpha(SRTT) * SRTT / (cwnd / MSS); at least 1 us.
Duration efcm_burst_interval(const PacingConfig& config, Duration srtt, ByteCount cwnd_bytes,
                             ByteCount max_datagram_bytes);

// The interval that sends `window_bytes` in bursts of `max_burst_packets`
// spread evenly over `period` (careful resume: one window per SRTT).
Duration burst_interval_for(ByteCount window_bytes, Duration period, std::uint32_t max_burst_packets,
                            ByteCount max_datagram_bytes);

class Pacer {
 public:
  explicit Pacer(std::uint32_t max_burst_packets = 2);

  // May one more packet leave at `now`, with bursts spaced `interval` apart?
  bool can_send(Instant now, Duration interval) const;
  // The earliest instant >= now at which can_send becomes true.
  Instant next_release(Instant now, Duration interval) const;
  void on_sent(Instant now, Duration interval);
  // Forget the past: the next packet starts a fresh burst.
  void reset();

 private:
  std::uint32_t max_burst_packets_;
  std::optional<Instant> burst_start_;
  std::uint32_t in_burst_ = 0;
};

}  // namespace egw::congestion
