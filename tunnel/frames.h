// Frames: the unit of meaning inside a tunnel packet. docs/protocol.md is the
// normative description of their encoding; this header is its C++ mirror.
// Parsing is bounds-checked and never trusts a length or count from the wire.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "common/content_class.h"
#include "common/units.h"

namespace egw::tunnel {

// An original destination, as recovered from the client's socket.
struct Destination {
  enum class Family : std::uint8_t { ipv4 = 4, ipv6 = 6 };
  Family family = Family::ipv4;
  std::array<std::uint8_t, 16> address{};  // ipv4 uses the first 4 bytes
  std::uint16_t port = 0;
  bool operator==(const Destination&) const = default;
};

struct PaddingFrame { std::size_t length = 1; };
struct PingFrame {};

// Inclusive packet-number range.
struct AckRange {
  PacketNumber smallest = 0;
  PacketNumber largest = 0;
  bool operator==(const AckRange&) const = default;
};
// Caps on counts read from the wire (msquic frame.c style).
inline constexpr std::size_t kMaxAckRanges = 64;

// The ranges of one ACK frame, stored inline: ACK frames are built and
// parsed for every few packets, so they must not touch the heap. Holds up to
// kMaxAckRanges + 1 ranges (one more than a valid frame, so an oversized
// frame can still be represented and refused by is_valid_ack); further
// push_backs are dropped.
class AckRanges {
 public:
  static constexpr std::size_t kCapacity = kMaxAckRanges + 1;

  AckRanges() = default;
  AckRanges(std::initializer_list<AckRange> ranges) {
    for (const AckRange& r : ranges) push_back(r);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  void push_back(const AckRange& range) {
    if (size_ < kCapacity) items_[size_++] = range;
  }
  AckRange& operator[](std::size_t i) { return items_[i]; }
  const AckRange& operator[](std::size_t i) const { return items_[i]; }
  AckRange& front() { return items_[0]; }
  const AckRange& front() const { return items_[0]; }
  AckRange& back() { return items_[size_ - 1]; }
  const AckRange& back() const { return items_[size_ - 1]; }
  const AckRange* begin() const { return items_.data(); }
  const AckRange* end() const { return items_.data() + size_; }

  friend bool operator==(const AckRanges& a, const AckRanges& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const AckRanges& a, std::span<const AckRange> b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  std::array<AckRange, kCapacity> items_;
  std::size_t size_ = 0;
};

// ACK timestamps wrap every 2^30 us (17.9 minutes): a 4-byte varint at
// most, and the receiver unwraps them (consecutive ACKs are far closer).
inline constexpr Duration kAckTimestampRange{std::int64_t{1} << 30};

struct AckFrame {
  Duration ack_delay{0};
  AckRanges ranges;  // descending, non-overlapping, non-adjacent
  // ACK_TIMESTAMPED: the sender's clock when it sent this ACK, since its
  // connection began, modulo kAckTimestampRange (for a peer that reads
  // them: kFlagAckTimestamps).
  std::optional<Duration> timestamp;
  bool operator==(const AckFrame&) const = default;
};

struct StreamOpenFrame {
  StreamId stream_id = 0;
  Destination destination;
  ContentClass class_hint = ContentClass::bulk;
  bool operator==(const StreamOpenFrame&) const = default;
};

struct StreamFrame {
  StreamId stream_id = 0;
  std::uint64_t offset = 0;
  bool fin = false;
  std::span<const std::byte> data;  // points into the packet being parsed or built
};

// Aborts the stream in both directions.
struct ResetStreamFrame {
  StreamId stream_id = 0;
  std::uint64_t error_code = 0;
  std::uint64_t final_size = 0;  // bytes this side had sent
  bool operator==(const ResetStreamFrame&) const = default;
};

struct MaxDataFrame {
  std::uint64_t maximum = 0;  // connection-wide receive credit, absolute
  bool operator==(const MaxDataFrame&) const = default;
};
struct MaxStreamDataFrame {
  StreamId stream_id = 0;
  std::uint64_t maximum = 0;  // absolute offset
  bool operator==(const MaxStreamDataFrame&) const = default;
};

// The cumulative number of streams the receiver of this frame may open
// towards its sender (RFC 9000 section 19.11): stream indexes (id / 2) below
// it. At most kMaxStreamsLimit.
struct MaxStreamsFrame {
  std::uint64_t maximum = 0;
  bool operator==(const MaxStreamsFrame&) const = default;
};
inline constexpr std::uint64_t kMaxStreamsLimit = std::uint64_t{1} << 60;

struct StreamClassFrame {
  StreamId stream_id = 0;
  ContentClass content_class = ContentClass::bulk;
  bool operator==(const StreamClassFrame&) const = default;
};

struct CloseFrame {
  std::uint64_t error_code = 0;
  std::string reason;  // at most kMaxCloseReasonBytes
  bool operator==(const CloseFrame&) const = default;
};
inline constexpr std::size_t kMaxCloseReasonBytes = 256;

// Unreliable datagram flows (RFC 9221 semantics, tunnel/flows.h): a flow is
// opened and closed by reliable control frames; its DATAGRAM frames are never
// retransmitted. Flow ids have the parity of stream ids (the branch opens
// even ones) but a space of their own.
using FlowId = std::uint64_t;
struct FlowOpenFrame {
  FlowId flow_id = 0;
  Destination destination;
  ContentClass content_class = ContentClass::bulk;
  bool operator==(const FlowOpenFrame&) const = default;
};
struct FlowCloseFrame {
  FlowId flow_id = 0;
  std::uint64_t error_code = 0;  // 0: closed normally; else a stream error (error_codes.h)
  bool operator==(const FlowCloseFrame&) const = default;
};
struct DatagramFrame {
  FlowId flow_id = 0;
  std::span<const std::byte> data;  // points into the packet being parsed or built
};

using Frame = std::variant<PaddingFrame, PingFrame, AckFrame, StreamOpenFrame, StreamFrame,
                           ResetStreamFrame, MaxDataFrame, MaxStreamDataFrame, StreamClassFrame,
                           CloseFrame, MaxStreamsFrame, FlowOpenFrame, FlowCloseFrame,
                           DatagramFrame>;

}  // namespace egw::tunnel
