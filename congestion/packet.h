// What the congestion layer knows about a packet: its number, who pays for
// it, its size, when it left and the delivery counters then. Shared by the
// ensemble, its outstanding-packet list and the tunnel that reports sends
// and acks.
#pragma once

#include <cstdint>

#include "common/units.h"

namespace egw::congestion {

// A member of an ensemble is a stream: the ids are the tunnel's stream ids.
using MemberId = StreamId;

// Packets that carry no stream data (a lone PING or flow-control credit) but
// still need an ACK are charged to this pseudo-member.
inline constexpr MemberId kControlMember = ~MemberId{0};

// The domain's delivery counters when a packet left
// (congestion/delivery_rate.h): filled by the congestion layer at send.
// Compact (12 bytes: SentPacket grows by 8, it is kept per packet in flight
// and the idle-stream memory budget counts the ring): `delivered` modulo
// 2^32 (a packet is acknowledged long before 4 GiB more are), the two
// instants as ages before the packet's own send time (saturating).
struct DeliverySnapshot {
  std::uint32_t delivered_low = 0;     // bytes delivered before it was sent, mod 2^32
  std::uint32_t delivered_age_us = 0;  // sent_time - when `delivered` last advanced
  std::uint32_t first_sent_age_us : 31 = 0;  // sent_time - send time of the packet delivered last
  std::uint32_t is_app_limited : 1 = 0;      // sent in an app-limited stretch
};

struct SentPacket {
  PacketNumber number = 0;
  MemberId member = kControlMember;
  ByteCount bytes = 0;  // whole datagram
  Instant sent_time{};
  bool ack_eliciting : 1 = true;  // ACK-only packets are not tracked as in flight
  // Sent on the tunnel's urgent lane: the receiver may take it before
  // packets sent earlier (congestion/sent_packets.h counts the lanes apart).
  bool urgent : 1 = false;
  // The flight it joined, itself included (BBR's tx_in_flight; at most
  // 1 GiB): what a loss of this packet says was too much. Set by the
  // congestion domain. Packed beside the flag: every packet in flight and
  // every idle stream's share of the history pay for this struct.
  std::uint32_t sent_in_flight_bytes : 30 = 0;
  DeliverySnapshot delivery{};  // the congestion layer's, not the tunnel's
};

static_assert(sizeof(SentPacket) <= 48, "SentPacket is stored per packet in flight");

// Inclusive range of acknowledged packet numbers.
struct AckedRange {
  PacketNumber smallest = 0;
  PacketNumber largest = 0;
};

}  // namespace egw::congestion
