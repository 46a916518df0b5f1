#include "congestion/delivery_rate.h"

#include <algorithm>

namespace egw::congestion {

DeliverySnapshot DeliveryRateSampler::on_packet_sent(ByteCount bytes_in_flight, Instant now) {
  // Nothing in flight: the next ack interval starts now (tcp_rate.c
  // tcp_rate_skb_sent), not at the last delivery before the idle period.
  if (bytes_in_flight == 0 || !started_) {
    first_sent_time_ = now;
    delivered_time_ = now;
    started_ = true;
  }
  return DeliverySnapshot{delivered_, delivered_time_, first_sent_time_, bytes_in_flight,
                          app_limited_until_ > 0};
}

void DeliveryRateSampler::on_app_limited(ByteCount bytes_in_flight) {
  // Until everything now in flight is delivered (at least one byte on, so
  // that 0 keeps meaning "not app-limited").
  app_limited_until_ = std::max<ByteCount>(delivered_ + bytes_in_flight, 1);
}

RateSample DeliveryRateSampler::on_ack(std::span<const SentPacket> acked,
                                       std::span<const SentPacket> lost,
                                       ByteCount prior_in_flight, Instant now,
                                       Duration min_rtt) {
  RateSample rs;
  rs.prior_in_flight = prior_in_flight;
  for (const SentPacket& p : lost) rs.lost_bytes += p.bytes;
  lost_total_ += rs.lost_bytes;
  const SentPacket* newest = nullptr;  // the latest sent of the acked
  for (const SentPacket& p : acked) {
    rs.acked_bytes += p.bytes;
    delivered_ += p.bytes;
    delivered_time_ = now;
    // tcp_rate_skb_delivered: the sample is taken over the packet that was
    // sent last (it spans the longest delivered count).
    if (newest == nullptr || p.delivery.delivered > newest->delivery.delivered ||
        (p.delivery.delivered == newest->delivery.delivered && p.sent_time > newest->sent_time)) {
      newest = &p;
    }
  }
  if (newest == nullptr) return rs;
  const DeliverySnapshot& snap = newest->delivery;
  first_sent_time_ = newest->sent_time;
  rs.prior_delivered_bytes = snap.delivered;
  rs.is_app_limited = snap.is_app_limited;
  rs.tx_in_flight = snap.tx_in_flight;
  rs.rtt = now - newest->sent_time;
  if (app_limited_until_ > 0 && delivered_ > app_limited_until_) app_limited_until_ = 0;

  if (snap.delivered >= next_round_delivered_) {
    next_round_delivered_ = delivered_;
    ++round_count_;
    rs.round_start = true;
  }
  rs.round_count = round_count_;

  rs.delivered_bytes = delivered_ - snap.delivered;
  const Duration send_elapsed = newest->sent_time - snap.first_sent_time;
  const Duration ack_elapsed = now - snap.delivered_time;
  rs.interval = std::max(send_elapsed, ack_elapsed);
  // An interval shorter than the minimum RTT cannot be right (tcp_rate.c):
  // acks came in faster than the path can carry data.
  if (rs.interval <= Duration{0} || rs.interval < min_rtt || rs.delivered_bytes == 0) return rs;
  rs.valid = true;
  rs.delivery_rate_bytes_per_s =
      static_cast<double>(rs.delivered_bytes) / to_seconds(rs.interval);
  return rs;
}

}  // namespace egw::congestion
