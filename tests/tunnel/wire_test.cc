// WireReader / WireWriter: big-endian integers, RFC 9000 varints, bounds.
#include <gtest/gtest.h>

#include <vector>

#include "tunnel/varint.h"
#include "tunnel/wire_reader.h"
#include "tunnel/wire_writer.h"
#include "tests/tunnel/byte_literals.h"

namespace egw::tunnel {
namespace {

TEST(WireWriter, FixedWidthIntegersAreBigEndian) {
  std::vector<std::byte> out;
  WireWriter w(out);
  EXPECT_TRUE(w.write_u8(0x01));
  EXPECT_TRUE(w.write_u16(0x0203));
  EXPECT_TRUE(w.write_u32(0x04050607));
  EXPECT_TRUE(w.write_u64(0x08090a0b0c0d0e0fULL));
  EXPECT_EQ(out, bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(w.written(), 15u);  // 1 + 2 + 4 + 8
}

TEST(WireReader, FixedWidthIntegersRoundTrip) {
  const auto in = bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  WireReader r(in);
  EXPECT_EQ(r.read_u8(), 0x01);
  EXPECT_EQ(r.read_u16(), 0x0203);
  EXPECT_EQ(r.read_u32(), 0x04050607u);
  EXPECT_EQ(r.read_u64(), 0x08090a0b0c0d0e0fULL);
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.read_u8(), std::nullopt);
}

// The four examples of RFC 9000 appendix A.1.
TEST(Varint, Rfc9000ExamplesDecode) {
  const auto eight = bytes({0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c});
  EXPECT_EQ(WireReader(eight).read_varint(), 151'288'809'941'952'652ULL);
  const auto four = bytes({0x9d, 0x7f, 0x3e, 0x7d});
  EXPECT_EQ(WireReader(four).read_varint(), 494'878'333u);
  const auto two = bytes({0x7b, 0xbd});
  EXPECT_EQ(WireReader(two).read_varint(), 15'293u);
  const auto one = bytes({0x25});
  EXPECT_EQ(WireReader(one).read_varint(), 37u);
  // Non-minimal encodings are legal (RFC 9000 section 16): 0x40 0x25 is 37.
  const auto two_for_37 = bytes({0x40, 0x25});
  EXPECT_EQ(WireReader(two_for_37).read_varint(), 37u);
}

TEST(Varint, WriterUsesShortestEncoding) {
  struct Case { std::uint64_t value; std::size_t size; };
  for (Case c : {Case{0, 1}, Case{63, 1}, Case{64, 2}, Case{16'383, 2}, Case{16'384, 4},
                 Case{1'073'741'823, 4}, Case{1'073'741'824, 8}, Case{kVarintMax, 8}}) {
    std::vector<std::byte> out;
    WireWriter w(out);
    ASSERT_TRUE(w.write_varint(c.value));
    EXPECT_EQ(out.size(), c.size) << c.value;
    EXPECT_EQ(varint_size(c.value), c.size);
    WireReader r(out);
    EXPECT_EQ(r.read_varint(), c.value);
    EXPECT_TRUE(r.empty());
  }
  // 15293 -> 0x7bbd, as in RFC 9000 appendix A.1.
  std::vector<std::byte> out;
  WireWriter(out).write_varint(15'293);
  EXPECT_EQ(out, bytes({0x7b, 0xbd}));
}

TEST(Varint, ValueAbove62BitsIsRefused) {
  std::vector<std::byte> out;
  WireWriter w(out);
  EXPECT_FALSE(w.write_varint(kVarintMax + 1));
  EXPECT_FALSE(w.ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(varint_size(kVarintMax + 1), 0u);
}

TEST(WireReader, TruncatedVarintFailsWithoutConsuming) {
  // 0xc2 announces 8 bytes; only 7 are there.
  const auto in = bytes({0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8});
  WireReader r(in);
  EXPECT_EQ(r.read_varint(), std::nullopt);
  EXPECT_EQ(r.position(), 0u);
  EXPECT_EQ(r.read_u32(), 0xc2197c5eu);  // the cursor did not move
}

TEST(WireReader, ShortReadsFailAtEveryWidth) {
  const auto in = bytes({1, 2, 3});
  WireReader r(in);
  EXPECT_EQ(r.read_u32(), std::nullopt);
  EXPECT_EQ(r.read_u64(), std::nullopt);
  EXPECT_EQ(r.read_bytes(4), std::nullopt);
  EXPECT_EQ(r.remaining(), 3u);
  EXPECT_EQ(r.read_u16(), 0x0102);
  EXPECT_EQ(r.read_u16(), std::nullopt);
  EXPECT_EQ(r.read_u8(), 3);
}

TEST(WireReader, ReadBytesAliasesInputAndRejectsHugeLengths) {
  const auto in = bytes({9, 8, 7, 6});
  WireReader r(in);
  auto view = r.read_bytes(3);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->data(), in.data());
  EXPECT_EQ(view->size(), 3u);
  EXPECT_EQ(r.read_bytes(kVarintMax), std::nullopt);  // a length from the wire
  EXPECT_EQ(r.read_bytes(~std::uint64_t{0}), std::nullopt);
  EXPECT_EQ(r.peek_u8(), 6);
  EXPECT_EQ(r.remaining(), 1u);
}

TEST(WireWriter, BudgetIsNeverExceededAndFailureIsSticky) {
  std::vector<std::byte> out;
  WireWriter w(out, 5);
  EXPECT_TRUE(w.write_u32(0xdeadbeef));
  EXPECT_EQ(w.remaining(), 1u);  // 5 - 4
  EXPECT_FALSE(w.write_u16(1));  // 2 > 1: nothing written
  EXPECT_EQ(out.size(), 4u);
  EXPECT_FALSE(w.ok());
  EXPECT_FALSE(w.write_u8(1));  // would fit, but the writer already failed
  EXPECT_EQ(out.size(), 4u);
  EXPECT_EQ(w.remaining(), 0u);
}

TEST(WireWriter, AppendsAfterExistingContent) {
  std::vector<std::byte> out = bytes({0xaa});
  WireWriter w(out, 2);
  EXPECT_TRUE(w.write_zeros(2));
  EXPECT_EQ(out, bytes({0xaa, 0, 0}));  // the budget counts only new bytes
  EXPECT_FALSE(w.write_bytes(bytes({1})));
}

}  // namespace
}  // namespace egw::tunnel
