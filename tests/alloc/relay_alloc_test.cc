// The relay (proxy/relay.h) between a tunnel stream and a TCP socket: in
// steady state it allocates nothing per read and the bytes arrive equal,
// both ways. Two Connections on the in-memory pair (tests/support/memory_pair.h)
// carry the stream; each end's relay holds one end of a loopback TCP
// connection, whose other end the test writes (client side) or reads (hub
// side). Before the relay sent from the stream's buffer in place, every
// stream read was copied into a vector allocated for it (one allocation per
// read). RelayWriteTurn: the hub's relay resumes, every byte in order, after
// its socket was full. RelayService: a read that starts a burst on an idle
// stream services the connection at once, other reads post the service.
#include <gtest/gtest.h>

#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cerrno>
#include <memory>
#include <vector>

#include "proxy/relay.h"
#include "tests/alloc/counting_allocator.h"
#include "tests/support/memory_pair.h"

namespace egw::alloc_test {
namespace {

namespace asio = boost::asio;
using proxy::Relay;
using tunnel::Connection;

// The byte at stream offset k: a period (251) prime to every buffer size.
std::byte pattern(std::uint64_t k) { return static_cast<std::byte>(k % 251); }

// A connected loopback TCP pair: `ours` goes to a relay, `theirs` to the test.
struct TcpPair {
  explicit TcpPair(asio::io_context& io) : ours(io), theirs(io) {
    asio::ip::tcp::acceptor acceptor(io, {asio::ip::address_v4::loopback(), 0});
    theirs.connect(acceptor.local_endpoint());
    acceptor.accept(ours);
    theirs.non_blocking(true);
  }
  asio::ip::tcp::socket ours;
  asio::ip::tcp::socket theirs;
};

class Owner final : public proxy::RelayOwner {
 public:
  Owner(Connection& c, const test_support::MemoryPair& pair) : c_(c), pair_(pair), scratch_(64 * 1024) {}
  Connection* connection(std::size_t) override { return &c_; }
  void service_soon(std::size_t) override { ++soon_calls; }  // the pair services every step
  void service_now(std::size_t) override { ++now_calls; }
  std::span<std::byte> scratch() override { return scratch_; }
  Instant now() const override { return pair_.now(); }
  void relay_finished(Relay&) override {}
  void on_response_bytes(Relay&, std::span<const std::byte>) override {}
  int soon_calls = 0;
  int now_calls = 0;

 private:
  Connection& c_;
  const test_support::MemoryPair& pair_;
  std::vector<std::byte> scratch_;
};

// Client: the test writes the pattern into its socket; the branch's relay
// moves it into the stream. Hub: its relay sends the stream to its socket;
// the test reads it there and checks every byte.
class RelayPair : public test_support::MemoryPair {
 public:
  RelayPair()
      : MemoryPair(config()),
        client_tcp_(io_),
        hub_tcp_(io_),
        client_owner_(client(), *this),
        hub_owner_(hub(), *this),
        source_(64 * 1024 + 251),
        sink_(256 * 1024) {
    for (std::size_t i = 0; i < source_.size(); ++i) source_[i] = pattern(i);
    const StreamId id = open_stream();
    client_relay_ = std::make_shared<Relay>(client_owner_, std::move(client_tcp_.ours), 0, Relay::Side::branch,
                                            tunnel::Destination{}, now());
    client_relay_->start(id, ContentClass::bulk);
  }
  ~RelayPair() override {
    if (client_relay_) client_relay_->abort(0);
    if (hub_relay_) hub_relay_->abort(0);
    io_.poll();
  }

  std::uint64_t received() const { return received_; }
  std::uint64_t mismatches() const { return mismatches_; }
  // The client writes at most this many bytes in all.
  void set_total(std::uint64_t bytes) { total_ = bytes; }
  // While held, the test does not read the hub's socket: it fills.
  void hold_reader(bool hold) { hold_ = hold; }
  const Owner& client_owner() const { return client_owner_; }
  // Bytes the hub's stream holds for its relay's socket.
  std::uint64_t hub_stream_bytes() {
    return hub_relay_ ? hub().stream_buffered_bytes(hub_relay_->stream_id()) : 0;
  }

