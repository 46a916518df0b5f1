// wanem's option text (bench/wanem/options.h) and IP header reading (ip_info.h).
#include "bench/wanem/options.h"

#include <gtest/gtest.h>

#include <vector>

#include "bench/wanem/ip_info.h"

namespace egw::wanem {
namespace {

TEST(WanemOptions, ParsesEveryKeyWithItsUnit) {
  LinkConfig c;
  ASSERT_EQ(apply_options("rate=800k,delay=50,jitter=0.5ms,reorder=0.25,queue=10p,loss=1%,le_drop=0,seed=9", c), "");
  EXPECT_EQ(c.rate_bps, 800'000u);
  EXPECT_EQ(c.delay, std::chrono::milliseconds(50));
  EXPECT_EQ(c.jitter, std::chrono::microseconds(500));
  EXPECT_DOUBLE_EQ(c.reorder, 0.25);
  EXPECT_EQ(c.queue_packets, 10u);
  EXPECT_EQ(c.queue_bytes, 0u);
  EXPECT_DOUBLE_EQ(c.loss, 0.01);
  EXPECT_FALSE(c.le_drop);
  EXPECT_EQ(c.seed, 9u);
}

TEST(WanemOptions, RateSuffixesAreDecimal) {
  LinkConfig c;
  ASSERT_EQ(apply_options("rate=10M", c), "");
  EXPECT_EQ(c.rate_bps, 10'000'000u);
  ASSERT_EQ(apply_options("rate=1.5G", c), "");
  EXPECT_EQ(c.rate_bps, 1'500'000'000u);
  ASSERT_EQ(apply_options("rate=64000", c), "");
  EXPECT_EQ(c.rate_bps, 64'000u);
  ASSERT_EQ(apply_options("rate=0", c), "");
  EXPECT_EQ(c.rate_bps, 0u);
}

TEST(WanemOptions, QueueInPacketsOrBytesOrUnlimited) {
  LinkConfig c;
  ASSERT_EQ(apply_options("queue=15000b", c), "");
  EXPECT_EQ(c.queue_bytes, 15'000u);
  ASSERT_EQ(apply_options("queue=10p", c), "");  // one unit replaces the other
  EXPECT_EQ(c.queue_bytes, 0u);
  EXPECT_EQ(c.queue_packets, 10u);
  ASSERT_EQ(apply_options("queue=0", c), "");
  EXPECT_EQ(c.queue_packets, 0u);
}

TEST(WanemOptions, ChangesOnlyWhatItNames) {
  LinkConfig c;
  ASSERT_EQ(apply_options("rate=1M,delay=20", c), "");
  ASSERT_EQ(apply_options("loss=1", c), "");
  EXPECT_EQ(c.rate_bps, 1'000'000u);
  EXPECT_EQ(c.delay, std::chrono::milliseconds(20));
  EXPECT_DOUBLE_EQ(c.loss, 1);
  ASSERT_EQ(apply_options("reorder=true, le_drop=on", c), "");
  EXPECT_DOUBLE_EQ(c.reorder, 1);
  EXPECT_TRUE(c.le_drop);
}

TEST(WanemOptions, RejectsBadInput) {
  for (const char* bad : {"rate=fast", "rate=-1", "delay=", "loss=1.5", "loss=200%", "queue=10", "queue=10x",
                          "le_drop=0.5", "colour=red", "rate", "seed=x"}) {
    LinkConfig c;
    EXPECT_NE(apply_options(bad, c), "") << bad;
  }
}

std::vector<std::uint8_t> ipv4(std::uint8_t tos, std::uint8_t proto) {
  std::vector<std::uint8_t> p(28, 0);
  p[0] = 0x45;
  p[1] = tos;
  p[9] = proto;
  p[20] = 0x1f, p[21] = 0x90;  // 8080
  p[22] = 0x00, p[23] = 0x35;  // 53
  return p;
}

TEST(WanemIpInfo, Ipv4DscpAndPorts) {
  const auto le = parse_ip(ipv4(0x04, 17));  // DSCP 1, ECN 0
  EXPECT_TRUE(is_le(le));
  EXPECT_TRUE(le.has_ports);
  EXPECT_EQ(le.src_port, 8080);
  EXPECT_EQ(le.dst_port, 53);
  EXPECT_TRUE(is_le(parse_ip(ipv4(0x07, 6))));   // DSCP 1 with ECN bits set
  EXPECT_FALSE(is_le(parse_ip(ipv4(0x08, 6))));  // DSCP 2
}

TEST(WanemIpInfo, Ipv6TrafficClass) {
  std::vector<std::uint8_t> p(48, 0);
  p[0] = 0x60;  // version 6, traffic class 0x04 spans bytes 0 and 1
  p[1] = 0x40;
  p[6] = 6;
  p[40] = 0x01, p[41] = 0xbb;
  const auto info = parse_ip(p);
  EXPECT_EQ(info.version, 6);
  EXPECT_TRUE(is_le(info));
  EXPECT_EQ(info.protocol, 6);
  EXPECT_EQ(info.src_port, 443);
  p[1] = 0x00;
  EXPECT_FALSE(is_le(parse_ip(p)));
}

TEST(WanemIpInfo, NotIp) {
  EXPECT_EQ(parse_ip(std::vector<std::uint8_t>(10, 0x45)).version, 0);
  EXPECT_FALSE(is_le(parse_ip(std::vector<std::uint8_t>{})));
}

}  // namespace
}  // namespace egw::wanem
