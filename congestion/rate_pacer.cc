#include "congestion/rate_pacer.h"

#include <algorithm>
#include <cmath>

namespace egw::congestion {

namespace {
// ~1 ms of sending at the rate may go back to back.
constexpr double kBurstSeconds = 0.001;
constexpr double kMinBurstPackets = 2.0;
}  // namespace

double RatePacer::burst_bytes(double rate_bytes_per_s, ByteCount max_datagram_bytes) {
  return std::max(kMinBurstPackets * static_cast<double>(max_datagram_bytes),
                  rate_bytes_per_s * kBurstSeconds);
}

double RatePacer::tokens_at(Instant now, double rate, ByteCount mss) const {
  const double depth = burst_bytes(rate, mss);
  if (!updated_) return depth;
  // A bucket above its depth (an initial burst) only drains; below, it fills
  // up to the depth and no further: idle time is not banked.
  if (tokens_bytes_ >= depth || now <= *updated_) return tokens_bytes_;
  const double filled = tokens_bytes_ + rate * to_seconds(now - *updated_);
  return std::min(depth, filled);
}

bool RatePacer::can_send(Instant now, double rate, ByteCount bytes, ByteCount mss) const {
  // Half a byte of slack: next_release's instant must pass, whatever the rounding.
  return rate <= 0 || tokens_at(now, rate, mss) + 0.5 >= static_cast<double>(bytes);
}

Instant RatePacer::next_release(Instant now, double rate, ByteCount bytes, ByteCount mss) const {
  if (can_send(now, rate, bytes, mss)) return now;
  const double missing = static_cast<double>(bytes) - tokens_at(now, rate, mss);
  // Round up to the microsecond, so the bucket is full enough at the instant.
  const auto wait = std::chrono::duration<double, std::micro>(std::ceil(missing / rate * 1e6));
  return now + std::chrono::duration_cast<Duration>(wait);
}

void RatePacer::on_sent(Instant now, double rate, ByteCount bytes, ByteCount mss) {
  const double depth = burst_bytes(rate, mss);
  // A packet that went unpaced (a probe) may leave the bucket in debt, but
  // never more than one depth: the debt is paid at the rate, not banked.
  tokens_bytes_ = std::max(-depth, tokens_at(now, rate, mss) - static_cast<double>(bytes));
  updated_ = now;
}

void RatePacer::allow_burst(Instant now, ByteCount bytes) {
  tokens_bytes_ = std::max(tokens_bytes_, static_cast<double>(bytes));
  updated_ = now;
}

}  // namespace egw::congestion
