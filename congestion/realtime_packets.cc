#include "congestion/realtime_packets.h"

#include <algorithm>

namespace egw::congestion {

bool RealtimePackets::active(Instant now) const {
  return config_.serialisation_budget > Duration{0} && last_sent_ && now - *last_sent_ <= config_.hold;
}

ByteCount RealtimePackets::limit(double rate_bytes_per_s, ByteCount max_datagram_bytes) const {
  if (rate_bytes_per_s <= 0) return max_datagram_bytes;
  const double wire = rate_bytes_per_s * to_seconds(config_.serialisation_budget);
  const double payload = wire - static_cast<double>(kIpUdpHeaderBytes);
  if (payload >= static_cast<double>(max_datagram_bytes)) return max_datagram_bytes;
  const ByteCount floor = std::min(config_.floor_bytes, max_datagram_bytes);
  return payload <= static_cast<double>(floor) ? floor : static_cast<ByteCount>(payload);
}

}  // namespace egw::congestion
