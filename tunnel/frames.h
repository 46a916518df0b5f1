// Frames: the unit of meaning inside a tunnel packet. docs/protocol.md is the
// normative description of their encoding; this header is its C++ mirror.
// Parsing is bounds-checked and never trusts a length or count from the wire.
#pragma once

#include <array>
#include <cstdint>
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
struct AckFrame {
  Duration ack_delay{0};
  std::vector<AckRange> ranges;  // descending, non-overlapping, non-adjacent
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

using Frame = std::variant<PaddingFrame, PingFrame, AckFrame, StreamOpenFrame, StreamFrame,
                           ResetStreamFrame, MaxDataFrame, MaxStreamDataFrame, StreamClassFrame,
                           CloseFrame>;

// Caps on counts read from the wire (msquic frame.c style).
inline constexpr std::size_t kMaxAckRanges = 64;

}  // namespace egw::tunnel
