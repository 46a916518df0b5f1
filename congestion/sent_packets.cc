#include "congestion/sent_packets.h"

#include <algorithm>

namespace egw::congestion {

namespace {
constexpr std::uint32_t kLaneMask = 0x7fff'ffff;  // Entry::lane_position's 31 bits
}  // namespace

SentPackets::SentPackets(const LossDetectionConfig& config) : config_(config) {}

bool SentPackets::on_sent(const SentPacket& packet) {
  if (largest_sent_ && packet.number <= *largest_sent_) return false;
  largest_sent_ = packet.number;
  Entry e{packet, next_position_++, 0, 0};
  if (!packet.urgent) e.lane_position = next_lane_position_++ & kLaneMask;
  packets_.push_back(e);
  ++outstanding_;
  bytes_in_flight_ += packet.bytes;
  return true;
}

std::size_t SentPackets::lower_bound(PacketNumber number) const {
  std::size_t lo = 0;
  std::size_t hi = packets_.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (packets_[mid].packet.number < number) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

void SentPackets::remove(Entry& e) {
  e.removed = 1;
  --outstanding_;
  bytes_in_flight_ -= std::min(bytes_in_flight_, e.packet.bytes);
}

void SentPackets::pop_tombstones() {
  while (!packets_.empty() && packets_.front().removed) packets_.pop_front();
}

void SentPackets::on_ack(std::span<const AckedRange> ranges, Instant now, AckResult& out) {
  const std::size_t first_new = out.acked.size();
  const Entry* largest_new = nullptr;  // the largest newly acknowledged
  const Entry* largest_new_ordinary = nullptr;  // ... of the ordinary lane
  // ACK frames list their ranges largest first: walked from the back, the
  // appended packets come out in send order and need no sort.
  const bool descending = ranges.size() > 1 && ranges.front().largest > ranges.back().largest;
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    const AckedRange& range = ranges[descending ? ranges.size() - 1 - r : r];
    if (range.smallest > range.largest) continue;  // malformed: ignore
    for (std::size_t i = lower_bound(range.smallest);
         i < packets_.size() && packets_[i].packet.number <= range.largest; ++i) {
      Entry& e = packets_[i];
      if (e.removed) continue;
      if (!largest_new || e.packet.number > largest_new->packet.number) largest_new = &e;
      if (!e.packet.urgent && (!largest_new_ordinary || e.packet.number > largest_new_ordinary->packet.number)) {
        largest_new_ordinary = &e;
      }
      out.acked.push_back(e.packet);
      remove(e);
    }
  }
  if (!largest_new) return;
  // Ranges may come in any order: the appended part goes in send order.
  const auto by_number = [](const SentPacket& a, const SentPacket& b) { return a.number < b.number; };
  const auto appended = out.acked.begin() + static_cast<std::ptrdiff_t>(first_new);
  if (!std::is_sorted(appended, out.acked.end(), by_number)) std::sort(appended, out.acked.end(), by_number);
  if (!largest_acked_ || largest_new->packet.number > *largest_acked_) {
    largest_acked_ = largest_new->packet.number;
    largest_acked_position_ = largest_new->position;
    // RFC 9002 5.1: a sample only when the largest acknowledged is new.
    out.rtt_sample = now - largest_new->packet.sent_time;
  }
  if (largest_new_ordinary &&
      (!largest_acked_ordinary_ || largest_new_ordinary->packet.number > *largest_acked_ordinary_)) {
    largest_acked_ordinary_ = largest_new_ordinary->packet.number;
    largest_acked_lane_position_ = largest_new_ordinary->lane_position;
  }
  pop_tombstones();  // after the last use of largest_new (it points into the ring)
}

SentPackets::AckResult SentPackets::on_ack(std::span<const AckedRange> ranges, Instant now) {
  AckResult result;
  on_ack(ranges, now, result);
  return result;
}

void SentPackets::detect_lost(Instant now, Duration rtt_for_threshold,
                              std::vector<SentPacket>& lost) {
  loss_time_.reset();
  if (!largest_acked_) return;
  const auto scaled = std::chrono::duration_cast<Duration>(
      std::chrono::duration<double, std::micro>(config_.time_threshold *
                                                static_cast<double>(rtt_for_threshold.count())));
  const Duration loss_delay = std::max(scaled, config_.granularity);
  const Instant lost_send_time = now - loss_delay;
  for (std::size_t i = 0; i < packets_.size() && packets_[i].packet.number < *largest_acked_;
       ++i) {
    Entry& e = packets_[i];
    if (e.removed) continue;
    // An ordinary packet counts only its own lane's later packets (see the top).
    bool by_count = false;
    if (e.packet.urgent) {
      by_count = std::uint32_t(largest_acked_position_ - e.position) >= config_.packet_threshold;
    } else if (largest_acked_ordinary_ && e.packet.number < *largest_acked_ordinary_) {
      by_count = ((largest_acked_lane_position_ - e.lane_position) & kLaneMask) >= config_.packet_threshold;
    } else {
      continue;  // not behind its lane's largest acknowledged: only the PTO finds it
    }
    const bool by_time = e.packet.sent_time <= lost_send_time;
    if (by_count || by_time) {
      lost.push_back(e.packet);
      remove(e);
      continue;
    }
    const Instant when = e.packet.sent_time + loss_delay;
    loss_time_ = loss_time_ ? std::min(*loss_time_, when) : when;
  }
  pop_tombstones();
}

std::vector<SentPacket> SentPackets::detect_lost(Instant now, Duration rtt_for_threshold) {
  std::vector<SentPacket> lost;
  detect_lost(now, rtt_for_threshold, lost);
  return lost;
}

void SentPackets::take_all(std::vector<SentPacket>& all) {
  for (std::size_t i = 0; i < packets_.size(); ++i) {
    if (!packets_[i].removed) all.push_back(packets_[i].packet);
  }
  packets_.clear();
  outstanding_ = 0;
  bytes_in_flight_ = 0;
  loss_time_.reset();
}

std::vector<SentPacket> SentPackets::take_all() {
  std::vector<SentPacket> all;
  take_all(all);
  return all;
}

bool SentPackets::outstanding(PacketNumber number) const {
  const std::size_t i = lower_bound(number);
  return i < packets_.size() && packets_[i].packet.number == number && !packets_[i].removed;
}

std::optional<PacketNumber> SentPackets::smallest_outstanding() const {
  if (packets_.empty()) return std::nullopt;
  return packets_.front().packet.number;  // the front is never a tombstone
}

const SentPacket& SentPackets::newest() const {
  std::size_t i = packets_.size() - 1;
  while (packets_[i].removed) --i;  // stops at the front at the latest: never a tombstone
  return packets_[i].packet;
}

}  // namespace egw::congestion
