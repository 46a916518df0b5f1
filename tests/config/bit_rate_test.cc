#include "config/bit_rate.h"

#include <gtest/gtest.h>

namespace egw::config {
namespace {

std::uint64_t rate(const std::string& text) {
  auto r = parse_bit_rate(text);
  if (auto* err = std::get_if<std::string>(&r)) {
    ADD_FAILURE() << text << ": " << *err;
    return 0;
  }
  return std::get<std::uint64_t>(r);
}

std::string error(const std::string& text) {
  auto r = parse_bit_rate(text);
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : "(parsed)";
}

TEST(BitRate, UnitsAsShapersWriteThem) {
  EXPECT_EQ(rate("20000000"), 20'000'000u);
  EXPECT_EQ(rate("950k"), 950'000u);
  EXPECT_EQ(rate("950K"), 950'000u);
  EXPECT_EQ(rate("19M"), 19'000'000u);
  EXPECT_EQ(rate("19Mbit"), 19'000'000u);
  EXPECT_EQ(rate("19mbit"), 19'000'000u);
  EXPECT_EQ(rate("19 Mbit/s"), 19'000'000u);
  EXPECT_EQ(rate("95Mbps"), 95'000'000u);
  EXPECT_EQ(rate("1.5G"), 1'500'000'000u);
  EXPECT_EQ(rate("0.5Gbit"), 500'000'000u);
}

TEST(BitRate, RefusesBytesJunkAndOutOfRange) {
  EXPECT_NE(error("10MB").find("not bytes"), std::string::npos);
  EXPECT_NE(error("fast").find("expected a rate"), std::string::npos);
  EXPECT_NE(error("19Mbitz").find("expected a rate"), std::string::npos);
  EXPECT_NE(error("1.2.3M").find("expected a rate"), std::string::npos);
  EXPECT_NE(error("-5M").find("expected a rate"), std::string::npos);
  EXPECT_NE(error("").find("expected a rate"), std::string::npos);
  EXPECT_NE(error("100").find("out of range"), std::string::npos);
  EXPECT_NE(error("0").find("out of range"), std::string::npos);
  EXPECT_NE(error("20000G").find("out of range"), std::string::npos);
}

}  // namespace
}  // namespace egw::config
