#include "tests/sim/stream_content.h"

#include <vector>

#include <gtest/gtest.h>

#include "tests/sim/web.h"

namespace egw::sim {
namespace {

TEST(StreamContentTest, FillIsAFunctionOfStreamAndOffset) {
  std::vector<std::byte> whole(100);
  fill_content(4, 0, whole);
  // Any sub-range, at any alignment, equals the same slice of the whole.
  for (std::size_t start : {0u, 1u, 7u, 8u, 13u}) {
    std::vector<std::byte> part(50);
    fill_content(4, start, part);
    for (std::size_t i = 0; i < part.size(); ++i) ASSERT_EQ(part[i], whole[start + i]) << start;
  }
  std::vector<std::byte> other(100);
  fill_content(8, 0, other);
  EXPECT_NE(whole, other);  // another stream, other bytes
}

TEST(StreamContentTest, MismatchesCountMisplacedBytes) {
  std::vector<std::byte> data(64);
  fill_content(1, 1000, data);
  EXPECT_EQ(count_mismatches(1, 1000, data), 0u);
  // The same bytes claimed at the wrong offset (a duplicated or shifted
  // chunk): almost every byte differs; at least 56 of 64 is a safe floor.
  EXPECT_GE(count_mismatches(1, 1008, data), 56u);
  data[10] ^= std::byte{1};
  EXPECT_EQ(count_mismatches(1, 1000, data), 1u);
}

TEST(WebRequestTest, EncodingIsBigEndianIndexSizeClass) {
  const auto r = encode_web_request(0x01020304, WebObject{0x0A0B0C0D0E0F1011, ContentClass::script, false});
  const std::array<std::byte, kWebRequestBytes> expected = {
      std::byte{1},    std::byte{2},    std::byte{3},    std::byte{4},    std::byte{0x0A},
      std::byte{0x0B}, std::byte{0x0C}, std::byte{0x0D}, std::byte{0x0E}, std::byte{0x0F},
      std::byte{0x10}, std::byte{0x11}, std::byte{1}};  // script = 1
  EXPECT_EQ(r, expected);
}

}  // namespace
}  // namespace egw::sim
