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
// Storage: a ring in send order (numbers increase, so a number is found by
// binary search); acknowledged or lost entries are tombstoned and popped once
// they reach the front. No allocation per packet once the ring has grown to
// the largest flight; results are appended to caller-owned vectors.
//
// Two lanes (issue 22): a packet sent on the tunnel's urgent lane
// (SentPacket::urgent) may be taken by the receiver before the packets sent
// ahead of it, so its acknowledgement says nothing about them: a packet of
// the ordinary lane is lost only by the ordinary lane's largest
// acknowledged packet and the ones sent before it. An urgent packet is
// overtaken by nothing, so any later packet acknowledged counts against it.
// Without urgent packets this is RFC 9002 as above.
//
// Packet numbers must increase in send order (RFC 9000 12.3: never reused).
// The packet threshold counts positions in this list, not packet numbers, so
// a list that holds one member's packets only (coupling `none`) is advanced
// only by that member's later packets, and untracked ACK-only packets do not
// count.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "common/ring_deque.h"
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
  // Appends to out.acked (in send order among what this call appends).
  void on_ack(std::span<const AckedRange> ranges, Instant now, AckResult& out);
  AckResult on_ack(std::span<const AckedRange> ranges, Instant now);  // convenience

  // RFC 9002 6.1: remove the packets now deemed lost and append them to
  // `lost`; updates the loss timer. `rtt_for_threshold` = max(srtt, latest_rtt).
  void detect_lost(Instant now, Duration rtt_for_threshold, std::vector<SentPacket>& lost);
  std::vector<SentPacket> detect_lost(Instant now, Duration rtt_for_threshold);  // convenience
  // Remove everything (retransmission timeout), appended to `all`.
  void take_all(std::vector<SentPacket>& all);
  std::vector<SentPacket> take_all();  // convenience

  std::optional<Instant> loss_time() const { return loss_time_; }
  ByteCount bytes_in_flight() const { return bytes_in_flight_; }
  std::size_t size() const { return outstanding_; }
  bool empty() const { return outstanding_ == 0; }
  // Smallest outstanding packet number, if any.
  std::optional<PacketNumber> smallest_outstanding() const;
  // The newest outstanding packet (a tail loss probe resends its data); the
  // list must not be empty.
  const SentPacket& newest() const;
  // Is `number` sent and neither acknowledged nor lost?
  bool outstanding(PacketNumber number) const;
  std::optional<PacketNumber> largest_acked() const { return largest_acked_; }
  std::optional<PacketNumber> largest_sent() const { return largest_sent_; }

 private:
  // 8 bytes beside the packet: the ring is held per packet in flight (and
  // counted in the idle-stream memory budget, tests/alloc).
  // Positions are modulo 2^32 and 2^31: only differences within the list
  // in flight are taken.
  struct Entry {
    SentPacket packet;
    std::uint32_t position = 0;           // index in this list's send order
    std::uint32_t lane_position : 31 = 0;  // ... among the ordinary lane's (not urgent)
    std::uint32_t removed : 1 = 0;         // acknowledged or lost: a tombstone
  };
  // Index of the first entry whose number is >= `number`.
  std::size_t lower_bound(PacketNumber number) const;
  void remove(Entry& e);
  void pop_tombstones();

  LossDetectionConfig config_;
  RingDeque<Entry> packets_;
  std::size_t outstanding_ = 0;
  std::uint32_t next_position_ = 0;
  std::uint32_t next_lane_position_ = 0;
  ByteCount bytes_in_flight_ = 0;
  std::optional<PacketNumber> largest_sent_;
  std::optional<PacketNumber> largest_acked_;
  std::uint32_t largest_acked_position_ = 0;
  // The ordinary lane's largest acknowledged packet and its lane position.
  std::optional<PacketNumber> largest_acked_ordinary_;
  std::uint32_t largest_acked_lane_position_ = 0;
  std::optional<Instant> loss_time_;
};

}  // namespace egw::congestion