 private:
  static test_support::MemoryPairConfig config() {
    test_support::MemoryPairConfig c;
    c.rate_bits_per_s = 200e6;
    c.one_way = ms(5);
    c.enter_side = &set_side;
    return c;
  }

  void client_app() override {
    while (auto e = client().poll_event()) {
      if (std::holds_alternative<tunnel::StreamWritable>(*e)) client_relay_->on_stream_writable();
    }
    // Keep the client's socket full: the relay reads it as the stream takes.
    for (;;) {
      const std::size_t at = written_ % 251;
      const auto size = static_cast<std::size_t>(std::min<std::uint64_t>(source_.size() - at, total_ - written_));
      if (size == 0) break;
      const ssize_t n = ::send(client_tcp_.theirs.native_handle(), source_.data() + at, size,
                               MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n <= 0) break;
      written_ += static_cast<std::uint64_t>(n);
    }
    io_.poll();  // readiness waits: the relay's socket became readable
  }

  void hub_app() override {
    while (auto e = hub().poll_event()) {
      if (auto* o = std::get_if<tunnel::StreamOpened>(&*e)) {
        hub_relay_ = std::make_shared<Relay>(hub_owner_, std::move(hub_tcp_.ours), 0, Relay::Side::hub,
                                             tunnel::Destination{}, now());
        hub_relay_->start(o->id, ContentClass::bulk);
      } else if (std::holds_alternative<tunnel::StreamReadable>(*e)) {
        if (hub_relay_) hub_relay_->on_stream_readable();
      }
    }
    for (;;) {
      if (hold_) break;
      const ssize_t n = ::recv(hub_tcp_.theirs.native_handle(), sink_.data(), sink_.size(), MSG_DONTWAIT);
      if (n <= 0) break;
      for (ssize_t i = 0; i < n; ++i) mismatches_ += sink_[static_cast<std::size_t>(i)] != pattern(received_ + i);
      received_ += static_cast<std::uint64_t>(n);
    }
    io_.poll();  // readiness waits: the relay's socket became writable
  }

