#include "congestion/newreno.h"

#include <algorithm>

namespace egw::congestion {

NewReno::NewReno(const WindowLawParams& params)
    : params_(params), cwnd_(params.initial_cwnd_bytes) {}

void NewReno::on_ack(ByteCount acked_bytes, const RttInfo& /*rtt*/, Instant /*now*/,
                     std::uint32_t n_flows) {
  if (acked_bytes == 0) return;
  n_flows = std::max<std::uint32_t>(n_flows, 1);
  if (cwnd_ < ssthresh_) {
    const ByteCount room = ssthresh_ - cwnd_;
    if (acked_bytes <= room) {
      cwnd_ += acked_bytes;
      return;
    }
    cwnd_ = ssthresh_;
    acked_bytes -= room;  // the rest counts in congestion avoidance
  }
  // n flows with windows cwnd/n each add one SMSS per own window acked: the
  // aggregate adds one SMSS per cwnd/n bytes acked, spread over the window
  // rather than n SMSS at once (a burst of n extra packets that a full
  // drop-tail queue drops together, charging n members at once).
  const ByteCount window = cwnd_;
  ca_acked_bytes_ += acked_bytes * n_flows;
  while (ca_acked_bytes_ >= window && window > 0) {
    ca_acked_bytes_ -= window;
    cwnd_ += params_.max_datagram_bytes;
  }
}

void NewReno::on_congestion_event(Instant /*now*/, std::uint32_t n_flows) { decrease(n_flows, 2); }

void NewReno::on_random_loss_events(Instant /*now*/, std::uint32_t n_flows, std::uint32_t count) {
  for (std::uint32_t i = 0; i < count; ++i) decrease(n_flows, 5);
}

void NewReno::decrease(std::uint32_t n_flows, std::uint32_t divisor) {
  // cwnd * (1 - 1/(d n)) = cwnd * (d n - 1) / (d n)
  const ByteCount parts = divisor * std::max<std::uint32_t>(n_flows, 1);
  const ByteCount reduced = cwnd_ / parts * (parts - 1) + cwnd_ % parts * (parts - 1) / parts;
  ssthresh_ = std::max(reduced, params_.min_cwnd_bytes);
  cwnd_ = ssthresh_;
  ca_acked_bytes_ = 0;
}

void NewReno::on_rto(ByteCount bytes_in_flight, std::uint32_t /*n_flows*/) {
  ssthresh_ = std::max(bytes_in_flight / 2, 2 * params_.max_datagram_bytes);
  cwnd_ = params_.max_datagram_bytes;
  ca_acked_bytes_ = 0;
}

void NewReno::set_state(ByteCount cwnd_bytes, ByteCount ssthresh_bytes) {
  cwnd_ = std::max(cwnd_bytes, params_.max_datagram_bytes);
  ssthresh_ = ssthresh_bytes == 0 ? kInfiniteSsthresh : ssthresh_bytes;
  ca_acked_bytes_ = 0;
}

}  // namespace egw::congestion
