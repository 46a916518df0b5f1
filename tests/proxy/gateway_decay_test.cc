// classify.bulk_after_bytes (issue 21, E-TCP's decay): a stream that keeps
// carrying data past the threshold falls to bulk, on real sockets through a
// branch and a hub on loopback; one that a destination rule classified
// keeps its class.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tests/support/loopback_gateway_pair.h"
#include "tests/support/loopback_server.h"

namespace egw::proxy {
namespace {

using test_support::loopback;
using test_support::read_all;
using test_support::send_all;
using test_support::tcp_socket_to;

class GatewayDecay : public test_support::LoopbackGatewayPair {
 protected:
  void start(const std::string& classify) {
    make_dir("egw-gw-decay");
    start_hub("[\"127.0.0.1/32\"]");
    branch_ = std::make_unique<Gateway>(io_, load(write("branch.yaml", branch_yaml(hub_port()) + classify)));
    branch_->set_destination_resolver([this](int) { return std::optional(target()); });
    branch_->start();
    listener_port_ = branch_->listener_endpoint().port();
    set_target(loopback(server_.port()));
    start_io();
  }

  // Sends 3 MB to the client, then holds the connection open until the
  // client closes: the stream stays alive for the once-a-second check.
  test_support::LoopbackServer server_{[](int c) {
    timeval tv{10, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char first = 0;
    if (::recv(c, &first, 1, 0) == 1) send_all(c, std::vector<std::uint8_t>(3'000'000, 'x'));
    int error = 0;
    read_all(c, &error);
    ::close(c);
  }};

  // A client that reads the 3 MB and stays connected; the branch's view of
  // its stream after the gateways had a few seconds to decide.
  StreamSnapshot stream_after_download() {
    const int fd = tcp_socket_to(listener_port_);
    EXPECT_GE(fd, 0);
    send_all(fd, std::vector<std::uint8_t>{'g'});
    std::size_t got = 0;
    std::vector<char> buffer(65536);
    while (got < 3'000'000) {
      const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    EXPECT_EQ(got, 3'000'000u);
    StreamSnapshot seen;
    for (int i = 0; i < 25; ++i) {  // up to 2.5 s: the check runs once a second
      const auto s = snapshot(*branch_);
      if (!s.streams.empty()) seen = s.streams.front();
      if (seen.content_class == ContentClass::bulk) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ::close(fd);
    return seen;
  }
};

TEST_F(GatewayDecay, AStreamPastTheThresholdFallsToBulk) {
  start("classify: {default: web, bulk_after_bytes: 1000000}\n");
  const StreamSnapshot s = stream_after_download();
  EXPECT_EQ(s.content_class, ContentClass::bulk);
  EXPECT_EQ(snapshot(*branch_).streams_decayed_to_bulk, 1u);
}

TEST_F(GatewayDecay, ADestinationRuleKeepsItsClass) {
  start("classify: {destinations: {streaming: [\"127.0.0.1/32\"]}, bulk_after_bytes: 1000000}\n");
  const StreamSnapshot s = stream_after_download();
  EXPECT_EQ(s.content_class, ContentClass::streaming);
  EXPECT_EQ(snapshot(*branch_).streams_decayed_to_bulk, 0u);
}

}  // namespace
}  // namespace egw::proxy
