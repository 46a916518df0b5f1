// The relay's resume after a full socket (proxy/relay.cc), both ways, on real
// sockets through a branch and a hub on loopback: a download whose client
// does not read (the branch's relay writes to a full socket) and an upload
// whose server does not read (the hub's relay does). While the reader holds,
// the stream's window stops the sender (the gateways' buffers stay bounded)
// and a second connection on the same loop is still answered; once the
// reader reads, every byte arrives, in order, within a bounded time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <thread>

#include "tests/support/loopback_gateway_pair.h"
#include "tests/support/loopback_server.h"
#include "tests/support/loopback_tcp.h"

namespace egw::proxy {
namespace {

using test_support::loopback;
using test_support::pattern;
using test_support::send_all;
using Clock = std::chrono::steady_clock;

// More than the kernel's socket buffers and the stream's window hold
// together, so a reader that holds stops the sender.
constexpr std::size_t kTransferBytes = 32u << 20;
constexpr int kSmallRcvbufBytes = 16 * 1024;
constexpr std::size_t kChunkBytes = 64 * 1024;
// A whole transfer's bound (loopback moves it in well under a second).
constexpr auto kDeadline = std::chrono::seconds(20);
// The longest a draining reader may wait for bytes: 7-38 ms seen on a
// loaded machine (ASan included); a relay that consumes without servicing
// its connection (credit out only with the next timer) waited 0.5-5 s.
constexpr double kLongestStallMs = 1000;

std::vector<std::uint8_t> pattern_chunk(std::uint64_t offset, std::size_t size) {
  std::vector<std::uint8_t> out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = pattern(offset + i);
  return out;
}

// Connected to 127.0.0.1:port with `rcvbuf` set before the handshake (0:
// the kernel's), 10 s send and receive timeouts; -1 on failure.
int connect_to(std::uint16_t port, int rcvbuf) { return test_support::tcp_socket_to(port, rcvbuf, 10); }

// Reads exactly `size` bytes and checks each against the pattern; the bytes
// read (less at EOF, error or kDeadline) and the offset of the first wrong one.
struct Received {
  std::uint64_t bytes = 0;
  std::int64_t first_mismatch = -1;
  double longest_wait_ms = 0;  // between two reads that brought bytes
};
Received read_pattern(int fd, std::size_t size) {
  Received r;
  std::vector<std::uint8_t> buf(kChunkBytes);
  const auto give_up = Clock::now() + kDeadline;
  auto last = Clock::now();
  while (r.bytes < size && Clock::now() < give_up) {
    const ssize_t n = ::recv(fd, buf.data(), std::min(buf.size(), size - r.bytes), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const auto now = Clock::now();
    r.longest_wait_ms = std::max(r.longest_wait_ms, std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
    for (ssize_t i = 0; i < n && r.first_mismatch < 0; ++i) {
      if (buf[static_cast<std::size_t>(i)] != pattern(r.bytes + static_cast<std::uint64_t>(i))) {
        r.first_mismatch = static_cast<std::int64_t>(r.bytes) + i;
      }
    }
    r.bytes += static_cast<std::uint64_t>(n);
  }
  return r;
}

// Sends `size` pattern bytes, counting them in `sent` as they go; false
// on an error or after kDeadline.
bool send_pattern(int fd, std::size_t size, std::atomic<std::uint64_t>& sent) {
  const auto give_up = Clock::now() + kDeadline;
  while (sent < size) {
    if (Clock::now() > give_up) return false;
    const auto chunk = pattern_chunk(sent, std::min(kChunkBytes, size - sent));
    if (!send_all(fd, chunk)) return false;
    sent += chunk.size();
  }
  return true;
}

class GatewayRelayResume : public test_support::LoopbackGatewayPair {
 protected:
  void SetUp() override {
    make_dir("egw-gw-relay-resume");
    start_hub("[\"127.0.0.1/32\"]");
    start_branch_gateway(hub_port());
    set_target(loopback(server_.port()));
    start_io();
  }
  void TearDown() override {
    release_.store(true);
    LoopbackGatewayPair::TearDown();
  }

  // Waits until `counter` stops moving for 300 ms (at most 10 s): the
  // reader's hold has stopped the sender. Its value then.
  static std::uint64_t settled(const std::atomic<std::uint64_t>& counter) {
    std::uint64_t last = counter.load();
    auto still_since = Clock::now();
    const auto give_up = Clock::now() + std::chrono::seconds(10);
    while (Clock::now() < give_up && Clock::now() - still_since < std::chrono::milliseconds(300)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const std::uint64_t now = counter.load();
      if (now != last) still_since = Clock::now();
      last = now;
    }
    return last;
  }

  // 20 one-byte round trips on a connection of their own, through the same
  // gateways (the same loop); the slowest, in ms (a large value if one failed).
  double slowest_ping_ms() {
    const int fd = connect_to(listener_port_, 0);
    if (fd < 0) return 1e9;
    double slowest = 0;
    const std::string head = "PING\n";
    send_all(fd, std::vector<std::uint8_t>(head.begin(), head.end()));
    for (int i = 0; i < 20; ++i) {
      const auto t0 = Clock::now();
      std::uint8_t b = static_cast<std::uint8_t>(i);
      if (::send(fd, &b, 1, MSG_NOSIGNAL) != 1 || ::recv(fd, &b, 1, MSG_WAITALL) != 1 || b != i) {
        slowest = 1e9;
        break;
      }
      slowest = std::max(slowest, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    ::close(fd);
    return slowest;
  }

  std::uint64_t memory_in_use(Gateway& g) { return snapshot(g).memory_in_use_bytes; }

  // The server behind the hub. "DOWN\n": kTransferBytes of pattern, then
  // EOF. "UP\n": nothing read until release_, then kTransferBytes checked
  // into upload_*. "PING\n": echoes each byte.
  void serve(int c) {
    timeval tv{10, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    char head[5] = {};
    const ssize_t n = ::recv(c, head, 3, MSG_WAITALL);
    if (n == 3 && std::string(head, 3) == "DOW" && ::recv(c, head, 2, MSG_WAITALL) == 2) {
      send_pattern(c, kTransferBytes, server_sent_);
    } else if (n == 3 && std::string(head, 3) == "UP\n") {
      // Its buffer as accepted: one that does not read never grows. (Shrunk
      // now, after the handshake, below loopback's 64 KB MSS, it makes the
      // kernel trickle one segment per ~200 ms, or stall 50-240 ms once
      // restored: the kernel's, not the relay's.)
      const auto give_up = Clock::now() + std::chrono::seconds(20);
      while (!release_.load() && Clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const auto r = read_pattern(c, kTransferBytes);
      upload_first_mismatch_ = r.first_mismatch;
      upload_received_ = r.bytes;
      upload_longest_wait_ms_ = r.longest_wait_ms;
      upload_done_ = true;
    } else if (n == 3 && std::string(head, 3) == "PIN" && ::recv(c, head, 2, MSG_WAITALL) == 2) {
      std::uint8_t b = 0;
      while (::recv(c, &b, 1, 0) == 1 && ::send(c, &b, 1, MSG_NOSIGNAL) == 1) {
      }
    }
    ::close(c);
  }

  std::atomic<std::uint64_t> server_sent_{0};
  std::atomic<bool> release_{false};
  std::atomic<bool> upload_done_{false};
  std::atomic<std::uint64_t> upload_received_{0};
  std::atomic<double> upload_longest_wait_ms_{0};
  std::atomic<std::int64_t> upload_first_mismatch_{-1};
  test_support::LoopbackServer server_{[this](int c) { serve(c); }};  // last: its handlers end first
};

// The branch writes to its client's full socket; the client reads later.
TEST_F(GatewayRelayResume, DownloadResumesInOrderAfterTheClientsSocketWasFull) {
  const int fd = connect_to(listener_port_, kSmallRcvbufBytes);
  ASSERT_GE(fd, 0);
  const std::string head = "DOWN\n";
  ASSERT_TRUE(send_all(fd, std::vector<std::uint8_t>(head.begin(), head.end())));

  const std::uint64_t held = settled(server_sent_);
  const std::uint64_t branch_memory = memory_in_use(*branch_);
  const std::uint64_t hub_memory = memory_in_use(*hub_);
  const double ping_ms = slowest_ping_ms();
  std::printf("[ resume   ] client holds: server sent %llu of %zu bytes; stream buffers: branch %llu, hub %llu "
              "bytes; slowest ping beside it %.2f ms\n",
              static_cast<unsigned long long>(held), kTransferBytes, static_cast<unsigned long long>(branch_memory),
              static_cast<unsigned long long>(hub_memory), ping_ms);
  EXPECT_LT(held, kTransferBytes) << "the stream's window must stop the server while the client holds";
  EXPECT_LT(branch_memory + hub_memory, 8u << 20) << "the gateways' buffers must stay bounded";
  EXPECT_LT(ping_ms, 1000.0) << "a second connection on the same loop must be served meanwhile";

  const auto t0 = Clock::now();
  const Received r = read_pattern(fd, kTransferBytes);
  const double drain_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::uint8_t extra = 0;
  const ssize_t eof = ::recv(fd, &extra, 1, 0);
  ::close(fd);
  std::printf("[ resume   ] client drained %llu bytes in %.2f s, longest wait for bytes %.1f ms\n",
              static_cast<unsigned long long>(r.bytes), drain_s, r.longest_wait_ms);
  EXPECT_EQ(r.bytes, kTransferBytes) << "every byte must arrive once the client reads";
  EXPECT_EQ(r.first_mismatch, -1) << "bytes out of order or changed";
  EXPECT_EQ(eof, 0) << "the server's FIN must follow the last byte";
  EXPECT_LT(r.longest_wait_ms, kLongestStallMs) << "credit must flow again as the client reads";
}

// The hub writes to its server's full socket; the server reads later.
TEST_F(GatewayRelayResume, UploadResumesInOrderAfterTheServersSocketWasFull) {
  const int fd = connect_to(listener_port_, 0);
  ASSERT_GE(fd, 0);
  const std::string head = "UP\n";
  ASSERT_TRUE(send_all(fd, std::vector<std::uint8_t>(head.begin(), head.end())));
  std::atomic<std::uint64_t> client_sent{0};
  auto sender = std::async(std::launch::async, [&] {
    const bool ok = send_pattern(fd, kTransferBytes, client_sent);
    ::shutdown(fd, SHUT_WR);
    return ok;
  });

  const std::uint64_t held = settled(client_sent);
  const std::uint64_t branch_memory = memory_in_use(*branch_);
  const std::uint64_t hub_memory = memory_in_use(*hub_);
  const double ping_ms = slowest_ping_ms();
  std::printf("[ resume   ] server holds: client sent %llu of %zu bytes; stream buffers: branch %llu, hub %llu "
              "bytes; slowest ping beside it %.2f ms\n",
              static_cast<unsigned long long>(held), kTransferBytes, static_cast<unsigned long long>(branch_memory),
              static_cast<unsigned long long>(hub_memory), ping_ms);
  EXPECT_LT(held, kTransferBytes) << "the stream's window must stop the client while the server holds";
  EXPECT_LT(branch_memory + hub_memory, 8u << 20) << "the gateways' buffers must stay bounded";
  EXPECT_LT(ping_ms, 1000.0) << "a second connection on the same loop must be served meanwhile";

  const auto t0 = Clock::now();
  release_.store(true);
  EXPECT_TRUE(sender.get()) << "the client's sends must all be taken once the server reads";
  while (!upload_done_.load() && Clock::now() - t0 < kDeadline + std::chrono::seconds(1)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const double drain_s = std::chrono::duration<double>(Clock::now() - t0).count();
  ::close(fd);
  std::printf("[ resume   ] server drained %llu bytes in %.2f s, longest wait for bytes %.1f ms\n",
              static_cast<unsigned long long>(upload_received_.load()), drain_s, upload_longest_wait_ms_.load());
  EXPECT_EQ(upload_received_.load(), kTransferBytes) << "every byte must arrive once the server reads";
  EXPECT_EQ(upload_first_mismatch_.load(), -1) << "bytes out of order or changed";
  EXPECT_LT(upload_longest_wait_ms_.load(), kLongestStallMs) << "credit must flow again as the server reads";
}

}  // namespace
}  // namespace egw::proxy
