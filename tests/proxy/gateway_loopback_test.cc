// A branch and a hub Gateway on loopback, on real sockets, from YAML files
// with wg keys: TCP clients -> branch listener -> tunnel -> hub -> TCP
// servers. Loopback has no NAT, so the branch's destination resolver is set
// by the test (the netns test, tests/gateway/, covers the real interception).
// The gateways run on an io_context thread; clients and servers are plain
// blocking sockets on other threads, with receive timeouts so nothing hangs.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "tests/support/loopback_gateway_pair.h"
#include "tests/support/loopback_server.h"
#include "tunnel/error_codes.h"

namespace egw::proxy {
namespace {

using test_support::loopback;
using test_support::pattern;
using test_support::read_all;
using test_support::send_all;
using test_support::tcp_socket_to;

// The server behind the hub. A client sends "N\n" plus an upload and closes
// its sending side; the server reads to EOF, checks the upload and answers
// "count\n" plus N pattern bytes, then closes. "R\n" makes it send 100 KB
// and reset the connection instead.
class Server {
 public:
  std::uint16_t port() const { return listener_.port(); }
  std::atomic<int> bad_uploads{0};

 private:
  void handle(int c) {
    timeval tv{10, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    int error = 0;
    const auto request = read_all(c, &error);
    const auto newline = std::find(request.begin(), request.end(), '\n');
    const std::string head(request.begin(), newline);
    if (head == "R") {
      std::vector<std::uint8_t> part(100'000, 'x');
      send_all(c, part);
      linger l{1, 0};
      setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
      ::close(c);
      return;
    }
    const std::size_t upload_at = static_cast<std::size_t>(newline - request.begin()) + 1;
    for (std::size_t i = upload_at; i < request.size(); ++i) {
      if (request[i] != pattern(i - upload_at)) {
        ++bad_uploads;
        break;
      }
    }
    const std::string count = std::to_string(request.size() - upload_at) + "\n";
    std::vector<std::uint8_t> reply(count.begin(), count.end());
    const std::size_t n = std::stoul(head);
    for (std::size_t i = 0; i < n; ++i) reply.push_back(pattern(i));
    send_all(c, reply);
    ::close(c);
  }

  test_support::LoopbackServer listener_{[this](int c) { handle(c); }};
};

class GatewayLoopback : public test_support::LoopbackGatewayPair {
 protected:
  void SetUp() override {
    make_dir("egw-gw-loopback");
    start_hub("[\"127.0.0.1/32\"]", hub_extra());
    start_branch_gateway(hub_port());
    set_target(loopback(server_.port()));
    start_io();
  }
  // Top-level YAML lines for the hub's config.
  virtual std::string hub_extra() { return ""; }

  // One exchange: upload `up` bytes, ask for `down`; true if everything
  // came back intact.
  bool exchange(std::size_t up, std::size_t down) {
    const int fd = tcp_socket_to(listener_port_);
    if (fd < 0) return false;
    const std::string head = std::to_string(down) + "\n";
    std::vector<std::uint8_t> request(head.begin(), head.end());
    for (std::size_t i = 0; i < up; ++i) request.push_back(pattern(i));
    const bool sent = send_all(fd, request);
    ::shutdown(fd, SHUT_WR);  // half-close: the answer still comes back
    int error = 0;
    const auto reply = read_all(fd, &error);
    ::close(fd);
    if (!sent || error != 0) return false;
    const std::string count = std::to_string(up) + "\n";
    if (reply.size() != count.size() + down) return false;
    if (!std::equal(count.begin(), count.end(), reply.begin())) return false;
    for (std::size_t i = 0; i < down; ++i) {
      if (reply[count.size() + i] != pattern(i)) return false;
    }
    return true;
  }

  Server server_;
};

TEST_F(GatewayLoopback, DownloadsAndUploadsOfManySizesArriveIntact) {
  for (const std::size_t down : {0ul, 1ul, 1000ul, 65'536ul, 3'000'000ul}) {
    EXPECT_TRUE(exchange(0, down)) << "download " << down;
  }
  for (const std::size_t up : {1ul, 100'000ul, 3'000'000ul}) EXPECT_TRUE(exchange(up, 10)) << "upload " << up;
  EXPECT_EQ(server_.bad_uploads.load(), 0);
  const GatewaySnapshot b = snapshot(*branch_);
  EXPECT_EQ(b.connections_accepted, 8u);
  ASSERT_EQ(b.ensembles.size(), 1u);
  EXPECT_TRUE(b.ensembles[0].up);
  EXPECT_EQ(snapshot(*hub_).connections_accepted, 8u);
}

TEST_F(GatewayLoopback, ConcurrentConnectionsAllComplete) {
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 64; ++i) {
    clients.emplace_back([&, i] { ok += exchange(1000 * static_cast<std::size_t>(i), 20'000 + 997 * i) ? 1 : 0; });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 64);
  EXPECT_EQ(server_.bad_uploads.load(), 0);
  // Every relay ended with its connection (nothing left behind).
  for (int i = 0; i < 50 && (snapshot(*branch_).connections_open || snapshot(*hub_).connections_open); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(snapshot(*branch_).connections_open, 0u);
  EXPECT_EQ(snapshot(*hub_).connections_open, 0u);
  // Nothing buffered either: the running totals of the relays' bytes came back to 0.
  for (int i = 0; i < 100 && (snapshot(*branch_).memory_in_use_bytes || snapshot(*hub_).memory_in_use_bytes); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(snapshot(*branch_).memory_in_use_bytes, 0u);
  EXPECT_EQ(snapshot(*hub_).memory_in_use_bytes, 0u);
}

TEST_F(GatewayLoopback, MemoryInUseCountsAStalledDownloadThenReturnsToZero) {
  const int fd = tcp_socket_to(listener_port_);
  ASSERT_GE(fd, 0);
  const std::size_t down = 40'000'000;  // more than the kernel's buffers: the branch holds the rest
  const std::string head = std::to_string(down) + "\n";
  ASSERT_TRUE(send_all(fd, std::vector<std::uint8_t>(head.begin(), head.end())));
  ::shutdown(fd, SHUT_WR);
  std::uint64_t held = 0;
  // Up to 15 s: under ASan the server needs seconds to build its 40 MB reply.
  for (int i = 0; i < 750 && held == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    held = snapshot(*branch_).memory_in_use_bytes;
  }
  EXPECT_GT(held, 0u);
  int error = 0;
  const auto reply = read_all(fd, &error);
  ::close(fd);
  EXPECT_EQ(error, 0);
  EXPECT_EQ(reply.size(), 2u + down);
  for (int i = 0; i < 100 && (snapshot(*branch_).memory_in_use_bytes || snapshot(*hub_).memory_in_use_bytes); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(snapshot(*branch_).memory_in_use_bytes, 0u);
  EXPECT_EQ(snapshot(*hub_).memory_in_use_bytes, 0u);
}

TEST_F(GatewayLoopback, RefusedDestinationResetsTheClient) {
  auto d = loopback(server_.port());
  d.address = {127, 0, 0, 2};
  set_target(d);
  EXPECT_EQ(read_error_after("10\n"), ECONNRESET);
  EXPECT_EQ(snapshot(*hub_).destinations_refused["loopback"], 1u);  // 127.0.0.2: not listed
  set_target(loopback(server_.port()));
  EXPECT_TRUE(exchange(10, 10));  // everyone else is still served
}

TEST_F(GatewayLoopback, ServerThatIsNotThereResetsTheClient) {
  Server gone;
  const std::uint16_t port = gone.port();
  set_target(loopback(port));
  {
    Server placeholder;  // keep the port from being reused while we test
  }
  // A closed port on loopback: connection refused at the hub.
  const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a);  // bound, never listening: refuses
  socklen_t len = sizeof a;
  getsockname(probe, reinterpret_cast<sockaddr*>(&a), &len);
  set_target(loopback(ntohs(a.sin_port)));
  EXPECT_EQ(read_error_after("10\n"), ECONNRESET);
  ::close(probe);
  EXPECT_EQ(snapshot(*hub_).connections_refused["connect_failed"], 1u);
}

TEST_F(GatewayLoopback, ServerResetMidResponseResetsTheClient) {
  EXPECT_EQ(read_error_after("R\n"), ECONNRESET);
  EXPECT_TRUE(exchange(10, 10));
}

TEST_F(GatewayLoopback, ClientResetReachesTheServerSideAndFreesTheRelay) {
  const int fd = tcp_socket_to(listener_port_);
  ASSERT_GE(fd, 0);
  send_all(fd, std::vector<std::uint8_t>{'5', '0', '\n', 1, 2, 3});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  ::close(fd);  // RST
  for (int i = 0; i < 100 && (snapshot(*branch_).connections_open || snapshot(*hub_).connections_open); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(snapshot(*branch_).connections_open, 0u);
  EXPECT_EQ(snapshot(*hub_).connections_open, 0u);
}

TEST_F(GatewayLoopback, ReloadChangesTheAllowListWithoutDroppingTheTunnel) {
  EXPECT_TRUE(exchange(10, 10));
  auto next = load(write("hub2.yaml", hub_yaml(branch_public_, "[\"127.0.0.2/32\"]", "scheduler: {policy: fair}\n")));
  std::promise<void> done;
  boost::asio::post(io_, [&] {
    hub_->reload(next);
    done.set_value();
  });
  done.get_future().get();
  EXPECT_EQ(read_error_after("10\n"), ECONNRESET);  // 127.0.0.1 is no longer allowed
  const GatewaySnapshot h = snapshot(*hub_);
  EXPECT_EQ(h.config_reloads, 1u);
  EXPECT_EQ(h.destinations_refused.at("loopback"), 1u);
  EXPECT_TRUE(snapshot(*branch_).ensembles[0].up);
}

class GatewayLoopbackTinyLimits : public GatewayLoopback {
  std::string hub_extra() override { return "limits: {connections_per_peer: 2}\n"; }
};

TEST_F(GatewayLoopbackTinyLimits, BeyondTheConnectionLimitNewConnectionsAreRefusedOthersCarryOn) {
  // Two slow exchanges hold the hub's two slots; a third is refused.
  std::vector<int> held;
  for (int i = 0; i < 2; ++i) {
    const int fd = tcp_socket_to(listener_port_);
    send_all(fd, std::vector<std::uint8_t>{'1', '0', '\n'});  // no EOF: the server waits
    held.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(read_error_after("10\n"), ECONNRESET);
  EXPECT_EQ(snapshot(*hub_).connections_refused["limit_connections"], 1u);
  for (int fd : held) {  // the held ones complete normally
    ::shutdown(fd, SHUT_WR);
    int error = 0;
    const auto reply = read_all(fd, &error);
    EXPECT_EQ(error, 0);
    EXPECT_EQ(reply.size(), 2u + 10u);
    ::close(fd);
  }
}

}  // namespace
}  // namespace egw::proxy
