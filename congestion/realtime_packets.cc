#include "congestion/realtime_packets.h"

#include <algorithm>

namespace egw::congestion {

bool RealtimePackets::active(Instant now) const {
  return config_.serialisation_budget > Duration{0} && last_sent_ && now - *last_sent_ <= config_.hold;
}

void RealtimePackets::on_realtime_sent(Instant now) {
  if (last_sent_ && now >= *last_sent_) gaps_[gaps_seen_++ % kGaps] = now - *last_sent_;
  last_sent_ = now;
}

std::optional<Duration> RealtimePackets::cadence() const {
  if (gaps_seen_ < kGaps) return std::nullopt;
  return *std::min_element(gaps_.begin(), gaps_.end());
}

ByteCount RealtimePackets::limit(double rate_bytes_per_s, ByteCount max_datagram_bytes, Instant now) const {
  if (rate_bytes_per_s <= 0) return max_datagram_bytes;
  Duration on_wire = config_.serialisation_budget;
  if (const auto gap = cadence(); gap && last_sent_) {
    // The next realtime packet is due at last + gap; what ends before it
    // (less the margin for its jitter) delays nothing.
    const Instant due = *last_sent_ + *gap - config_.cadence_margin;
    if (due > now) on_wire += due - now;
  }
  const double wire = rate_bytes_per_s * to_seconds(on_wire);
  const double payload = wire - static_cast<double>(kIpUdpHeaderBytes);
  if (payload >= static_cast<double>(max_datagram_bytes)) return max_datagram_bytes;
  const ByteCount floor = std::min(config_.floor_bytes, max_datagram_bytes);
  return payload <= static_cast<double>(floor) ? floor : static_cast<ByteCount>(payload);
}

}  // namespace egw::congestion
