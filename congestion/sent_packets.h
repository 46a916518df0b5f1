// The outstanding (sent, not yet acknowledged or lost) packets of one
// congestion domain, in send order, with RFC 9002 section 6.1 loss detection.
//
// In a coupled ensemble there is one list for all members, so the
// acknowledgement of a later packet of stream B declares an earlier packet of
// stream A lost (E-TCP's skipped-ACK detection, TCP session's sibling ACKs).
// A packet is lost once a packet sent after it has been acknowledged and
//   - packet threshold (6.1.1): at least `packet_threshold` (3) packets were
//     sent after it in this list up to the largest acknowledged one, or
//   - time threshold (6.1.2): it was sent more than
//     max(time_threshold * max(srtt, latest_rtt), granularity) ago.
// Otherwise the loss timer is set for when its time threshold expires.
//
// Packet numbers must increase in send order (RFC 9000 12.3: never reused).
// The packet threshold counts positions in this list, not packet numbers, so
// a list that holds one member's packets only (coupling `none`) is advanced
// only by that member's later packets, and untracked ACK-only packets do not
// count.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "common/units.h"
#include "congestion/packet.h"

namespace egw::congestion {

struct LossDetectionConfig {
  std::uint32_t packet_threshold = 3;
  double time_threshold = 9.0 / 8.0;
  Duration granularity = ms(1);
};

class SentPackets {
 public:
  explicit SentPackets(const LossDetectionConfig& config = {});

  // Track an ack-eliciting packet. Returns false (and tracks nothing) when its
  // number does not exceed every number tracked before.
  bool on_sent(const SentPacket& packet);

  struct AckResult {
    std::vector<SentPacket> acked;          // newly acknowledged, in send order
    std::optional<Duration> rtt_sample;     // when the largest acked is new
  };
  // Remove the packets the ranges cover; numbers not tracked are ignored.
  AckResult on_ack(std::span<const AckedRange> ranges, Instant now);

  // RFC 9002 6.1: remove and return the packets now deemed lost; updates the
  // loss timer. `rtt_for_threshold` = max(srtt, latest_rtt).
  std::vector<SentPacket> detect_lost(Instant now, Duration rtt_for_threshold);
  // Remove and return everything (retransmission timeout).
  std::vector<SentPacket> take_all();

  std::optional<Instant> loss_time() const { return loss_time_; }
  ByteCount bytes_in_flight() const { return bytes_in_flight_; }
  std::size_t size() const { return packets_.size(); }
  bool empty() const { return packets_.empty(); }
  // Smallest outstanding packet number, if any.
  std::optional<PacketNumber> smallest_outstanding() const;
  std::optional<PacketNumber> largest_acked() const { return largest_acked_; }
  std::optional<PacketNumber> largest_sent() const { return largest_sent_; }

 private:
  struct Entry {
    SentPacket packet;
    std::uint64_t position;  // index in this list's send order
  };
  void erase(std::map<PacketNumber, Entry>::iterator it);

  LossDetectionConfig config_;
  std::map<PacketNumber, Entry> packets_;
  std::uint64_t next_position_ = 0;
  ByteCount bytes_in_flight_ = 0;
  std::optional<PacketNumber> largest_sent_;
  std::optional<PacketNumber> largest_acked_;
  std::uint64_t largest_acked_position_ = 0;
  std::optional<Instant> loss_time_;
};

}  // namespace egw::congestion
