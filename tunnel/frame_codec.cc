#include "tunnel/frame_codec.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "common/overloaded.h"
#include "tunnel/flow_frame_codec.h"
#include "tunnel/varint.h"
#include "tunnel/wire_reader.h"

namespace egw::tunnel {
namespace {

std::size_t address_bytes(Destination::Family family) {
  return family == Destination::Family::ipv4 ? 4 : 16;
}

// Durations are sent as whole microseconds; a negative delay (clock skew in
// the caller) is sent as 0 rather than failing the packet.
std::uint64_t ack_delay_us(Duration delay) {
  if (delay.count() <= 0) return 0;
  return std::min<std::uint64_t>(static_cast<std::uint64_t>(delay.count()), kVarintMax);
}

// ACK wire fields follow RFC 9000 section 19.3.1 without ECN: the largest
// acknowledged, then each range as a distance below the previous one.
std::uint64_t ack_gap(const AckRange& previous, const AckRange& next) {
  // previous.smallest - next.largest - 2: the count of missing numbers - 1.
  return previous.smallest - next.largest - 2;
}

// The timestamp's field: whole microseconds, 0 before the epoch.
std::size_t timestamp_size(const std::optional<Duration>& timestamp) {
  return timestamp ? varint_size(ack_delay_us(*timestamp)) : 0;
}

std::size_t ack_size(const AckFrame& ack) {
  const AckRange& first = ack.ranges.front();
  std::size_t size = 1 + varint_size(first.largest) + varint_size(ack_delay_us(ack.ack_delay)) +
                     timestamp_size(ack.timestamp) +
                     varint_size(ack.ranges.size() - 1) +
                     varint_size(first.largest - first.smallest);
  for (std::size_t i = 1; i < ack.ranges.size(); ++i) {
    size += varint_size(ack_gap(ack.ranges[i - 1], ack.ranges[i])) +
            varint_size(ack.ranges[i].largest - ack.ranges[i].smallest);
  }
  return size;
}

void encode_ack(WireWriter& w, const AckFrame& ack) {
  if (!is_valid_ack(ack)) {
    w.fail();  // refuse rather than emit ranges the peer would read differently
    return;
  }
  const AckRange& first = ack.ranges.front();
  w.write_u8(static_cast<std::uint8_t>(ack.timestamp ? FrameType::ack_timestamped : FrameType::ack));
  w.write_varint(first.largest);
  w.write_varint(ack_delay_us(ack.ack_delay));
  if (ack.timestamp) w.write_varint(ack_delay_us(*ack.timestamp));
  w.write_varint(ack.ranges.size() - 1);
  w.write_varint(first.largest - first.smallest);
  for (std::size_t i = 1; i < ack.ranges.size(); ++i) {
    w.write_varint(ack_gap(ack.ranges[i - 1], ack.ranges[i]));
    w.write_varint(ack.ranges[i].largest - ack.ranges[i].smallest);
  }
}

// ---- parsing: each returns nullopt on the first bad field ----

// Parses into `ack` in place (it is large: its ranges are inline).
bool parse_ack(WireReader& r, AckFrame& ack, bool timestamped) {
  auto largest = r.read_varint();
  auto delay_us = r.read_varint();
  std::optional<std::uint64_t> timestamp_us;
  if (timestamped) {
    timestamp_us = r.read_varint();
    if (!timestamp_us) return false;
  }
  auto extra_ranges = r.read_varint();
  auto first_range = r.read_varint();
  if (!largest || !delay_us || !extra_ranges || !first_range) return false;
  // Cap before looping: the count is attacker-controlled.
  if (*extra_ranges >= kMaxAckRanges) return false;
  if (*first_range > *largest) return false;  // would underflow below 0
  ack.ack_delay = Duration(static_cast<Duration::rep>(*delay_us));
  ack.timestamp.reset();
  if (timestamp_us) ack.timestamp = Duration(static_cast<Duration::rep>(*timestamp_us));
  ack.ranges.clear();
  ack.ranges.push_back({*largest - *first_range, *largest});
  for (std::uint64_t i = 0; i < *extra_ranges; ++i) {
    auto gap = r.read_varint();
    auto length = r.read_varint();
    if (!gap || !length) return false;
    const PacketNumber previous_smallest = ack.ranges.back().smallest;
    // next largest = previous smallest - gap - 2 must be >= 0; this is what
    // keeps ranges descending and leaves at least one number between them.
    if (previous_smallest < *gap + 2) return false;
    const PacketNumber next_largest = previous_smallest - *gap - 2;
    if (*length > next_largest) return false;
    ack.ranges.push_back({next_largest - *length, next_largest});
  }
  return true;
}

std::optional<StreamOpenFrame> parse_stream_open(WireReader& r) {
  StreamOpenFrame f;
  auto id = r.read_varint();
  auto family = r.read_u8();
  if (!id || !family) return std::nullopt;
  if (*family != 4 && *family != 6) return std::nullopt;
  f.stream_id = *id;
  f.destination.family = static_cast<Destination::Family>(*family);
  auto address = r.read_bytes(address_bytes(f.destination.family));
  auto port = r.read_u16();
  auto class_byte = r.read_u8();
  if (!address || !port || !class_byte) return std::nullopt;
  std::memcpy(f.destination.address.data(), address->data(), address->size());
  f.destination.port = *port;
  f.class_hint = content_class_from_wire_or_bulk(*class_byte);  // a newer peer's class: bulk
  return f;
}

std::optional<StreamFrame> parse_stream(WireReader& r, bool fin) {
  auto id = r.read_varint();
  auto offset = r.read_varint();
  auto length = r.read_varint();
  if (!id || !offset || !length) return std::nullopt;
  // Both are < 2^62, so the sum cannot overflow 64 bits.
  if (*offset + *length > kVarintMax) return std::nullopt;
  auto data = r.read_bytes(*length);
  if (!data) return std::nullopt;
  return StreamFrame{*id, *offset, fin, *data};
}

std::optional<ResetStreamFrame> parse_reset_stream(WireReader& r) {
  auto id = r.read_varint();
  auto error = r.read_varint();
  auto final_size = r.read_varint();
  if (!id || !error || !final_size) return std::nullopt;
  return ResetStreamFrame{*id, *error, *final_size};
}

std::optional<StreamClassFrame> parse_stream_class(WireReader& r) {
  auto id = r.read_varint();
  auto class_byte = r.read_u8();
  if (!id || !class_byte) return std::nullopt;
  return StreamClassFrame{*id, content_class_from_wire_or_bulk(*class_byte)};
}

std::optional<CloseFrame> parse_close(WireReader& r) {
  auto error = r.read_varint();
  auto length = r.read_varint();
  if (!error || !length) return std::nullopt;
  if (*length > kMaxCloseReasonBytes) return std::nullopt;
  auto reason = r.read_bytes(*length);
  if (!reason) return std::nullopt;
  CloseFrame f;
  f.error_code = *error;
  f.reason.assign(reinterpret_cast<const char*>(reason->data()), reason->size());
  return f;
}

// Stores `parsed` in `out` if there is one.
template <typename F>
bool store(Frame& out, std::optional<F>&& parsed) {
  if (!parsed) return false;
  out = std::move(*parsed);
  return true;
}

// One frame whose type byte has been read, into `out`.
bool parse_one(WireReader& r, std::uint8_t type, Frame& out) {
  switch (static_cast<FrameType>(type)) {
    case FrameType::padding: {
      std::size_t length = 1;
      while (r.peek_u8() == std::uint8_t{0}) {
        r.read_u8();
        ++length;
      }
      out = PaddingFrame{length};
      return true;
    }
    case FrameType::ping: out = PingFrame{}; return true;
    case FrameType::ack:
    case FrameType::ack_timestamped: {
      // Parsed where it will live: an AckFrame is too big to copy per packet.
      AckFrame* ack = std::get_if<AckFrame>(&out);
      if (!ack) ack = &out.emplace<AckFrame>();
      return parse_ack(r, *ack, static_cast<FrameType>(type) == FrameType::ack_timestamped);
    }
    case FrameType::stream_open: return store(out, parse_stream_open(r));
    case FrameType::stream: return store(out, parse_stream(r, false));
    case FrameType::stream_fin: return store(out, parse_stream(r, true));
    case FrameType::reset_stream: return store(out, parse_reset_stream(r));
    case FrameType::max_data: {
      auto maximum = r.read_varint();
      if (!maximum) return false;
      out = MaxDataFrame{*maximum};
      return true;
    }
    case FrameType::max_stream_data: {
      auto id = r.read_varint();
      auto maximum = r.read_varint();
      if (!id || !maximum) return false;
      out = MaxStreamDataFrame{*id, *maximum};
      return true;
    }
    case FrameType::stream_class: return store(out, parse_stream_class(r));
    case FrameType::close: return store(out, parse_close(r));
    case FrameType::max_streams: {
      auto maximum = r.read_varint();
      if (!maximum || *maximum > kMaxStreamsLimit) return false;
      out = MaxStreamsFrame{*maximum};
      return true;
    }
    case FrameType::flow_open: return store(out, parse_flow_open(r));
    case FrameType::flow_close: return store(out, parse_flow_close(r));
    case FrameType::datagram: return store(out, parse_datagram(r));
  }
  return false;  // unknown type: the whole packet is rejected
}

}  // namespace

std::size_t encoded_size(const Frame& frame) {
  return std::visit(
      Overloaded{
          [](const PaddingFrame& f) -> std::size_t { return f.length; },
          [](const PingFrame&) -> std::size_t { return 1; },
          [](const AckFrame& f) -> std::size_t { return is_valid_ack(f) ? ack_size(f) : 0; },
          [](const StreamOpenFrame& f) -> std::size_t {
            // type, id, family, address, port, class
            return 1 + varint_size(f.stream_id) + 1 + address_bytes(f.destination.family) + 2 +
                   1;
          },
          [](const StreamFrame& f) -> std::size_t {
            return 1 + varint_size(f.stream_id) + varint_size(f.offset) +
                   varint_size(f.data.size()) + f.data.size();
          },
          [](const ResetStreamFrame& f) -> std::size_t {
            return 1 + varint_size(f.stream_id) + varint_size(f.error_code) +
                   varint_size(f.final_size);
          },
          [](const MaxDataFrame& f) -> std::size_t { return 1 + varint_size(f.maximum); },
          [](const MaxStreamDataFrame& f) -> std::size_t {
            return 1 + varint_size(f.stream_id) + varint_size(f.maximum);
          },
          [](const StreamClassFrame& f) -> std::size_t {
            return 1 + varint_size(f.stream_id) + 1;
          },
          [](const CloseFrame& f) -> std::size_t {
            const std::size_t length = std::min(f.reason.size(), kMaxCloseReasonBytes);
            return 1 + varint_size(f.error_code) + varint_size(length) + length;
          },
          [](const MaxStreamsFrame& f) -> std::size_t { return 1 + varint_size(f.maximum); },
          [](const FlowOpenFrame& f) -> std::size_t { return encoded_size(f); },
          [](const FlowCloseFrame& f) -> std::size_t { return encoded_size(f); },
          [](const DatagramFrame& f) -> std::size_t { return encoded_size(f); },
      },
      frame);
}

void encode_frame(WireWriter& w, const Frame& frame) {
  auto type = [&w](FrameType t) { w.write_u8(static_cast<std::uint8_t>(t)); };
  std::visit(
      Overloaded{
          [&](const PaddingFrame& f) { w.write_zeros(f.length); },
          [&](const PingFrame&) { type(FrameType::ping); },
          [&](const AckFrame& f) { encode_ack(w, f); },
          [&](const StreamOpenFrame& f) {
            if (f.destination.family != Destination::Family::ipv4 &&
                f.destination.family != Destination::Family::ipv6) {
              w.fail();
              return;
            }
            type(FrameType::stream_open);
            w.write_varint(f.stream_id);
            w.write_u8(static_cast<std::uint8_t>(f.destination.family));
            w.write_bytes(std::as_bytes(std::span(f.destination.address))
                              .first(address_bytes(f.destination.family)));
            w.write_u16(f.destination.port);
            w.write_u8(static_cast<std::uint8_t>(f.class_hint));
          },
          [&](const StreamFrame& f) {
            encode_stream_frame_header(w, f.stream_id, f.offset, f.data.size(), f.fin);
            w.write_bytes(f.data);
          },
          [&](const ResetStreamFrame& f) {
            type(FrameType::reset_stream);
            w.write_varint(f.stream_id);
            w.write_varint(f.error_code);
            w.write_varint(f.final_size);
          },
          [&](const MaxDataFrame& f) {
            type(FrameType::max_data);
            w.write_varint(f.maximum);
          },
          [&](const MaxStreamDataFrame& f) {
            type(FrameType::max_stream_data);
            w.write_varint(f.stream_id);
            w.write_varint(f.maximum);
          },
          [&](const StreamClassFrame& f) {
            type(FrameType::stream_class);
            w.write_varint(f.stream_id);
            w.write_u8(static_cast<std::uint8_t>(f.content_class));
          },
          [&](const CloseFrame& f) {
            type(FrameType::close);
            w.write_varint(f.error_code);
            // An over-long reason is truncated, as encoded_size() assumes.
            const std::size_t length = std::min(f.reason.size(), kMaxCloseReasonBytes);
            w.write_varint(length);
            w.write_bytes(std::as_bytes(std::span(f.reason.data(), length)));
          },
          [&](const MaxStreamsFrame& f) {
            if (f.maximum > kMaxStreamsLimit) {
              w.fail();
              return;
            }
            type(FrameType::max_streams);
            w.write_varint(f.maximum);
          },
          [&](const FlowOpenFrame& f) { encode_flow_frame(w, f); },
          [&](const FlowCloseFrame& f) { encode_flow_frame(w, f); },
          [&](const DatagramFrame& f) { encode_flow_frame(w, f); },
      },
      frame);
}

bool FrameParser::next(Frame& out) {
  if (failed_) return false;
  auto type = reader_.read_u8();
  if (!type) return false;
  if (!parse_one(reader_, *type, out)) failed_ = true;
  return !failed_;
}

std::optional<PayloadCheck> check_frames(std::span<const std::byte> payload) {
  if (payload.empty()) return std::nullopt;
  FrameParser parser(payload);
  Frame frame;
  PayloadCheck check;
  while (parser.next(frame)) {
    check.ack_eliciting = check.ack_eliciting || is_ack_eliciting(frame);
    if (std::holds_alternative<AckFrame>(frame)) ++check.ack_frames;
  }
  if (parser.failed()) return std::nullopt;
  return check;
}

std::optional<std::vector<Frame>> parse_frames(std::span<const std::byte> payload) {
  if (payload.empty()) return std::nullopt;
  FrameParser parser(payload);
  std::vector<Frame> frames;
  Frame frame;
  while (parser.next(frame)) frames.push_back(frame);
  if (parser.failed()) return std::nullopt;
  return frames;
}

void encode_frame(WireWriter& w, const AckFrame& ack) { encode_ack(w, ack); }

std::size_t encoded_size(const AckFrame& ack) { return is_valid_ack(ack) ? ack_size(ack) : 0; }

void encode_stream_frame_header(WireWriter& w, StreamId stream_id, std::uint64_t offset,
                                std::size_t length, bool fin) {
  if (offset > kVarintMax || length > kVarintMax - offset) {
    w.fail();  // the parser would reject offset + length >= 2^62
    return;
  }
  w.write_u8(static_cast<std::uint8_t>(fin ? FrameType::stream_fin : FrameType::stream));
  w.write_varint(stream_id);
  w.write_varint(offset);
  w.write_varint(length);
}

bool is_ack_eliciting(const Frame& frame) {
  return !std::holds_alternative<PaddingFrame>(frame) &&
         !std::holds_alternative<AckFrame>(frame) && !std::holds_alternative<CloseFrame>(frame);
}

bool is_valid_ack(const AckFrame& ack) {
  if (ack.ranges.empty() || ack.ranges.size() > kMaxAckRanges) return false;
  if (ack.ranges.front().largest > kVarintMax) return false;
  for (std::size_t i = 0; i < ack.ranges.size(); ++i) {
    const AckRange& range = ack.ranges[i];
    if (range.smallest > range.largest) return false;
    // At least one missing number between neighbours: largest + 2 <= previous smallest.
    if (i > 0 && (ack.ranges[i - 1].smallest < 2 ||
                  range.largest > ack.ranges[i - 1].smallest - 2)) {
      return false;
    }
  }
  return true;
}

Duration unwrap_ack_timestamp(std::optional<Duration>& last, Duration wire) {
  const std::int64_t range = kAckTimestampRange.count();
  if (!last) {
    last = wire;
    return wire;
  }
  std::int64_t delta = (wire.count() - last->count() % range) % range;
  if (delta < 0) delta += range;
  if (delta >= range / 2) delta -= range;
  *last += Duration{delta};
  return *last;
}

std::optional<AckFrame> fit_ack_frame(std::span<const AckRange> ranges_descending,
                                      Duration ack_delay, std::size_t budget_bytes,
                                      std::optional<Duration> timestamp) {
  if (ranges_descending.empty()) return std::nullopt;
  AckFrame ack;
  ack.ack_delay = ack_delay;
  ack.timestamp = timestamp;
  const std::size_t limit = std::min(ranges_descending.size(), kMaxAckRanges);
  // Fixed part, without the range count (its size depends on how many fit).
  const AckRange& first = ranges_descending.front();
  const std::size_t fixed = 1 + varint_size(first.largest) + varint_size(ack_delay_us(ack_delay)) +
                            timestamp_size(timestamp) + varint_size(first.largest - first.smallest);
  std::size_t pairs = 0;  // bytes of the (gap, length) pairs for ranges 1..n-1
  std::size_t fitting = 0;
  for (std::size_t n = 1; n <= limit; ++n) {
    if (n > 1) {
      pairs += varint_size(ack_gap(ranges_descending[n - 2], ranges_descending[n - 1])) +
               varint_size(ranges_descending[n - 1].largest - ranges_descending[n - 1].smallest);
    }
    if (fixed + varint_size(n - 1) + pairs > budget_bytes) break;
    fitting = n;
  }
  if (fitting == 0) return std::nullopt;
  for (std::size_t i = 0; i < fitting; ++i) ack.ranges.push_back(ranges_descending[i]);
  if (!is_valid_ack(ack)) return std::nullopt;
  return ack;
}

std::optional<std::size_t> max_stream_data_that_fits(StreamId stream_id, std::uint64_t offset,
                                                     std::size_t budget_bytes) {
  const std::size_t id_size = varint_size(stream_id);
  const std::size_t offset_size = varint_size(offset);
  if (id_size == 0 || offset_size == 0) return std::nullopt;
  const std::size_t header = 1 + id_size + offset_size;  // type, id, offset
  if (budget_bytes < header + 1) return std::nullopt;    // + a 1-byte zero length
  const std::size_t available = budget_bytes - header;
  const std::uint64_t offset_room = kVarintMax - offset;  // offset + length < 2^62
  std::size_t best = 0;
  // The length field's size depends on the length: try each encoding size.
  for (std::size_t length_size : {1, 2, 4, 8}) {
    if (available < length_size) break;
    const std::uint64_t length = std::min<std::uint64_t>(
        {available - length_size, varint_max_for_size(length_size), offset_room});
    best = std::max(best, static_cast<std::size_t>(length));
  }
  return best;
}

bool frames_equal(const Frame& a, const Frame& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&b](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b);
        if constexpr (std::is_same_v<T, PaddingFrame>) {
          return x.length == y.length;
        } else if constexpr (std::is_same_v<T, PingFrame>) {
          return true;
        } else if constexpr (std::is_same_v<T, StreamFrame>) {
          return x.stream_id == y.stream_id && x.offset == y.offset && x.fin == y.fin &&
                 std::ranges::equal(x.data, y.data);
        } else if constexpr (std::is_same_v<T, DatagramFrame>) {
          return x.flow_id == y.flow_id && std::ranges::equal(x.data, y.data);
        } else {
          return x == y;
        }
      },
      a);
}

}  // namespace egw::tunnel
