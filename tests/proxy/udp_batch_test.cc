// UdpBatch on real sockets: a full socket buffer keeps the rest of the batch
// in order (issue 22: EAGAIN used to drop it), and the queue's bound.
//
// A full buffer needs datagrams that stay charged to the socket: on plain
// loopback the kernel frees them as it hands them to the receiver, so
// sendmmsg never sees EAGAIN. The test's own namespace puts a rate-limited
// qdisc (tbf) on its loopback and the sender gets the smallest SO_SNDBUF.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "proxy/udp_batch.h"
#include "tests/support/private_netns.h"

namespace egw::proxy {
namespace {

using tunnel::session::PeerAddress;

constexpr std::size_t kDatagramBytes = 1200;

struct UdpPair {
  int sender = -1;
  int receiver = -1;
  PeerAddress to;
  ~UdpPair() {
    if (sender >= 0) ::close(sender);
    if (receiver >= 0) ::close(receiver);
  }
  // Both on 127.0.0.1; the sender non-blocking with the smallest send buffer.
  bool open() {
    receiver = ::socket(AF_INET, SOCK_DGRAM, 0);
    sender = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    const int rcvbuf = 8 << 20;
    const int sndbuf = 4096;  // the kernel's minimum: ~4 datagrams
    if (::bind(receiver, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(receiver, reinterpret_cast<sockaddr*>(&a), &len) != 0 ||
        ::setsockopt(receiver, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0 ||
        ::setsockopt(sender, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf) != 0) {
      return false;
    }
    sockaddr_storage ss{};
    std::memcpy(&ss, &a, sizeof a);
    to = from_sockaddr(ss);
    return true;
  }
};

std::vector<std::byte> numbered(std::uint32_t n) {
  std::vector<std::byte> d(kDatagramBytes, std::byte{0x5a});
  std::memcpy(d.data(), &n, sizeof n);
  return d;
}

// Datagrams written into next_slot() (where the driver seals them) are
// queued where they lie, mixed with copied ones, and leave equal and in
// order, same-size runs as GSO messages.
TEST(UdpBatch, DatagramsWrittenInTheNextSlotLeaveEqualAndInOrder) {
  UdpPair p;
  ASSERT_TRUE(p.open());
  const int sndbuf = 8 << 20;
  ::setsockopt(p.sender, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof sndbuf);
  UdpBatch batch;
  constexpr std::uint32_t kCount = 50;
  for (std::uint32_t i = 0; i < kCount; ++i) {
    const std::vector<std::byte> d = numbered(i);
    if (i % 7 == 3) {  // now and then one copied in, as a handshake message is
      ASSERT_TRUE(batch.add(p.to, {}, AF_INET, d));
      continue;
    }
    const std::span<std::byte> slot = batch.next_slot();
    ASSERT_GE(slot.size(), d.size());
    std::memcpy(slot.data(), d.data(), d.size());
    ASSERT_TRUE(batch.add(p.to, {}, AF_INET, slot.first(d.size())));
    // Queued in place: the next slot starts right after it.
    EXPECT_EQ(batch.next_slot().data(), slot.data() + d.size());
  }
  UdpBatch::SendCounts counts;
  ASSERT_EQ(batch.send(p.sender, counts), UdpBatch::SendResult::sent);
  EXPECT_EQ(counts.datagrams_sent, kCount);
  std::vector<std::byte> got(4096);
  for (std::uint32_t i = 0; i < kCount; ++i) {
    pollfd pfd{p.receiver, POLLIN, 0};
    ASSERT_EQ(::poll(&pfd, 1, 2000), 1) << "datagram " << i << " missing";
    const ssize_t n = ::recv(p.receiver, got.data(), got.size(), 0);
    ASSERT_EQ(n, static_cast<ssize_t>(kDatagramBytes));
    EXPECT_EQ(std::vector<std::byte>(got.begin(), got.begin() + n), numbered(i)) << "datagram " << i;
  }
}

TEST(UdpBatch, FullSocketBufferKeepsTheRestInOrderUntilWritable) {
  test_support::PrivateNetns ns("tc qdisc add dev lo root tbf rate 20mbit burst 4kb limit 4mb");
  if (!ns.error().empty()) GTEST_SKIP() << ns.error();
  UdpPair p;
  ASSERT_TRUE(p.open());
  ns.leave();

  UdpBatch batch;
  constexpr std::uint32_t kBurst = 200;  // past one batch, within the queue's bound
  std::uint32_t added = 0;
  int blocked = 0;
  UdpBatch::SendCounts counts;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while ((added < kBurst || !batch.empty()) && std::chrono::steady_clock::now() < deadline) {
    while (added < kBurst && batch.queued() < UdpBatch::kBatchDatagrams) {
      ASSERT_TRUE(batch.add(p.to, {}, AF_INET, numbered(added)));
      ++added;
    }
    if (batch.send(p.sender, counts) == UdpBatch::SendResult::blocked) {
      ++blocked;
      pollfd w{p.sender, POLLOUT, 0};  // what the driver's async_wait(wait_write) waits for
      ::poll(&w, 1, 1000);
    }
  }
  EXPECT_GT(blocked, 0) << "the send buffer never filled: the test proves nothing";
  EXPECT_EQ(counts.errors, 0u);
  EXPECT_EQ(counts.datagrams_sent, kBurst);

  std::vector<std::byte> buffer(4096);
  std::uint32_t expected = 0;
  while (expected < kBurst) {
    pollfd r{p.receiver, POLLIN, 0};
    if (::poll(&r, 1, 2000) <= 0) break;  // the qdisc holds at most ~0.1 s
    const ssize_t n = ::recv(p.receiver, buffer.data(), buffer.size(), 0);
    ASSERT_EQ(n, static_cast<ssize_t>(kDatagramBytes));
    std::uint32_t got = 0;
    std::memcpy(&got, buffer.data(), sizeof got);
    ASSERT_EQ(got, expected) << "out of order or lost";
    ++expected;
  }
  EXPECT_EQ(expected, kBurst) << "datagrams lost";
}

TEST(UdpBatch, WhileBlockedTheQueueGrowsToItsBoundThenRefuses) {
  test_support::PrivateNetns ns("tc qdisc add dev lo root tbf rate 1mbit burst 4kb limit 4mb");
  if (!ns.error().empty()) GTEST_SKIP() << ns.error();
  UdpPair p;
  ASSERT_TRUE(p.open());
  ns.leave();

  UdpBatch batch;
  UdpBatch::SendCounts counts;
  std::uint32_t n = 0;
  UdpBatch::SendResult r = UdpBatch::SendResult::sent;
  while (r == UdpBatch::SendResult::sent && n < 1000) {
    ASSERT_TRUE(batch.add(p.to, {}, AF_INET, numbered(n++)));
    r = batch.send(p.sender, counts);
  }
  ASSERT_EQ(r, UdpBatch::SendResult::blocked);
  EXPECT_EQ(batch.queued(), 1u);  // the one that met the full buffer, kept
  while (batch.queued() < UdpBatch::kQueueDatagrams) ASSERT_TRUE(batch.add(p.to, {}, AF_INET, numbered(n++)));
  EXPECT_FALSE(batch.add(p.to, {}, AF_INET, numbered(n)));
  EXPECT_EQ(batch.queued(), UdpBatch::kQueueDatagrams);
}

}  // namespace
}  // namespace egw::proxy
