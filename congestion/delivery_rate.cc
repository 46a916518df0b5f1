#include "congestion/delivery_rate.h"

#include <algorithm>

namespace egw::congestion {

namespace {

std::uint32_t age_us(Instant later, Instant earlier, std::int64_t max) {
  const auto d = (later - earlier).count();
  return d <= 0 ? 0 : static_cast<std::uint32_t>(std::min<std::int64_t>(d, max));
}

}  // namespace

DeliverySnapshot DeliveryRateSampler::on_packet_sent(ByteCount bytes_in_flight, Instant now) {
  // Nothing in flight: the next ack interval starts now (tcp_rate.c
  // tcp_rate_skb_sent), not at the last delivery before the idle period.
  if (bytes_in_flight == 0 || !started_) {
    first_sent_time_ = now;
    delivered_time_ = now;
    started_ = true;
    peer_times_.clear();  // the peer's interval would span the idle time
  }
  DeliverySnapshot s;
  s.delivered_low = static_cast<std::uint32_t>(delivered_);
  s.delivered_age_us = age_us(now, delivered_time_, 0xffffffffLL);
  s.first_sent_age_us = age_us(now, first_sent_time_, 0x7fffffffLL);
  s.is_app_limited = app_limited_until_ > 0 ? 1 : 0;
  return s;
}

void DeliveryRateSampler::on_app_limited(ByteCount bytes_in_flight) {
  // Until everything now in flight is delivered (at least one byte on, so
  // that 0 keeps meaning "not app-limited").
  app_limited_until_ = std::max<ByteCount>(delivered_ + bytes_in_flight, 1);
}

ByteCount DeliveryRateSampler::delivered_at_send(const SentPacket& p) const {
  // Modular difference: less than 4 GiB were delivered since it left.
  const std::uint32_t since = static_cast<std::uint32_t>(delivered_) - p.delivery.delivered_low;
  return delivered_ >= since ? delivered_ - since : 0;
}

std::optional<Duration> DeliveryRateSampler::peer_time_at(ByteCount delivered) const {
  std::size_t lo = 0;
  std::size_t hi = peer_times_.size();
  while (lo < hi) {  // the first entry at or above `delivered`
    const std::size_t mid = (lo + hi) / 2;
    if (peer_times_[mid].delivered < delivered) lo = mid + 1;
    else hi = mid;
  }
  if (lo == peer_times_.size() || peer_times_[lo].delivered != delivered) return std::nullopt;
  return peer_times_[lo].received_at;
}

RateSample DeliveryRateSampler::on_ack(std::span<const SentPacket> acked,
                                       std::span<const SentPacket> lost,
                                       ByteCount prior_in_flight, Instant now,
                                       Duration min_rtt, std::optional<Duration> peer_received_at) {
  RateSample rs;
  rs.prior_in_flight = prior_in_flight;
  for (const SentPacket& p : lost) rs.lost_bytes += p.bytes;
  lost_total_ += rs.lost_bytes;
  // tcp_rate_skb_delivered: the sample is taken over the packet that was
  // sent last (it spans the longest delivered count); counters before this
  // ack's deliveries.
  const SentPacket* newest = nullptr;
  ByteCount newest_delivered = 0;
  for (const SentPacket& p : acked) {
    const ByteCount d = delivered_at_send(p);
    if (newest == nullptr || d > newest_delivered ||
        (d == newest_delivered && p.sent_time > newest->sent_time)) {
      newest = &p;
      newest_delivered = d;
    }
  }
  for (const SentPacket& p : acked) rs.acked_bytes += p.bytes;
  if (newest == nullptr) return rs;
  delivered_ += rs.acked_bytes;
  delivered_time_ = now;
  const DeliverySnapshot& snap = newest->delivery;
  first_sent_time_ = newest->sent_time;
  rs.prior_delivered_bytes = newest_delivered;
  rs.is_app_limited = snap.is_app_limited != 0;
  rs.rtt = now - newest->sent_time;
  if (app_limited_until_ > 0 && delivered_ > app_limited_until_) app_limited_until_ = 0;

  if (newest_delivered >= next_round_delivered_) {
    next_round_delivered_ = delivered_;
    ++round_count_;
    rs.round_start = true;
  }
  rs.round_count = round_count_;

  rs.delivered_bytes = delivered_ - newest_delivered;
  const Duration send_elapsed = us(snap.first_sent_age_us);
  Duration ack_elapsed = now - (newest->sent_time - us(snap.delivered_age_us));
  if (peer_received_at) {
    if (const auto then = peer_time_at(newest_delivered)) ack_elapsed = *peer_received_at - *then;
    if (peer_times_.size() == kPeerTimes) peer_times_.pop_front();
    peer_times_.push_back({delivered_, *peer_received_at});
  }
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
