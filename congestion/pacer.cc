#include "congestion/pacer.h"

#include <algorithm>

namespace egw::congestion {

namespace {
constexpr Duration kAlphaLowSrtt = ms(20);
constexpr Duration kAlphaHighSrtt = ms(100);
}  // namespace

double efcm_alpha(const PacingConfig& config, Duration srtt) {
  if (srtt <= kAlphaLowSrtt) return config.alpha_min;
  if (srtt >= kAlphaHighSrtt) return config.alpha_max;
  const double f = static_cast<double>((srtt - kAlphaLowSrtt).count()) /
                   static_cast<double>((kAlphaHighSrtt - kAlphaLowSrtt).count());
  return config.alpha_min + f * (config.alpha_max - config.alpha_min);
}

Duration efcm_burst_interval(const PacingConfig& config, Duration srtt, ByteCount cwnd_bytes,
                             ByteCount max_datagram_bytes) {
  const double cwnd_packets =
      std::max(1.0, static_cast<double>(cwnd_bytes) / static_cast<double>(std::max<ByteCount>(max_datagram_bytes, 1)));
  const double dt_us = efcm_alpha(config, srtt) * static_cast<double>(srtt.count()) / cwnd_packets;
  return std::max(us(1), us(static_cast<std::int64_t>(dt_us)));
}

Duration burst_interval_for(ByteCount window_bytes, Duration period, std::uint32_t max_burst_packets,
                            ByteCount max_datagram_bytes) {
  const ByteCount mss = std::max<ByteCount>(max_datagram_bytes, 1);
  const ByteCount packets = std::max<ByteCount>(1, (window_bytes + mss - 1) / mss);
  const ByteCount bursts = std::max<ByteCount>(1, (packets + max_burst_packets - 1) /
                                                      std::max<std::uint32_t>(max_burst_packets, 1));
  return std::max(us(1), period / static_cast<std::int64_t>(bursts));
}

Pacer::Pacer(std::uint32_t max_burst_packets)
    : max_burst_packets_(std::max<std::uint32_t>(max_burst_packets, 1)) {}

bool Pacer::can_send(Instant now, Duration interval) const {
  return now >= next_release(now, interval);
}

Instant Pacer::next_release(Instant now, Duration interval) const {
  if (!burst_start_ || in_burst_ < max_burst_packets_) return now;
  return std::max(now, *burst_start_ + interval);
}

void Pacer::on_sent(Instant now, Duration interval) {
  // A new burst starts when the current one is full or its slot has passed.
  if (!burst_start_ || in_burst_ >= max_burst_packets_ || now >= *burst_start_ + interval) {
    // Keep the schedule when a burst was on time; never bank idle time.
    burst_start_ = (burst_start_ && in_burst_ >= max_burst_packets_)
                       ? std::max(now, *burst_start_ + interval)
                       : now;
    in_burst_ = 1;
    return;
  }
  ++in_burst_;
}

void Pacer::reset() {
  burst_start_.reset();
  in_burst_ = 0;
}

}  // namespace egw::congestion
