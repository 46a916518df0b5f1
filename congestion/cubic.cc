#include "congestion/cubic.h"

#include <algorithm>
#include <cmath>

namespace egw::congestion {

Cubic::Cubic(const WindowLawParams& params, bool fast_convergence)
    : params_(params),
      fast_convergence_(fast_convergence),
      cwnd_(static_cast<double>(params.initial_cwnd_bytes)) {}

double Cubic::beta_for(std::uint32_t n_flows) {
  const double n = std::max<std::uint32_t>(n_flows, 1);
  return (n - 1.0 + kBeta) / n;
}

double Cubic::c_for(std::uint32_t n_flows) {
  return kC * std::max<std::uint32_t>(n_flows, 1);
}

double Cubic::w_cubic_bytes(double t_seconds) const {
  const double d = t_seconds - k_seconds_;
  return c_epoch_ * static_cast<double>(params_.max_datagram_bytes) * d * d * d + w_max_;
}

void Cubic::start_epoch(Instant now, std::uint32_t n_flows) {
  epoch_start_ = now;
  c_epoch_ = c_for(n_flows);
  const double mss = static_cast<double>(params_.max_datagram_bytes);
  if (w_max_ <= cwnd_) {
    w_max_ = cwnd_;
    k_seconds_ = 0;
  } else {
    k_seconds_ = std::cbrt((w_max_ - cwnd_) / mss / c_epoch_);
  }
  w_est_ = cwnd_;
}

void Cubic::on_ack(ByteCount acked_bytes, const RttInfo& rtt, Instant now,
                   std::uint32_t n_flows) {
  if (acked_bytes == 0) return;
  n_flows = std::max<std::uint32_t>(n_flows, 1);
  const double acked = static_cast<double>(acked_bytes);
  if (cwnd_ < static_cast<double>(ssthresh_)) {
    // Slow start (RFC 9438 4.10 keeps RFC 5681 slow start).
    cwnd_ = std::min(cwnd_ + acked, static_cast<double>(ssthresh_));
    return;
  }
  if (!epoch_start_) start_epoch(now, n_flows);
  const double mss = static_cast<double>(params_.max_datagram_bytes);
  const double t = to_seconds(now - *epoch_start_);
  const double rtt_s = to_seconds(rtt.srtt > Duration{0} ? rtt.srtt : rtt.latest);

  // Reno-friendly estimate (4.3), n flows each adding alpha per RTT.
  const double alpha_one = (cwnd_prior_ > 0 && w_est_ < cwnd_prior_)
                               ? 3.0 * (1.0 - kBeta) / (1.0 + kBeta)
                               : 1.0;
  w_est_ += n_flows * alpha_one * mss * acked / cwnd_;

  if (w_cubic_bytes(t) < w_est_) {
    cwnd_ = std::max(cwnd_, w_est_);
    return;
  }
  const double target = std::clamp(w_cubic_bytes(t + rtt_s), cwnd_, 1.5 * cwnd_);
  cwnd_ += (target - cwnd_) * acked / cwnd_;
}

void Cubic::on_congestion_event(Instant /*now*/, std::uint32_t n_flows) {
  reduce(beta_for(n_flows));
}

void Cubic::reduce(double beta) {
  cwnd_prior_ = cwnd_;
  if (fast_convergence_ && cwnd_ < w_max_) {
    w_max_ = cwnd_ * (1.0 + beta) / 2.0;
  } else {
    w_max_ = cwnd_;
  }
  const double reduced = std::max(cwnd_ * beta, static_cast<double>(params_.min_cwnd_bytes));
  ssthresh_ = static_cast<ByteCount>(std::llround(reduced));  // 27600 * 0.7 is 19319.999...
  cwnd_ = static_cast<double>(ssthresh_);
  epoch_start_.reset();
}

void Cubic::on_congestion_events(Instant /*now*/, std::uint32_t n_flows, std::uint32_t count) {
  reduce_batch(beta_for(n_flows), count);
}

void Cubic::on_random_loss_events(Instant /*now*/, std::uint32_t n_flows, std::uint32_t count) {
  // Veno cuts 1/5 where Reno cuts 1/2: the same fraction of CUBIC's cut.
  reduce_batch(1.0 - (1.0 - beta_for(n_flows)) * kRandomLossCutShare, count);
}

void Cubic::reduce_batch(double beta, std::uint32_t count) {
  if (count == 0) return;
  reduce(beta);  // W_max from the window before the batch
  // Each further member multiplies by beta once more; W_max stays (n flows
  // that each back off keep their own W_max, which add up to this one).
  for (std::uint32_t i = 1; i < count; ++i) {
    cwnd_ = std::max(cwnd_ * beta, static_cast<double>(params_.min_cwnd_bytes));
  }
  ssthresh_ = static_cast<ByteCount>(std::llround(cwnd_));
  cwnd_ = static_cast<double>(ssthresh_);
}

void Cubic::on_rto(ByteCount /*bytes_in_flight*/, std::uint32_t n_flows) {
  const double reduced = std::max(cwnd_ * beta_for(n_flows),
                                  2.0 * static_cast<double>(params_.max_datagram_bytes));
  ssthresh_ = static_cast<ByteCount>(std::llround(reduced));
  cwnd_prior_ = cwnd_;
  cwnd_ = static_cast<double>(params_.max_datagram_bytes);
  w_max_ = 0;  // 4.8: K = 0 and W_max = cwnd at the start of the next epoch
  epoch_start_.reset();
}

void Cubic::on_idle_ended(Duration idle) {
  // Linux bictcp_cwnd_event(CA_EVENT_TX_START): the epoch moves by the idle
  // time, so W_cubic(t) continues where it stopped instead of jumping ahead.
  if (epoch_start_) *epoch_start_ += idle;
}

void Cubic::set_state(ByteCount cwnd_bytes, ByteCount ssthresh_bytes) {
  cwnd_ = static_cast<double>(std::max(cwnd_bytes, params_.max_datagram_bytes));
  ssthresh_ = ssthresh_bytes == 0 ? kInfiniteSsthresh : ssthresh_bytes;
  w_max_ = 0;
  cwnd_prior_ = 0;
  w_est_ = 0;
  epoch_start_.reset();
}

}  // namespace egw::congestion
