#include "congestion/sent_packets.h"

#include <algorithm>

namespace egw::congestion {

SentPackets::SentPackets(const LossDetectionConfig& config) : config_(config) {}

bool SentPackets::on_sent(const SentPacket& packet) {
  if (largest_sent_ && packet.number <= *largest_sent_) return false;
  largest_sent_ = packet.number;
  packets_.emplace(packet.number, Entry{packet, next_position_++});
  bytes_in_flight_ += packet.bytes;
  return true;
}

void SentPackets::erase(std::map<PacketNumber, Entry>::iterator it) {
  bytes_in_flight_ -= std::min(bytes_in_flight_, it->second.packet.bytes);
  packets_.erase(it);
}

SentPackets::AckResult SentPackets::on_ack(std::span<const AckedRange> ranges, Instant now) {
  AckResult result;
  std::optional<Entry> largest_new;  // the largest newly acknowledged
  for (const AckedRange& range : ranges) {
    if (range.smallest > range.largest) continue;  // malformed: ignore
    auto it = packets_.lower_bound(range.smallest);
    while (it != packets_.end() && it->first <= range.largest) {
      if (!largest_new || it->first > largest_new->packet.number) largest_new = it->second;
      result.acked.push_back(it->second.packet);
      auto next = std::next(it);
      erase(it);
      it = next;
    }
  }
  if (!largest_new) return result;
  std::sort(result.acked.begin(), result.acked.end(),
            [](const SentPacket& a, const SentPacket& b) { return a.number < b.number; });
  if (!largest_acked_ || largest_new->packet.number > *largest_acked_) {
    largest_acked_ = largest_new->packet.number;
    largest_acked_position_ = largest_new->position;
    // RFC 9002 5.1: a sample only when the largest acknowledged is new.
    result.rtt_sample = now - largest_new->packet.sent_time;
  }
  return result;
}

std::vector<SentPacket> SentPackets::detect_lost(Instant now, Duration rtt_for_threshold) {
  std::vector<SentPacket> lost;
  loss_time_.reset();
  if (!largest_acked_) return lost;
  const auto scaled = std::chrono::duration_cast<Duration>(
      std::chrono::duration<double, std::micro>(config_.time_threshold *
                                                static_cast<double>(rtt_for_threshold.count())));
  const Duration loss_delay = std::max(scaled, config_.granularity);
  const Instant lost_send_time = now - loss_delay;
  auto it = packets_.begin();
  while (it != packets_.end() && it->first < *largest_acked_) {
    const Entry& e = it->second;
    const bool by_count = largest_acked_position_ >= e.position + config_.packet_threshold;
    const bool by_time = e.packet.sent_time <= lost_send_time;
    if (by_count || by_time) {
      lost.push_back(e.packet);
      auto next = std::next(it);
      erase(it);
      it = next;
      continue;
    }
    const Instant when = e.packet.sent_time + loss_delay;
    loss_time_ = loss_time_ ? std::min(*loss_time_, when) : when;
    ++it;
  }
  return lost;
}

std::vector<SentPacket> SentPackets::take_all() {
  std::vector<SentPacket> all;
  all.reserve(packets_.size());
  for (auto& [number, entry] : packets_) all.push_back(entry.packet);
  packets_.clear();
  bytes_in_flight_ = 0;
  loss_time_.reset();
  return all;
}

std::optional<PacketNumber> SentPackets::smallest_outstanding() const {
  if (packets_.empty()) return std::nullopt;
  return packets_.begin()->first;
}

}  // namespace egw::congestion
