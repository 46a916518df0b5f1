// What the congestion layer knows about a packet: its number, who pays for
// it, its size and when it left. Shared by the ensemble, its outstanding-packet
// list and the tunnel that reports sends and acks.
#pragma once

#include <cstdint>

#include "common/units.h"

namespace egw::congestion {

// A member of an ensemble is a stream: the ids are the tunnel's stream ids.
using MemberId = StreamId;

// Packets that carry no stream data (a lone PING or flow-control credit) but
// still need an ACK are charged to this pseudo-member.
inline constexpr MemberId kControlMember = ~MemberId{0};

struct SentPacket {
  PacketNumber number = 0;
  MemberId member = kControlMember;
  ByteCount bytes = 0;  // whole datagram
  Instant sent_time{};
  bool ack_eliciting = true;  // ACK-only packets are not tracked as in flight
};

// Inclusive range of acknowledged packet numbers.
struct AckedRange {
  PacketNumber smallest = 0;
  PacketNumber largest = 0;
};

}  // namespace egw::congestion
