// One LAN client that opens thousands of idle connections through the branch
// (issue 19): it must not take every slot from the others. Per-client limits,
// reclaiming the heaviest client's longest-idle connections when the gateway
// is full, idle and half-closed timeouts that close only relays with nothing
// in flight, and refusals that do not flood the log. The hog connects from
// 127.0.0.2 to a server that accepts and never answers (HoldServer); the
// other client downloads from 127.0.0.1 through the same gateways.
// (The full 16,000-connection run across namespaces: tests/gateway/netns_hog_test.sh.)
#include <fcntl.h>
#include <sys/resource.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>

#include "tests/reliability/loopback_gateways.h"

namespace egw::proxy::reliability {
namespace {

using test_support::read_all;
using test_support::send_all;
using test_support::tcp_socket_to;

// Accepts every connection on one thread and keeps it open, never reading
// or answering (an idle server: thousands of connections, no thread each).
class HoldServer {
 public:
  HoldServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    ::listen(fd_, 4096);
    thread_ = std::thread([this] {
      for (;;) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        std::lock_guard lock(mutex_);
        held_.push_back(c);
      }
    });
  }
  ~HoldServer() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (int c : held_) ::close(c);
  }
  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<int> held_;
};

// The hog's source address.
constexpr const char* kHog = "127.0.0.2";

class ConnectionHog : public LoopbackGateways {
 protected:
  // Top-level YAML lines for the hub.
  virtual std::string hub_extra() { return ""; }
  std::string hub_allow() override {
    return "[\"127.0.0.1/32:" + std::to_string(server_.port()) + "\", \"127.0.0.1/32:" + std::to_string(hold_.port()) +
           "\"]";
  }
  void SetUp() override {
    // The hog's sockets, the branch's, the hub's and the hold server's: 4 per connection.
    rlimit r{};
    getrlimit(RLIMIT_NOFILE, &r);
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
    if (r.rlim_cur < 4 * kMaxHog + 512) GTEST_SKIP() << "needs " << 4 * kMaxHog + 512 << " descriptors";
    make_dir("egw-hog");
    start_hub(hub_allow(), hub_extra());
    set_target(loopback(server_.port()));
    start_io();
    sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_);
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  void TearDown() override {
    for (int fd : hog_) ::close(fd);
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
    if (sink_) LoopbackGateways::TearDown();
  }

  // The branch with `limits` (a YAML flow mapping); the hog's connections
  // go to the hold server, everyone else's to target().
  void start_branch_with(const std::string& limits) {
    std::promise<void> started;
    boost::asio::post(io_, [&] {
      branch_ = std::make_unique<proxy::Gateway>(
          io_, load(write("branch.yaml", branch_yaml(hub_port()) + "limits: " + limits + "\n")));
      branch_->set_destination_resolver([this](int fd) {
        sockaddr_in from{};
        socklen_t len = sizeof from;
        getpeername(fd, reinterpret_cast<sockaddr*>(&from), &len);
        char text[INET_ADDRSTRLEN] = {};
        inet_ntop(AF_INET, &from.sin_addr, text, sizeof text);
        return std::optional(std::string(text) == kHog ? loopback(hold_.port()) : target());
      });
      branch_->start();
      listener_port_ = branch_->listener_endpoint().port();
      started.set_value();
    });
    started.get_future().get();
  }

  // `count` connections from the hog's address that send nothing; waits
  // until the branch has accepted or refused every one.
  void open_hog(std::size_t count) {
    const auto before = decided();
    for (std::size_t i = 0; i < count; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      inet_pton(AF_INET, kHog, &a.sin_addr);
      ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
      a.sin_port = htons(listener_port_);
      inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
      // A refused connection is reset as soon as it is accepted; a connect()
      // whose thread wakes after that reset returns ECONNRESET (CI, once, at
      // the 395th connection): it was refused, as hog_states() would say.
      if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ASSERT_EQ(errno, ECONNRESET) << i << ": " << strerror(errno);
        ++reset_in_connect_;
        ::close(fd);
        continue;
      }
      hog_.push_back(fd);
    }
    for (int i = 0; i < 400 && decided() < before + count; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ASSERT_EQ(decided(), before + count);
  }
  // Branch connections accepted or refused so far.
  std::uint64_t decided() {
    const GatewaySnapshot s = snapshot(*branch_);
    std::uint64_t n = s.connections_accepted;
    for (const auto& [reason, count] : s.connections_refused) n += count;
    return n;
  }
  // What each hog socket sees now without waiting: "open", "eof" or "reset".
  std::map<std::string, std::size_t> hog_states() {
    std::map<std::string, std::size_t> states;
    if (reset_in_connect_ > 0) states["reset"] = reset_in_connect_;
    for (int fd : hog_) {
      char byte;
      const ssize_t n = ::recv(fd, &byte, 1, MSG_DONTWAIT);
      if (n == 0) ++states["eof"];
      else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) ++states["open"];
      else if (n < 0 && errno == ECONNRESET) ++states["reset"];
      else ++states["other"];
    }
    return states;
  }
  std::size_t log_lines_with(const std::string& part) {
    const std::string log = log_.str();
    std::size_t lines = 0;
    for (std::size_t at = 0; (at = log.find(part, at)) != std::string::npos; ++at) ++lines;
    return lines;
  }

  static constexpr std::size_t kMaxHog = 1'200;
  HoldServer hold_;
  std::vector<int> hog_;
  std::size_t reset_in_connect_ = 0;  // hog connections reset before connect() returned
  std::ostringstream log_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

