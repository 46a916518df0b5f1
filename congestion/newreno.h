// NewReno window law (RFC 5681 section 3.1, with RFC 9002 7.3 byte counting),
// generalised to an aggregate that emulates n flows (EFCM).
//
//  - slow start (cwnd < ssthresh): cwnd += acked bytes; the part of an ack
//    that would cross ssthresh is counted towards congestion avoidance;
//  - congestion avoidance: cwnd += n * MSS each time a full cwnd of bytes has
//    been acknowledged (RFC 5681 3.1 byte counting; n flows each add one MSS
//    per RTT);
//  - congestion event: one of n emulated flows halves, so the aggregate keeps
//    cwnd * (1 - 1/(2n)) (n = 1: halve; n = 4: 7/8). ssthresh = that, floored
//    at min_cwnd. Computed from cwnd, not FlightSize (RFC 9002 7.3.2);
//  - random loss (TCP Veno, Fu & Liew 2003): the aggregate keeps
//    cwnd * (1 - 1/(5n)) (n = 1: Veno's 4/5);
//  - RTO: ssthresh = max(FlightSize / 2, 2 * MSS), cwnd = 1 MSS (RFC 5681
//    3.1 equation 4 and the loss window LW).
#pragma once

#include "congestion/window_law.h"

namespace egw::congestion {

class NewReno final : public WindowLaw {
 public:
  explicit NewReno(const WindowLawParams& params);

  ByteCount cwnd_bytes() const override { return cwnd_; }
  ByteCount ssthresh_bytes() const override { return ssthresh_; }
  void on_ack(ByteCount acked_bytes, const RttInfo& rtt, Instant now,
              std::uint32_t n_flows) override;
  void on_congestion_event(Instant now, std::uint32_t n_flows) override;
  void on_random_loss_events(Instant now, std::uint32_t n_flows, std::uint32_t count) override;
  void on_rto(ByteCount bytes_in_flight, std::uint32_t n_flows) override;
  void set_state(ByteCount cwnd_bytes, ByteCount ssthresh_bytes) override;
  void set_params(const WindowLawParams& params) override { params_ = params; }

 private:
  WindowLawParams params_;
  ByteCount cwnd_;
  ByteCount ssthresh_ = kInfiniteSsthresh;
  ByteCount ca_acked_bytes_ = 0;  // bytes acked towards the next CA increase

  // cwnd * (1 - 1/(divisor * n)), floored at min_cwnd, becomes cwnd and ssthresh.
  void decrease(std::uint32_t n_flows, std::uint32_t divisor);
};

}  // namespace egw::congestion
