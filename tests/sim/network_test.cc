#include "tests/sim/network.h"

#include <vector>

#include <gtest/gtest.h>

namespace egw::sim {
namespace {

TEST(DumbbellTest, RoutesByAddressAcrossTheRightLink) {
  EventLoop loop;
  DumbbellConfig config;
  config.hosts_per_side = 2;
  config.forward.rate_bits_per_second = 8'000'000;  // 1000 B = 1 ms
  config.forward.propagation_delay = ms(10);
  config.reverse.rate_bits_per_second = 800'000;    // 1000 B = 10 ms
  config.reverse.propagation_delay = ms(20);
  Dumbbell net(loop, config);
  std::vector<std::pair<Address, Instant>> got;
  for (std::size_t i = 0; i < 2; ++i) {
    for (Address a : {net.left(i), net.right(i)}) {
      net.attach(a, [&, a](Packet p) {
        EXPECT_EQ(p.dst, a);
        got.emplace_back(a, loop.now());
      });
    }
  }
  net.send(Packet{net.left(0), net.right(1), std::vector<std::byte>(1000), false});
  net.send(Packet{net.right(0), net.left(1), std::vector<std::byte>(1000), false});
  loop.run_until(instant_at(ms(100)));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], std::make_pair(net.right(1), instant_at(ms(1 + 10))));
  EXPECT_EQ(got[1], std::make_pair(net.left(1), instant_at(ms(10 + 20))));
  EXPECT_EQ(net.forward().stats().packets_delivered, 1u);
  EXPECT_EQ(net.reverse().stats().packets_delivered, 1u);
}

TEST(DumbbellTest, RejectsSameSideAndUnknownAddresses) {
  EventLoop loop;
  DumbbellConfig config;
  config.hosts_per_side = 2;
  Dumbbell net(loop, config);
  EXPECT_THROW(net.send(Packet{net.left(0), net.left(1), {}, false}), std::invalid_argument);
  EXPECT_THROW(net.send(Packet{net.left(0), 12345, {}, false}), std::invalid_argument);
  EXPECT_THROW(net.right(2), std::out_of_range);
}

TEST(DumbbellTest, SharedBottleneckQueuesPacketsFromAllHosts) {
  EventLoop loop;
  DumbbellConfig config;
  config.hosts_per_side = 3;
  config.forward.rate_bits_per_second = 8'000'000;
  config.forward.queue_limit_packets = 4;
  Dumbbell net(loop, config);
  int delivered = 0;
  for (std::size_t i = 0; i < 3; ++i) net.attach(net.right(i), [&](Packet) { ++delivered; });
  // 3 hosts x 3 packets at once into one queue of 4 (+1 on the wire): 9 - 5 = 4 dropped.
  for (int k = 0; k < 3; ++k) {
    for (std::size_t i = 0; i < 3; ++i) {
      net.send(Packet{net.left(i), net.right(i), std::vector<std::byte>(1000), false});
    }
  }
  loop.run_until(instant_at(ms(100)));
  EXPECT_EQ(delivered, 5);
  EXPECT_EQ(net.forward().stats().dropped(DropCause::queue_full), 4u);
}

}  // namespace
}  // namespace egw::sim