// main: the hog's 1,000 idle connections filled connections_per_peer and
// every other client got a reset. Now a newcomer takes the place of the
// hog's longest-idle connections (64 at a time, reset), and its downloads
// go through.
TEST_F(ConnectionHog, AFullGatewayReclaimsTheHeaviestClientsIdleConnections) {
  start_branch_with("{connections_per_peer: 1000}");
  open_hog(1'100);
  GatewaySnapshot s = snapshot(*branch_);
  EXPECT_EQ(s.connections_open, 1'000u);
  EXPECT_EQ(s.connections_refused["limit_connections"], 100u);  // the hog does not reclaim from itself
  EXPECT_EQ(s.clients, 1u);
  EXPECT_EQ(s.client_connections_max, 1'000u);
  // TCP keepalive on both legs: the hub's sockets to the server, the branch's from the hog.
  const auto keepalive = [](const std::string& filter) {
    return test_support::run_command("ss -tnoH state established '( " + filter + " )' | grep -c 'timer:(keepalive'");
  };
  // At least: ss sees the whole host, where a parallel test's socket may
  // share a port number (seen once: 1,001); without keepalive it is 0. The
  // hub opens its legs as the stream opens arrive, so on a loaded machine
  // some are still on their way (a CI-like run read 826): wait up to 10 s.
  std::size_t server_legs = 0;
  for (int i = 0; i < 100 && server_legs < 1000u; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    server_legs = std::stoul(keepalive("dport = :" + std::to_string(hold_.port())));
  }
  EXPECT_GE(server_legs, 1000u);
  EXPECT_GE(std::stoul(keepalive("sport = :" + std::to_string(listener_port_.load()))), 1000u);
  std::this_thread::sleep_for(std::chrono::milliseconds(1'200));  // idle 1 s at least
  const auto t0 = std::chrono::steady_clock::now();
  int ok = 0;
  for (int i = 0; i < 20; ++i) ok += download(100'000) ? 1 : 0;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(ok, 20);
  s = snapshot(*branch_);
  EXPECT_EQ(s.connections_closed["reclaimed"], 64u);
  EXPECT_EQ(s.connections_refused["limit_connections"], 100u);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto states = hog_states();
  EXPECT_EQ(states["reset"], 100u + 64u);  // refused, then reclaimed
  EXPECT_EQ(states["open"], 1'000u - 64u);
  EXPECT_EQ(log_lines_with("reset 64 idle connections of 127.0.0.2 (1000 open) for 127.0.0.1"), 1u)
      << log_.str();
  std::printf("hog of 1,000 idle connections at connections_per_peer 1,000: 20 of 20 downloads of 100 kB "
              "beside it in %.2f s, 64 of its connections reclaimed\n",
              seconds);
}

// connections_per_client: the hog gets its share, the rest a reset, logged a
// few times and summed up, not once per connection.
TEST_F(ConnectionHog, AClientBeyondItsOwnLimitIsRefusedAndTheOthersAreNot) {
  start_branch_with("{connections_per_client: 300}");
  open_hog(1'000);
  GatewaySnapshot s = snapshot(*branch_);
  EXPECT_EQ(s.connections_open, 300u);
  EXPECT_EQ(s.connections_refused["limit_client_connections"], 700u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(download(100'000));
  std::this_thread::sleep_for(std::chrono::milliseconds(1'100));  // the held-back lines are summed up
  const std::size_t lines = log_lines_with(": limit_client_connections");
  EXPECT_GE(lines, 2u);
  EXPECT_LE(lines, 100u);
  EXPECT_EQ(log_lines_with("\"refused client: limit_client_connections\" events in the last second"),
            lines - log_lines_with("refused client 127.0.0.2:"))
      << log_.str();
  std::printf("hog: 300 of 1,000 connections admitted, 700 refused in %zu log lines\n", lines);
}

// memory_per_client_bytes: a client whose downloads sit unread in the
// gateway's buffers gets resets for new connections (once the next second's
// sum sees it); another client does not, and the unread bytes still arrive.
TEST_F(ConnectionHog, AClientOverItsMemoryIsRefusedAndTheOthersAreNot) {
  start_branch_with("{memory_per_client_bytes: 262144}");
  std::vector<int> readers;
  for (int i = 0; i < 3; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    timeval tv{10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(listener_port_);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
    const std::string ask = "8000000\n";
    ASSERT_TRUE(send_all(fd, std::vector<std::uint8_t>(ask.begin(), ask.end())));
    readers.push_back(fd);
  }
  // Buffers fill, then a sweep (each second) sums them: two sweeps' margin,
  // since under ASan and ctest -j2 the fill took longer than 2.2 s once.
  std::this_thread::sleep_for(std::chrono::milliseconds(3'200));
  EXPECT_EQ(read_error_after("10\n"), ECONNRESET);  // from 127.0.0.1, the same client
  EXPECT_EQ(snapshot(*branch_).connections_refused["limit_client_memory"], 1u);
  // Another client address is served.
  const int other = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, kHog, &a.sin_addr);
  ASSERT_EQ(::bind(other, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  a.sin_port = htons(listener_port_);
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  ASSERT_EQ(::connect(other, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::shutdown(other, SHUT_WR);  // to the hold server: an idle connection, accepted
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(snapshot(*branch_).clients, 2u);
  ::close(other);
  for (int fd : readers) {
    int error = 0;
    const auto got = read_all(fd, &error);
    ::close(fd);
    EXPECT_EQ(error, 0);
    EXPECT_EQ(got.size(), 8'000'000u);
  }
}

// Idle and half-closed relays are closed (nothing was in flight), so a hog
// that left or went quiet frees its slots; a relay with bytes in
// flight to a client that does not read is left alone, and its bytes arrive.
TEST_F(ConnectionHog, IdleAndHalfClosedRelaysAreClosedButNotOnesWithBytesInFlight) {
  start_branch_with("{idle_timeout_ms: 1000, half_closed_timeout_ms: 1000}");
  // A download the client does not read yet (a small receive window): bytes
  // wait in the gateways and the sockets' queues, nothing moves.
  const int reader = ::socket(AF_INET, SOCK_STREAM, 0);
  const int small = 4096;
  setsockopt(reader, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  timeval tv{10, 0};
  setsockopt(reader, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(listener_port_);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(reader, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  for (int i = 0; i < 200 && decided() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  constexpr std::size_t kReadLater = 32'000'000;
  const std::string ask = std::to_string(kReadLater) + "\n";
  ASSERT_TRUE(send_all(reader, std::vector<std::uint8_t>(ask.begin(), ask.end())));
  open_hog(300);
  for (std::size_t i = 200; i < 300; ++i) ::shutdown(hog_[i], SHUT_WR);  // half-closed, the server never closes
  const auto t0 = std::chrono::steady_clock::now();
  GatewaySnapshot s;
  for (int i = 0; i < 200; ++i) {  // 10 s at most
    s = snapshot(*branch_);
    if (s.connections_open <= 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double freed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(s.connections_open, 1u);  // the reader's
  EXPECT_EQ(s.connections_closed["idle_timeout"], 200u);
  EXPECT_EQ(s.connections_closed["half_closed_timeout"], 100u);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto states = hog_states();
  EXPECT_EQ(states["eof"], 200u);    // idle: a FIN, as from a server's own idle timeout
  EXPECT_EQ(states["reset"], 100u);  // waiting for an answer: never a FIN that would say "that was all"
  EXPECT_LE(log_lines_with("idle connections: "), 10u);
  int error = 0;
  const auto got = read_all(reader, &error);
  ::close(reader);
  EXPECT_EQ(error, 0);
  ASSERT_EQ(got.size(), kReadLater);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], pattern(i)) << i;
  std::printf("300 idle or half-closed relays closed %.2f s after the hog went quiet (timeouts 1 s); the 32 MB reader "
              "intact\n", freed_s);
}

// The hub's relays time out too (its clients are the branch's streams): the
// server gets a FIN, the branch's client a reset (its stream was reset).
class ConnectionHogHubTimeouts : public ConnectionHog {
 protected:
  std::string hub_extra() override { return "limits: {idle_timeout_ms: 1000}\n"; }
};

TEST_F(ConnectionHogHubTimeouts, IdleRelaysAtTheHubAreClosed) {
  start_branch_with("{}");
  open_hog(100);
  // Until the hub has closed them all: its relays open a little after the
  // branch accepted (a CI run once read 0 open before any had arrived).
  GatewaySnapshot h;
  for (int i = 0; i < 100; ++i) {
    h = snapshot(*hub_);
    if (h.connections_open == 0 && h.connections_closed["idle_timeout"] >= 100) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(h.connections_open, 0u);
  EXPECT_EQ(h.connections_closed["idle_timeout"], 100u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(snapshot(*branch_).connections_open, 0u);
  EXPECT_EQ(hog_states()["reset"], 100u);
}

}  // namespace
}  // namespace egw::proxy::reliability