  asio::io_context io_;
  // Without it the context ran out of work in the first steps (the client's
  // relay blocked on the stream, the hub's not yet made) and stopped: poll()
  // then runs nothing, so no readiness wait ever completed and a relay that
  // waited for its socket stalled (the steady transfer never waits).
  asio::executor_work_guard<asio::io_context::executor_type> work_{asio::make_work_guard(io_)};
  TcpPair client_tcp_;
  TcpPair hub_tcp_;
  Owner client_owner_;
  Owner hub_owner_;
  std::shared_ptr<Relay> client_relay_;
  std::shared_ptr<Relay> hub_relay_;
  std::vector<std::byte> source_;
  std::vector<std::byte> sink_;
  std::uint64_t total_ = ~std::uint64_t{0};
  bool hold_ = false;
  std::uint64_t written_ = 0;
  std::uint64_t received_ = 0;
  std::uint64_t mismatches_ = 0;
};

TEST(RelayAlloc, SteadyTransferThroughBothRelaysAllocatesNothingPerRead) {
  RelayPair p;
  p.run_client_datagrams(20'000);  // warm up: windows, rings, pools and Asio's handler caches
  ASSERT_GT(p.received(), 10'000'000u) << "the transfer must be moving";
  const std::uint64_t before = counters().allocations;
  const std::uint64_t received_before = p.received();
  p.run_client_datagrams(2'000);
  const std::uint64_t allocations = counters().allocations - before;
  std::printf("[ alloc    ] relays: %llu bytes through both, %llu allocations\n",
              static_cast<unsigned long long>(p.received() - received_before),
              static_cast<unsigned long long>(allocations));
  EXPECT_GT(p.received() - received_before, 1'000'000u);
  EXPECT_EQ(allocations, 0u);
  EXPECT_EQ(p.mismatches(), 0u) << "bytes out of the hub's socket differ from those into the client's";
}

// Event-loop fairness (issue 22): a write turn hands the socket at most its
// share of the stream's two pieces (proxy/relay.cc: 256 KB), in order; the
// rest goes in a posted turn. Before, one turn sent all a stream held (MBs
// after the socket was full), several ms on the bench's veths.
TEST(RelayWriteTurn, FirstBytesTakesAtMostTheShareInOrder) {
  std::vector<std::byte> a(300), b(200);
  const std::array<std::span<const std::byte>, 2> pieces{std::span<const std::byte>(a), std::span<const std::byte>(b)};
  auto sizes = [&](std::size_t max) {
    const auto r = proxy::first_bytes(pieces, max);
    EXPECT_EQ(r[0].data(), a.data());
    if (!r[1].empty()) {
      EXPECT_EQ(r[1].data(), b.data());
    }
    return std::array<std::size_t, 2>{r[0].size(), r[1].size()};
  };
  EXPECT_EQ(sizes(100), (std::array<std::size_t, 2>{100, 0}));
  EXPECT_EQ(sizes(300), (std::array<std::size_t, 2>{300, 0}));
  EXPECT_EQ(sizes(350), (std::array<std::size_t, 2>{300, 50}));
  EXPECT_EQ(sizes(10'000), (std::array<std::size_t, 2>{300, 200}));
  EXPECT_EQ(sizes(0), (std::array<std::size_t, 2>{0, 0}));
}

// The hub's relay after its socket was full (issue 22's bar: no byte of an
// accepted connection lost or reordered): 8 MB behind a reader that holds,
// so the hub's stream holds more than one write turn's share; once the
// reader reads, every byte arrives, in order, through posted turns and
// writable waits. (The gateway pair on loopback: GatewayRelayResume.)
TEST(RelayWriteTurn, ResumesInOrderAfterTheSocketWasFull) {
  constexpr std::uint64_t kTotal = 8u << 20;
  RelayPair p;
  p.set_total(kTotal);
  p.hold_reader(true);
  p.run_for(ms(500));
  const std::uint64_t held = p.hub_stream_bytes();
  EXPECT_EQ(p.received(), 0u);
  EXPECT_GT(held, 256u * 1024) << "the hub's stream must hold more than one write turn's share";
  p.hold_reader(false);
  for (int i = 0; i < 100 && p.received() < kTotal; ++i) p.run_for(ms(50));  // 5 s of virtual time at most
  std::printf("[ resume   ] hub stream held %llu bytes; %llu of %llu arrived by %.0f ms virtual\n",
              static_cast<unsigned long long>(held), static_cast<unsigned long long>(p.received()),
              static_cast<unsigned long long>(kTotal),
              std::chrono::duration<double, std::milli>(p.now().time_since_epoch()).count());
  EXPECT_EQ(p.received(), kTotal) << "every byte must arrive once the reader reads";
  EXPECT_EQ(p.mismatches(), 0u) << "bytes out of order or changed";
  EXPECT_EQ(p.hub_stream_bytes(), 0u);
}

// A request on an idle stream is driven at once (issue 22: a posted service
// waited ~20 us behind a bulk sender's turns on the data-plane bench); bytes
// read while the stream still holds unacknowledged ones wait for the
// coalesced service as before.
TEST(RelayService, ANewBurstOnAnIdleStreamIsServicedAtOnce) {
  RelayPair p;
  p.set_total(64);
  p.run_for(ms(1));  // read; its ACK is 10 ms away
  EXPECT_EQ(p.client_owner().now_calls, 1);
  const int soon_before = p.client_owner().soon_calls;
  p.set_total(128);  // 64 more while the first 64 are unacknowledged
  p.run_for(ms(1));
  EXPECT_EQ(p.client_owner().now_calls, 1) << "the stream was not idle: the coalesced service";
  EXPECT_GT(p.client_owner().soon_calls, soon_before);
  p.run_for(ms(50));  // acknowledged and delivered
  EXPECT_EQ(p.received(), 128u);
  p.set_total(192);  // the next request, on an idle stream again
  p.run_for(ms(1));
  EXPECT_EQ(p.client_owner().now_calls, 2);
  p.run_for(ms(50));
  EXPECT_EQ(p.received(), 192u);
  EXPECT_EQ(p.mismatches(), 0u);
}

}  // namespace
}  // namespace egw::alloc_test
