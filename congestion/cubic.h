// CUBIC window law (RFC 9438), for an aggregate that emulates n flows.
//
// Single flow (n = 1), in segments of MSS, t in seconds since the current
// congestion avoidance epoch began:
//   W_cubic(t) = C * (t - K)^3 + W_max                       (4.2, eq. 1)
//   K = cbrt((W_max - cwnd_epoch) / C)                        (4.2, eq. 2)
//   target = W_cubic(t + SRTT) clamped to [cwnd, 1.5 * cwnd]  (4.4, 4.5)
//   per ack: cwnd += (target - cwnd) / cwnd * segments_acked
//   Reno-friendly region (4.3): W_est += alpha * segments_acked / cwnd,
//     alpha = 3 (1 - beta) / (1 + beta), 1 once W_est >= cwnd_prior;
//     if W_cubic(t) < W_est then cwnd = W_est.
//   congestion event (4.6, 4.7): W_max = cwnd, or cwnd * (1 + beta) / 2 with
//     fast convergence when cwnd < the previous W_max; ssthresh = cwnd * beta.
//   random loss (TCP Veno's idea): beta' = 1 - 0.4 (1 - beta), the share
//     of the cut Veno keeps of Reno's (1/5 of 1/2);
//   timeout (4.8): ssthresh = cwnd * beta, cwnd = 1 MSS; the next epoch
//     starts with K = 0 and W_max = cwnd at its start.
//   When an epoch starts with cwnd >= W_max (slow start ended without loss),
//   W_max = cwnd_epoch and K = 0, as after a timeout.
// Constants: beta = 0.7, C = 0.4 (section 5.1).
//
// n emulated flows: beta_n = (n - 1 + beta) / n, C_n = n * C, alpha_n = n * alpha.
// This is an approximation of n CUBIC flows sharing the window: one of the n
// flows backs off by (1 - beta) of its 1/n share, and n cubic curves growing in
// step add up to one curve n times as steep. Real flows would have separate
// epochs and K values; the aggregate keeps one.
#pragma once

#include <optional>

#include "congestion/window_law.h"

namespace egw::congestion {

class Cubic final : public WindowLaw {
 public:
  static constexpr double kBeta = 0.7;
  static constexpr double kC = 0.4;
  // A random loss (TCP Veno) cuts this share of a congestion event's cut:
  // 1/5 of the window where Reno would halve, so 0.88 for beta = 0.7.
  static constexpr double kRandomLossCutShare = 0.4;

  explicit Cubic(const WindowLawParams& params, bool fast_convergence = true);

  ByteCount cwnd_bytes() const override { return static_cast<ByteCount>(cwnd_); }
  ByteCount ssthresh_bytes() const override { return ssthresh_; }
  void on_ack(ByteCount acked_bytes, const RttInfo& rtt, Instant now,
              std::uint32_t n_flows) override;
  void on_congestion_event(Instant now, std::uint32_t n_flows) override;
  void on_congestion_events(Instant now, std::uint32_t n_flows, std::uint32_t count) override;
  void on_random_loss_events(Instant now, std::uint32_t n_flows, std::uint32_t count) override;
  void on_rto(ByteCount bytes_in_flight, std::uint32_t n_flows) override;
  void on_idle_ended(Duration idle) override;
  void set_state(ByteCount cwnd_bytes, ByteCount ssthresh_bytes) override;
  // An epoch under way keeps its K and W_max; from now on its curve counts
  // segments of the new size (RFC 9438 works in segments).
  void set_params(const WindowLawParams& params) override { params_ = params; }

  static double beta_for(std::uint32_t n_flows);
  static double c_for(std::uint32_t n_flows);

  // Diagnostics for tests: the current epoch's K (seconds) and W_max (bytes),
  // and W_cubic(t) in bytes for t seconds into the epoch.
  double k_seconds() const { return k_seconds_; }
  double w_max_bytes() const { return w_max_; }
  double w_est_bytes() const { return w_est_; }
  double w_cubic_bytes(double t_seconds) const;
  bool in_epoch() const { return epoch_start_.has_value(); }

 private:
  void start_epoch(Instant now, std::uint32_t n_flows);
  void reduce(double beta);  // one congestion event with this beta (4.6, 4.7)
  void reduce_batch(double beta, std::uint32_t count);

  WindowLawParams params_;
  bool fast_convergence_;
  double cwnd_;  // bytes, fractional so small per-ack increments add up
  ByteCount ssthresh_ = kInfiniteSsthresh;
  double w_max_ = 0;       // bytes; 0 = no congestion event remembered
  double cwnd_prior_ = 0;  // cwnd just before the last reduction, bytes
  std::optional<Instant> epoch_start_;
  double k_seconds_ = 0;
  double c_epoch_ = kC;  // C_n of the current epoch
  double w_est_ = 0;     // Reno-friendly estimate, bytes
};

}  // namespace egw::congestion
