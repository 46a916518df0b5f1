// RTT estimation and the retransmission timeout for one congestion domain.
//
// Model (RFC 6298 section 2, with RFC 9002 section 5 refinements):
//  - before any sample: SRTT = initial_rtt, RTTVAR = initial_rtt / 2
//    (RFC 9002 6.2.2), so RTO = 3 * initial_rtt (~1 s for 333 ms);
//  - first sample R: SRTT = R, RTTVAR = R / 2 (RFC 6298 2.2);
//  - later samples R': RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R'|,
//                      SRTT   = 7/8 SRTT   + 1/8 R'           (RFC 6298 2.3);
//    R' is the ack-delay-adjusted sample: latest - ack_delay, but only when
//    that does not go below min_rtt (RFC 9002 5.3); min_rtt itself uses the
//    raw sample;
//  - RTO = max(min_rto, SRTT + max(G, 4 * RTTVAR)) (RFC 6298 2.4, 2.5), then
//    doubled once per expiry (5.5, exponential backoff) and capped at max_rto.
//    The backoff is cleared when new data is acknowledged (the caller says so:
//    packet numbers are never reused, so there is no Karn ambiguity).
// A cached PathState may seed the estimator (TCP fast start, careful resume);
// smoothing then continues from the seeded values.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/units.h"

namespace egw::congestion {

// RFC 9002 6.2.1: the probe timeout before any backoff, from an estimator's
// (or an EnsembleStats') smoothed RTT and variation and the peer's max ACK delay.
inline Duration probe_timeout(Duration srtt, Duration rttvar, Duration max_ack_delay,
                              Duration granularity = ms(1)) {
  return srtt + std::max(4 * rttvar, granularity) + max_ack_delay;
}

struct RttConfig {
  Duration initial_rtt = ms(333);
  Duration min_rto = ms(200);
  Duration max_rto = ms(60'000);
  Duration granularity = ms(1);  // RFC 6298 "G", RFC 9002 kGranularity
};

class RttEstimator {
 public:
  explicit RttEstimator(const RttConfig& config = {});

  // One RTT sample: `latest` = ack time - send time of the largest newly
  // acknowledged ack-eliciting packet; `ack_delay` as reported by the peer.
  void on_sample(Duration latest, Duration ack_delay);
  // Seed from a cached path state; zero values are ignored.
  void seed(Duration srtt, Duration rttvar, Duration min_rtt);

  bool has_sample() const { return has_sample_; }
  Duration latest_rtt() const { return latest_; }
  Duration srtt() const { return srtt_; }
  Duration rttvar() const { return rttvar_; }
  // Zero until the first sample (or seed).
  Duration min_rtt() const { return min_rtt_; }

  // The current RTO including backoff.
  Duration rto() const;
  // The PTO without backoff (probe_timeout above).
  Duration pto(Duration max_ack_delay) const {
    return probe_timeout(srtt_, rttvar_, max_ack_delay, config_.granularity);
  }
  // The RTO expired: double the next one (RFC 6298 5.5).
  void on_rto_expired();
  // New data was acknowledged: forget the backoff.
  void reset_backoff() { backoff_ = 0; }
  std::uint32_t backoff() const { return backoff_; }

 private:
  RttConfig config_;
  bool has_sample_ = false;
  Duration latest_{0};
  Duration srtt_;
  Duration rttvar_;
  Duration min_rtt_{0};
  std::uint32_t backoff_ = 0;
};

}  // namespace egw::congestion
