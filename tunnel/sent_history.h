// SentHistory: what every packet we sent carried, in one ring indexed by
// packet number (numbers are consecutive per connection, so the entry of
// number n is at n - front number), in the spirit of quic-go's
// sent_packet_history. The frames themselves live in two more rings in send
// order (stream chunks and control frames), each entry naming its slice, so
// recording a packet allocates nothing once the rings have grown to the
// peak in flight.
//
// An entry is in flight until the ensemble reports it acknowledged or lost.
// A lost entry stays (marked lost) so a late ACK still settles its stream
// data (TCP fast start 3.4.4: a failed resume keeps what got through; RFC
// 9002 6.1.2 spurious losses); the connection drops it once it reaches the
// front and is older than 3 PTOs or too many lost entries are kept.
// Settled entries leave from the front.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

#include "common/ring_deque.h"
#include "common/units.h"
#include "tunnel/frames.h"

namespace egw::tunnel {

// A piece of one stream's data (the stream is the packet's).
struct SentChunk {
  std::uint64_t offset = 0;
  std::uint32_t length = 0;  // at most a datagram
  bool fin = false;
};

// Control frames a packet carried: what their loss must requeue.
struct SentStreamOpen { StreamId stream_id = 0; };
struct SentStreamClass { StreamId stream_id = 0; ContentClass content_class{}; };
struct SentMaxStreamData { StreamId stream_id = 0; std::uint64_t maximum = 0; };
struct SentMaxData { std::uint64_t maximum = 0; };
struct SentReset { ResetStreamFrame frame; };
struct SentPing {};
struct SentMaxStreams { std::uint64_t maximum = 0; };
struct SentFlowOpen { FlowId flow_id = 0; };
struct SentFlowClose { FlowCloseFrame frame; };
using SentControl = std::variant<SentPing, SentStreamOpen, SentStreamClass, SentMaxStreamData,
                                 SentMaxData, SentReset, SentMaxStreams, SentFlowOpen,
                                 SentFlowClose>;

enum class SentState : std::uint8_t {
  settled,    // acknowledged, or nothing to act on (ACK-only, CLOSE)
  in_flight,  // the ensemble tracks it
  lost,       // declared lost; kept for a late ACK of its stream data
};

struct SentEntry {
  SentState state = SentState::settled;
  bool carries_ack = false;        // it carried an ACK frame ...
  PacketNumber largest_acked = 0;  // ... whose largest number was this
  StreamId stream_id = 0;          // of its chunks (or its datagrams' flow member)
  std::uint32_t chunk_count = 0;
  std::uint32_t datagram_count = 0;  // DATAGRAM frames: counted if lost, never resent
  std::uint32_t control_count = 0;
  std::uint32_t bytes = 0;          // datagram size (path MTU black-hole detection)
  std::uint64_t first_chunk = 0;    // sequence numbers in the frame rings
  std::uint64_t first_control = 0;
  Instant lost_at{};
};

class SentHistory {
 public:
  // Forgets everything; the next packet recorded is `next_number`.
  void reset(PacketNumber next_number);

  // Starts the entry of packet `number` (= next_number()); frames added go to
  // it until the next begin. discard_back() drops it again (nothing was sent).
  SentEntry& begin(PacketNumber number);
  void add_chunk(const SentChunk& chunk);
  void add_control(const SentControl& control);
  void discard_back();
  PacketNumber next_number() const { return front_number_ + entries_.size(); }

  // The entry of `number`, or null when it is not (any more) recorded.
  SentEntry* find(PacketNumber number);
  const SentChunk& chunk(const SentEntry& e, std::uint32_t i) const {
    return chunks_[static_cast<std::size_t>(e.first_chunk - front_chunk_) + i];
  }
  const SentControl& control(const SentEntry& e, std::uint32_t i) const {
    return controls_[static_cast<std::size_t>(e.first_control - front_control_) + i];
  }

  // Marks an in-flight entry lost at `now` / a lost one settled.
  void mark_lost(SentEntry& e, Instant now);
  void mark_settled(SentEntry& e);
  std::size_t lost_count() const { return lost_count_; }

  // Drops settled entries from the front, and lost ones there that were lost
  // before `lost_before` or while more than `max_lost` are kept.
  void drop_front(Instant lost_before, std::size_t max_lost);

  // Range of recorded numbers, for walking entries in an ACK range.
  PacketNumber front_number() const { return front_number_; }
  std::size_t size() const { return entries_.size(); }

 private:
  void pop_front();

  RingDeque<SentEntry> entries_;
  RingDeque<SentChunk> chunks_;
  RingDeque<SentControl> controls_;
  PacketNumber front_number_ = 0;
  std::uint64_t front_chunk_ = 0;    // sequence number of chunks_.front()
  std::uint64_t front_control_ = 0;  // of controls_.front()
  std::size_t lost_count_ = 0;
};

}  // namespace egw::tunnel
