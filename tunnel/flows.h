// A datagram flow's state inside a Connection (private to connection*.cc):
// one proxied UDP flow, carried as DATAGRAM frames with RFC 9221 semantics.
//
// Why datagrams and not a stream per flow: a call's audio is worth nothing
// once late, and a reliable stream would hold every later packet behind a
// lost one (head-of-line blocking) and resend what the application no
// longer wants. So a DATAGRAM is never retransmitted; it is still
// ack-eliciting and counted in the ensemble's window (bytes in flight, loss
// detection across members: its loss is a congestion signal like any
// other), and the flow is a member of the stride scheduler with its class,
// so a realtime flow's datagrams go ahead of bulk stream data. What waits
// in the queue past the flow's deadline is dropped instead of sent.
//
// FLOW_OPEN is reliable: it rides in every packet that carries the flow's
// datagrams until one such packet is acknowledged (so the first datagrams
// need no extra round trip and a lost FLOW_OPEN costs no datagrams), and is
// requeued as a control frame if lost with nothing to ride with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/content_class.h"
#include "common/ring_deque.h"
#include "common/units.h"
#include "congestion/packet.h"
#include "tunnel/connection.h"  // FlowCounters
#include "tunnel/frames.h"

namespace egw::tunnel {

// Flows are ensemble members beside the streams; their member ids have this
// bit set (stream ids are varints, below 2^62; kControlMember is all ones).
inline constexpr congestion::MemberId kFlowMemberBit = congestion::MemberId{1} << 62;
constexpr congestion::MemberId flow_member(FlowId id) { return kFlowMemberBit | id; }
constexpr bool is_flow_member(congestion::MemberId m) {
  return m != congestion::kControlMember && (m & kFlowMemberBit) != 0;
}
constexpr FlowId flow_of_member(congestion::MemberId m) { return m & ~kFlowMemberBit; }

// FLOW_CLOSEs waiting to go (refusals a peer provokes count here): beyond
// this the connection closes (EXCESSIVE_LOAD) rather than queue without bound.
inline constexpr std::size_t kMaxPendingFlowCloses = 4096;

struct QueuedDatagram {
  Instant queued_at{};
  std::vector<std::byte> data;
};

struct Flow {
  FlowId id = 0;
  bool local = false;
  Destination destination;
  ContentClass content_class = ContentClass::bulk;
  Duration deadline{0};
  RingDeque<QueuedDatagram> queue;
  FlowCounters counters;  // content_class unused here: the field above
  // FLOW_OPEN: due as a control frame (new, or lost with nothing to ride
  // with); acknowledged (peer flows: known to the peer from the start); the
  // packet that last carried it (so one packet carries it once).
  bool open_pending = false;
  bool open_acked = false;
  PacketNumber open_sent_in = ~PacketNumber{0};
  // The last value given to the ensemble's set_backlogged.
  bool backlogged = false;
};

}  // namespace egw::tunnel
