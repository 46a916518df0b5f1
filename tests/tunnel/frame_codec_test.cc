// Frame codec: round trips, exact layouts, and rejection of every malformed
// input (docs/protocol.md section 4).
#include "tunnel/frame_codec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tunnel/varint.h"
#include "tunnel/wire_writer.h"
#include "tests/tunnel/byte_literals.h"

namespace egw::tunnel {
namespace {

std::vector<std::byte> encode(const std::vector<Frame>& frames) {
  std::vector<std::byte> out;
  WireWriter w(out);
  for (const Frame& f : frames) encode_frame(w, f);
  EXPECT_TRUE(w.ok());
  return out;
}

const std::vector<std::byte> kPayload = bytes({'h', 'e', 'l', 'l', 'o'});

Destination v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d, std::uint16_t port) {
  Destination e;
  e.family = Destination::Family::ipv4;
  e.address = {a, b, c, d};
  e.port = port;
  return e;
}

// One of each frame type, with values that exercise every varint width.
std::vector<Frame> sample_frames() {
  Destination six;
  six.family = Destination::Family::ipv6;
  for (std::size_t i = 0; i < 16; ++i) six.address[i] = static_cast<std::uint8_t>(0x20 + i);
  six.port = 443;
  return {
      PaddingFrame{3},
      PingFrame{},
      AckFrame{us(1234), {{90, 100}, {50, 60}, {0, 0}}, {}},
      AckFrame{us(1234), {{90, 100}, {50, 60}, {0, 0}}, us(987'654'321)},
      StreamOpenFrame{4, v4(10, 0, 0, 1, 8080), ContentClass::html},
      StreamOpenFrame{70'000, six, ContentClass::image},
      StreamFrame{4, 1'000'000, false, kPayload},
      StreamFrame{8, kVarintMax - 5, true, kPayload},  // ends exactly at 2^62 - 1
      StreamFrame{12, 0, true, {}},                    // bare FIN
      ResetStreamFrame{4, 7, 5'000'000'000ULL},
      MaxDataFrame{16 << 20},
      MaxStreamDataFrame{6, kVarintMax},
      StreamClassFrame{4, ContentClass::script},
      CloseFrame{1, "idle"},
      CloseFrame{0, std::string(kMaxCloseReasonBytes, 'x')},
      MaxStreamsFrame{1024},
      MaxStreamsFrame{kMaxStreamsLimit},
  };
}

void expect_same(const std::vector<Frame>& a, const std::vector<Frame>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(frames_equal(a[i], b[i])) << "frame " << i;
}

TEST(FrameCodec, EveryFrameTypeRoundTripsAlone) {
  for (const Frame& f : sample_frames()) {
    const auto wire = encode({f});
    EXPECT_EQ(wire.size(), encoded_size(f)) << "type index " << f.index();
    auto parsed = parse_frames(wire);
    ASSERT_TRUE(parsed) << "type index " << f.index();
    expect_same(*parsed, {f});
  }
}

TEST(FrameCodec, AllFramesRoundTripInOnePacket) {
  // Padding first, so it cannot merge with another padding run.
  const auto frames = sample_frames();
  const auto wire = encode(frames);
  std::size_t total = 0;
  for (const Frame& f : frames) total += encoded_size(f);
  EXPECT_EQ(wire.size(), total);
  auto parsed = parse_frames(wire);
  ASSERT_TRUE(parsed);
  expect_same(*parsed, frames);
}

// MAX_STREAMS (0x0b): RFC 9000 19.11; a count above 2^60 is malformed.
TEST(FrameCodec, MaxStreamsLayoutAndLimit) {
  EXPECT_EQ(encode({MaxStreamsFrame{1024}}),
            (std::vector<std::byte>{std::byte{0x0b}, std::byte{0x44}, std::byte{0x00}}));
  std::vector<std::byte> over = {std::byte{0x0b}};
  std::vector<std::byte> value;
  WireWriter w(value);
  w.write_varint(kMaxStreamsLimit + 1);
  over.insert(over.end(), value.begin(), value.end());
  EXPECT_FALSE(parse_frames(over));
  std::vector<std::byte> sink;
  WireWriter fail(sink);
  encode_frame(fail, MaxStreamsFrame{kMaxStreamsLimit + 1});
  EXPECT_FALSE(fail.ok());
}

TEST(FrameCodec, StreamDataPointsIntoThePayload) {
  const auto wire = encode({StreamFrame{4, 0, false, kPayload}});
  auto parsed = parse_frames(wire);
  ASSERT_TRUE(parsed);
  const auto& f = std::get<StreamFrame>((*parsed)[0]);
  // type, id, offset, length = 4 bytes before the data.
  EXPECT_EQ(f.data.data(), wire.data() + 4);
}

TEST(FrameCodec, AckLayoutMatchesRfc9000Section19_3) {
  // Ranges [90,100], [50,60], [0,0]; delay 1234 us.
  const auto wire = encode({AckFrame{us(1234), {{90, 100}, {50, 60}, {0, 0}}, {}}});
  // type 0x02; largest 100 = 0x40 0x64; delay 1234 = 0x44 0xd2; 2 more ranges;
  // first range 100 - 90 = 10; gap 90 - 60 - 2 = 28, length 60 - 50 = 10;
  // gap 50 - 0 - 2 = 48, length 0.
  EXPECT_EQ(wire, bytes({0x02, 0x40, 0x64, 0x44, 0xd2, 2, 10, 28, 10, 48, 0}));
}

TEST(FrameCodec, TimestampedAckCarriesTheSendersClockAfterTheDelay) {
  const auto wire = encode({AckFrame{us(1234), {{90, 100}}, us(70'000)}});
  // type 0x0f; largest 100; delay 1234; timestamp 70000 us = 0x80 0x01 0x11 0x70;
  // no more ranges; first range 10.
  EXPECT_EQ(wire, bytes({0x0f, 0x40, 0x64, 0x44, 0xd2, 0x80, 0x01, 0x11, 0x70, 0, 10}));
  const auto parsed = parse_frames(wire);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(std::get<AckFrame>(parsed->front()).timestamp, us(70'000));
  // Cut inside the timestamp: the packet is malformed, not an ACK without one.
  EXPECT_FALSE(parse_frames(std::span(wire).first(7)));
  // fit_ack_frame counts the timestamp's bytes against the budget.
  const AckRange one[] = {{90, 100}};
  EXPECT_TRUE(fit_ack_frame(one, us(1234), wire.size(), us(70'000)));
  EXPECT_FALSE(fit_ack_frame(one, us(1234), wire.size() - 1, us(70'000)));
}

TEST(FrameCodec, AckTimestampsAreUnwrappedAcrossTheRange) {
  const std::int64_t range = kAckTimestampRange.count();
  std::optional<Duration> last;
  EXPECT_EQ(unwrap_ack_timestamp(last, us(range - 10)), us(range - 10));
  EXPECT_EQ(unwrap_ack_timestamp(last, us(5)), us(range + 5));            // wrapped forward
  EXPECT_EQ(unwrap_ack_timestamp(last, us(range - 20)), us(range - 20));  // reordered across it
  EXPECT_EQ(unwrap_ack_timestamp(last, us(40)), us(range + 40));
  for (std::int64_t t = range + 40; t < 5 * range; t += range / 3) {  // an hour, ACKs 6 min apart
    EXPECT_EQ(unwrap_ack_timestamp(last, us(t % range)), us(t));
  }
  std::optional<Duration> backwards;  // the first one just after a wrap, the next just before
  EXPECT_EQ(unwrap_ack_timestamp(backwards, us(3)), us(3));
  EXPECT_EQ(unwrap_ack_timestamp(backwards, us(range - 7)), us(-7));
  EXPECT_EQ(unwrap_ack_timestamp(backwards, us(12)), us(12));
}

TEST(FrameCodec, StreamOpenLayout) {
  const auto wire = encode({StreamOpenFrame{4, v4(192, 168, 1, 2, 0x1f90), ContentClass::bulk}});
  // type, id, family 4, address, port 8080 BE, class 3.
  EXPECT_EQ(wire, bytes({0x03, 4, 4, 192, 168, 1, 2, 0x1f, 0x90, 3}));
}

TEST(FrameCodec, PaddingRunBecomesOneFrame) {
  auto parsed = parse_frames(bytes({0, 0, 0, 0x01, 0, 0}));
  ASSERT_TRUE(parsed);
  ASSERT_EQ(parsed->size(), 3u);  // padding(3), ping, padding(2)
  EXPECT_EQ(std::get<PaddingFrame>((*parsed)[0]).length, 3u);
  EXPECT_TRUE(std::holds_alternative<PingFrame>((*parsed)[1]));
  EXPECT_EQ(std::get<PaddingFrame>((*parsed)[2]).length, 2u);
}

TEST(FrameCodec, TruncationAtEveryByteIsRejected) {
  for (const Frame& f : sample_frames()) {
    if (std::holds_alternative<PaddingFrame>(f)) continue;  // every prefix is padding
    const auto wire = encode({f});
    for (std::size_t cut = 0; cut < wire.size(); ++cut) {
      EXPECT_FALSE(parse_frames(std::span(wire).first(cut)))
          << "type index " << f.index() << " cut at " << cut << " of " << wire.size();
    }
  }
}

TEST(FrameCodec, TruncatedLastFrameRejectsTheWholePacket) {
  auto wire = encode({PingFrame{}, MaxDataFrame{1000}});
  wire.pop_back();
  EXPECT_FALSE(parse_frames(wire));
}

TEST(FrameCodec, EmptyPayloadIsRejected) { EXPECT_FALSE(parse_frames({})); }

TEST(FrameCodec, UnknownFrameTypeRejectsWholePacket) {
  for (int type : {0x0b, 0x1f, 0x40, 0xff}) {
    EXPECT_FALSE(parse_frames(bytes({0x01, type}))) << type;
    EXPECT_FALSE(parse_frames(bytes({type}))) << type;
  }
}

// ---- ACK validation ----

TEST(FrameCodec, AckFirstRangeBelowZeroIsRejected) {
  // largest 5, first range 6: smallest would be -1.
  EXPECT_FALSE(parse_frames(bytes({0x02, 5, 0, 0, 6})));
  EXPECT_TRUE(parse_frames(bytes({0x02, 5, 0, 0, 5})));  // [0, 5]
}

TEST(FrameCodec, AckGapBelowZeroIsRejected) {
  // [10,10] then gap g: next largest = 10 - g - 2, so g = 8 gives 0, g = 9 gives -1.
  EXPECT_TRUE(parse_frames(bytes({0x02, 10, 0, 1, 0, 8, 0})));
  EXPECT_FALSE(parse_frames(bytes({0x02, 10, 0, 1, 0, 9, 0})));
  // Smallest 0 leaves no room for any further range.
  EXPECT_FALSE(parse_frames(bytes({0x02, 0, 0, 1, 0, 0, 0})));
}

TEST(FrameCodec, AckRangeLengthBelowZeroIsRejected) {
  // [10,10], gap 0 -> next largest 8; length 8 gives [0,8], length 9 underflows.
  EXPECT_TRUE(parse_frames(bytes({0x02, 10, 0, 1, 0, 0, 8})));
  EXPECT_FALSE(parse_frames(bytes({0x02, 10, 0, 1, 0, 0, 9})));
}

TEST(FrameCodec, ParsedAckRangesAreDescendingAndNonAdjacent) {
  auto parsed = parse_frames(bytes({0x02, 10, 0, 1, 0, 0, 8}));
  ASSERT_TRUE(parsed);
  const auto& ack = std::get<AckFrame>((*parsed)[0]);
  ASSERT_EQ(ack.ranges.size(), 2u);
  EXPECT_EQ(ack.ranges[0], (AckRange{10, 10}));
  EXPECT_EQ(ack.ranges[1], (AckRange{0, 8}));  // 9 missing: gap 0 means one hole
  EXPECT_TRUE(is_valid_ack(ack));
}

std::vector<std::byte> ack_with_extra_ranges(std::uint64_t count) {
  // largest 1000, each range one packet, each gap 0 (one missing number).
  std::vector<std::byte> out;
  WireWriter w(out);
  w.write_u8(0x02);
  w.write_varint(1000);
  w.write_varint(0);
  w.write_varint(count);
  w.write_varint(0);
  for (std::uint64_t i = 0; i < std::min<std::uint64_t>(count, 100); ++i) {
    w.write_varint(0);
    w.write_varint(0);
  }
  return out;
}

TEST(FrameCodec, AckRangeCountIsCapped) {
  // kMaxAckRanges = 64 ranges in all: the first + 63 more.
  auto ok = parse_frames(ack_with_extra_ranges(kMaxAckRanges - 1));
  ASSERT_TRUE(ok);
  EXPECT_EQ(std::get<AckFrame>((*ok)[0]).ranges.size(), kMaxAckRanges);
  EXPECT_FALSE(parse_frames(ack_with_extra_ranges(kMaxAckRanges)));
  // A huge count is refused before any loop or allocation.
  EXPECT_FALSE(parse_frames(ack_with_extra_ranges(kVarintMax)));
}

TEST(FrameCodec, InvalidAckIsNotEncoded) {
  for (const AckFrame& bad : {AckFrame{us(0), {}, {}},
                              AckFrame{us(0), {{5, 4}}, {}},             // smallest > largest
                              AckFrame{us(0), {{5, 9}, {4, 4}}, {}},     // adjacent: 4 then 5
                              AckFrame{us(0), {{5, 9}, {20, 30}}, {}},   // ascending
                              AckFrame{us(0), {{0, kVarintMax + 1}}, {}}}) {
    EXPECT_FALSE(is_valid_ack(bad));
    std::vector<std::byte> out;
    WireWriter w(out);
    encode_frame(w, bad);
    EXPECT_FALSE(w.ok());
    EXPECT_TRUE(out.empty());
  }
}

// ---- other field validation ----

TEST(FrameCodec, StreamEndBeyond2To62IsRejected) {
  // offset 2^62 - 2 (8-byte varint), length 1: ends at 2^62 - 1, fine.
  std::vector<std::byte> ok;
  WireWriter w(ok);
  w.write_u8(0x04);
  w.write_varint(0);
  w.write_varint(kVarintMax - 1);
  w.write_varint(1);
  w.write_u8('a');
  EXPECT_TRUE(parse_frames(ok));
  // offset 2^62 - 1, length 1: offset + length = 2^62, rejected.
  std::vector<std::byte> bad;
  WireWriter w2(bad);
  w2.write_u8(0x04);
  w2.write_varint(0);
  w2.write_varint(kVarintMax);
  w2.write_varint(1);
  w2.write_u8('a');
  EXPECT_FALSE(parse_frames(bad));
}

TEST(FrameCodec, StreamLengthBeyondPayloadIsRejected) {
  // Claims 5 data bytes, carries 4.
  EXPECT_FALSE(parse_frames(bytes({0x04, 0, 0, 5, 1, 2, 3, 4})));
  EXPECT_TRUE(parse_frames(bytes({0x04, 0, 0, 4, 1, 2, 3, 4})));
}

TEST(FrameCodec, EveryClassByteParsesAndUnknownOnesAreBulk) {
  // A newer peer's class (beyond kContentClassCount) is scheduled as bulk
  // instead of rejecting the packet: older builds failed the frame, which
  // is why senders map categories for them (nearest_content_type).
  for (int v = 0; v < 256; ++v) {
    const auto open = parse_frames(bytes({0x03, 4, 4, 10, 0, 0, 1, 0, 80, v}));
    const auto cls = parse_frames(bytes({0x09, 4, v}));
    ASSERT_TRUE(open && cls) << v;
    const ContentClass expected = v < kContentClassCount ? static_cast<ContentClass>(v) : ContentClass::bulk;
    EXPECT_EQ(std::get<StreamOpenFrame>(open->front()).class_hint, expected) << v;
    EXPECT_EQ(std::get<StreamClassFrame>(cls->front()).content_class, expected) << v;
  }
  EXPECT_EQ(to_string(std::get<StreamClassFrame>(parse_frames(bytes({0x09, 4, 4}))->front()).content_class), "realtime");
}

TEST(FrameCodec, AddressFamilyMustBe4Or6) {
  for (int family : {0, 5, 41, 255}) {
    EXPECT_FALSE(parse_frames(bytes({0x03, 4, family, 10, 0, 0, 1, 0, 80, 0}))) << family;
  }
  // Family 6 needs 16 address bytes: the 4 of an ipv4 address are too few.
  EXPECT_FALSE(parse_frames(bytes({0x03, 4, 6, 10, 0, 0, 1, 0, 80, 0})));
}

TEST(FrameCodec, CloseReasonIsCapped) {
  auto close_with_reason = [](std::size_t length) {
    std::vector<std::byte> out;
    WireWriter w(out);
    w.write_u8(0x0a);
    w.write_varint(0);
    w.write_varint(length);
    w.write_zeros(length);
    return out;
  };
  EXPECT_TRUE(parse_frames(close_with_reason(kMaxCloseReasonBytes)));
  EXPECT_FALSE(parse_frames(close_with_reason(kMaxCloseReasonBytes + 1)));
}

TEST(FrameCodec, OverlongCloseReasonIsTruncatedWhenEncoded) {
  const CloseFrame f{3, std::string(kMaxCloseReasonBytes + 10, 'r')};
  const auto wire = encode({f});
  // type + error 1 byte + length 256 (2-byte varint) + 256 bytes = 260.
  EXPECT_EQ(wire.size(), 1u + 1 + 2 + kMaxCloseReasonBytes);
  EXPECT_EQ(encoded_size(f), wire.size());
  auto parsed = parse_frames(wire);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(std::get<CloseFrame>((*parsed)[0]).reason.size(), kMaxCloseReasonBytes);
}

TEST(FrameCodec, AckElicitingFrames) {
  EXPECT_FALSE(is_ack_eliciting(PaddingFrame{}));
  EXPECT_FALSE(is_ack_eliciting(AckFrame{}));
  EXPECT_FALSE(is_ack_eliciting(CloseFrame{}));
  EXPECT_TRUE(is_ack_eliciting(PingFrame{}));
  EXPECT_TRUE(is_ack_eliciting(StreamFrame{}));
  EXPECT_TRUE(is_ack_eliciting(MaxDataFrame{}));
}

// ---- sizing helpers ----

TEST(FitAckFrame, TakesAsManyNewestRangesAsFit) {
  // 10 single-packet ranges: 1000, 998, ..., 982.
  std::vector<AckRange> ranges;
  for (PacketNumber n = 1000; n >= 982; n -= 2) ranges.push_back({n, n});
  // Fixed part: type 1 + largest 1000 (2) + delay 0 (1) + count (1) + first range (1) = 6;
  // every further range: gap 0 (1) + length 0 (1) = 2 bytes.
  auto all = fit_ack_frame(ranges, us(0), 100);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->ranges.size(), 10u);
  EXPECT_EQ(encoded_size(*all), 6u + 9 * 2);  // = 24

  auto three = fit_ack_frame(ranges, us(0), 6 + 2 * 2 + 1);  // 11 bytes: 3 ranges
  ASSERT_TRUE(three);
  EXPECT_EQ(three->ranges.size(), 3u);
  EXPECT_EQ(three->ranges.front(), (AckRange{1000, 1000}));
  EXPECT_LE(encoded_size(*three), 11u);

  EXPECT_EQ(fit_ack_frame(ranges, us(0), 6)->ranges.size(), 1u);
  EXPECT_FALSE(fit_ack_frame(ranges, us(0), 5));
  EXPECT_FALSE(fit_ack_frame({}, us(0), 100));
}

TEST(FitAckFrame, NeverMoreThanTheCap) {
  std::vector<AckRange> ranges;
  for (PacketNumber n = 1000; n > 600; n -= 2) ranges.push_back({n, n});  // 200 ranges
  auto ack = fit_ack_frame(ranges, us(25'000), 10'000);
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->ranges.size(), kMaxAckRanges);
  EXPECT_TRUE(parse_frames(encode({*ack})));
}

TEST(MaxStreamData, FillsTheBudgetExactly) {
  // id 4 (1) + offset 0 (1) + type (1) = 3 bytes of header.
  // Budget 100: 97 left; a 1-byte length holds <= 63, a 2-byte length holds
  // 97 - 2 = 95 bytes. 3 + 2 + 95 = 100.
  auto n = max_stream_data_that_fits(4, 0, 100);
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 95u);
  // Budget 66: 63 left; 1-byte length gives 62, 2-byte gives 61: 62 wins.
  EXPECT_EQ(max_stream_data_that_fits(4, 0, 66), 62u);
  // Only a bare FIN fits in 4 bytes; nothing fits in 3.
  EXPECT_EQ(max_stream_data_that_fits(4, 0, 4), 0u);
  EXPECT_FALSE(max_stream_data_that_fits(4, 0, 3));
}

TEST(MaxStreamData, AgreesWithEncodedSizeForManyBudgets) {
  const std::vector<std::byte> big(20'000, std::byte{7});
  for (std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{100}, std::uint64_t{1} << 40}) {
    for (std::size_t budget = 0; budget < 17'000; budget += 13) {
      auto n = max_stream_data_that_fits(1'000, offset, budget);
      if (!n) {
        EXPECT_GT(encoded_size(StreamFrame{1'000, offset, true, {}}), budget);
        continue;
      }
      const StreamFrame fits{1'000, offset, false, std::span(big).first(*n)};
      const StreamFrame one_more{1'000, offset, false, std::span(big).first(*n + 1)};
      EXPECT_LE(encoded_size(fits), budget) << budget;
      EXPECT_GT(encoded_size(one_more), budget) << budget;
    }
  }
}

TEST(MaxStreamData, RespectsTheOffsetCeiling) {
  // offset 2^62 - 3 leaves room for 2 bytes before offset + length reaches 2^62.
  EXPECT_EQ(max_stream_data_that_fits(0, kVarintMax - 2, 1000), 2u);
  EXPECT_FALSE(max_stream_data_that_fits(0, kVarintMax + 1, 1000));
}

}  // namespace
}  // namespace egw::tunnel
