// A ClientHello that reaches the branch after interception.first_bytes_wait_ms
// (a slow client: nghttp on a loaded machine, the WAN lab's HTTP/2 page)
// still classifies its stream by its SNI. The stream opens as `default`
// (bulk) and takes the SNI's class when the bytes come; the stage counters
// say which stage decided. On real sockets through a branch and a hub on
// loopback (wait 5 ms, the hello 150 ms late).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/proxy/client_hello_builder.h"
#include "tests/support/loopback_gateway_pair.h"
#include "tests/support/loopback_server.h"

namespace egw::proxy {
namespace {

using test_support::loopback;
using test_support::read_all;
using test_support::send_all;
using test_support::tcp_socket_to;

constexpr auto kLate = std::chrono::milliseconds(150);  // the branch waits 5 ms

std::vector<std::uint8_t> bytes_of(const test_data::Bytes& b) {
  std::vector<std::uint8_t> out(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) out[i] = static_cast<std::uint8_t>(b[i]);
  return out;
}

class GatewayLateHello : public test_support::LoopbackGatewayPair {
 protected:
  void SetUp() override {
    make_dir("egw-gw-late-hello");
    start_hub("[\"127.0.0.1/32\"]");
    start_branch_gateway(hub_port());
    set_target(loopback(server_.port()));
    start_io();
  }

  // Holds each connection until the client closes.
  test_support::LoopbackServer server_{[](int c) {
    timeval tv{1, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int error = 0;
    read_all(c, &error);
    ::close(c);
  }};

  // Connects, sends `early` at once and `late` after kLate; the branch's
  // stream once its class is not bulk (or after 1 s), then closes.
  StreamSnapshot stream_after(const std::vector<std::uint8_t>& early, const std::vector<std::uint8_t>& late) {
    const int fd = tcp_socket_to(listener_port_);
    EXPECT_GE(fd, 0);
    if (!early.empty()) send_all(fd, early);
    std::this_thread::sleep_for(kLate);
    send_all(fd, late);
    StreamSnapshot seen;
    for (int i = 0; i < 20; ++i) {
      const auto s = snapshot(*branch_);
      if (!s.streams.empty()) seen = s.streams.front();
      if (!s.streams.empty() && seen.content_class != ContentClass::bulk) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::close(fd);
    return seen;
  }

  std::uint64_t stage(const std::string& name) {
    const auto s = snapshot(*branch_);
    const auto it = s.streams_classified.find(name);
    return it == s.streams_classified.end() ? 0 : it->second;
  }
};

TEST_F(GatewayLateHello, ALateSniStillClassifiesTheStream) {
  const auto hello = bytes_of(test_data::client_hello_records("www.h2lab.test"));
  EXPECT_EQ(stream_after({}, hello).content_class, ContentClass::web);  // classify.unknown_host
  EXPECT_EQ(stage("unknown_host"), 1u);
  EXPECT_EQ(stage("default"), 0u);
}

TEST_F(GatewayLateHello, AHelloCutBeforeItsNameWaitsForTheRest) {
  const auto hello = bytes_of(test_data::client_hello_records("www.h2lab.test"));
  const std::vector<std::uint8_t> head(hello.begin(), hello.begin() + 20);
  const std::vector<std::uint8_t> rest(hello.begin() + 20, hello.end());
  EXPECT_EQ(stream_after(head, rest).content_class, ContentClass::web);
  EXPECT_EQ(stage("unknown_host"), 1u);
  EXPECT_EQ(stage("default"), 0u);
}

TEST_F(GatewayLateHello, LateCleartextStaysDefault) {
  const std::string get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  EXPECT_EQ(stream_after({}, std::vector<std::uint8_t>(get.begin(), get.end())).content_class, ContentClass::bulk);
  EXPECT_EQ(stage("default"), 1u);
  EXPECT_EQ(stage("unknown_host"), 0u);
}

}  // namespace
}  // namespace egw::proxy
