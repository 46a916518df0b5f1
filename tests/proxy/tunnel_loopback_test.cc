// Two gateways on loopback, on real UDP sockets, from config files with
// WireGuard-format keys (`wg genkey | wg pubkey`): the session comes up and
// streams move data intact. Also the config loader's errors, and the
// driver's part (issue 22): a full socket buffer waits instead of dropping,
// and a hub bound to every address answers from the one the branch wrote to.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

#include "proxy/tunnel_config.h"
#include "tests/support/private_netns.h"
#include "tests/support/shell.h"
#include "proxy/tunnel_socket.h"
#include "tunnel/crypto/keys.h"
#include "tunnel/crypto/wg_key.h"

namespace egw::proxy {
namespace {

namespace fs = std::filesystem;

using test_support::run_command;

class TunnelLoopback : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("egw-loopback-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Keys as an admin makes them: with wg(8) from wireguard-tools.
  std::string make_key(const std::string& name) {
    const std::string key = (dir_ / (name + ".key")).string();
    EXPECT_EQ(std::system(("umask 077; wg genkey > " + key).c_str()), 0) << "wg (wireguard-tools) is required";
    return run_command("wg pubkey < " + key);
  }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  // A hub listening on `hub_listen` ("127.0.0.1:0") and a branch whose peer
  // endpoint is `hub_host` and the hub's port, from config files; the
  // branch bound to `branch_listen` if given (else any address).
  void make_pair(const std::string& hub_listen, const std::string& hub_host,
                 std::optional<boost::asio::ip::udp::endpoint> branch_listen = std::nullopt) {
    const std::string hub_pub = make_key("hub");
    const std::string branch_pub = make_key("branch");
    auto hub_config = load_tunnel_config(
        write("hub.yaml", "role: hub\nprivate_key_file: " + (dir_ / "hub.key").string() + "\nlisten: " + hub_listen +
                              "\npeers:\n  - name: branch\n    public_key: " + branch_pub + "\n"));
    ASSERT_TRUE(std::holds_alternative<TunnelConfig>(hub_config)) << std::get<std::string>(hub_config);
    hub_ = std::make_unique<TunnelSocket>(io_, std::get<TunnelConfig>(hub_config).endpoint,
                                          std::get<TunnelConfig>(hub_config).listen, nullptr);
    auto branch_config = load_tunnel_config(write(
        "branch.yaml", "role: branch\nprivate_key_file: " + (dir_ / "branch.key").string() +
                           "\npeers:\n  - name: hub\n    public_key: " + hub_pub + "\n    endpoint: \"" + hub_host +
                           ":" + std::to_string(hub_->local_endpoint().port()) + "\"\n"));
    ASSERT_TRUE(std::holds_alternative<TunnelConfig>(branch_config)) << std::get<std::string>(branch_config);
    branch_ = std::make_unique<TunnelSocket>(io_, std::get<TunnelConfig>(branch_config).endpoint,
                                             branch_listen.value_or(std::get<TunnelConfig>(branch_config).listen),
                                             nullptr);
  }
  fs::path dir_;
  boost::asio::io_context io_;
  std::unique_ptr<TunnelSocket> hub_;
  std::unique_ptr<TunnelSocket> branch_;
};

std::byte pattern(StreamId id, std::uint64_t offset) {
  return static_cast<std::byte>((offset * 131 + id * 7) & 0xff);
}

// Branch writes `bytes_per_stream` on each stream; the hub checks them.
struct Sink final : SessionHandler {
  TunnelSocket* socket = nullptr;
  std::map<StreamId, std::uint64_t> received;
  bool corrupt = false;
  std::size_t finished = 0;
  void on_stream_readable(const tunnel::StreamReadable& e, Instant now) override {
    auto* c = socket->endpoint().session(0).connection();
    std::array<std::byte, 16384> buf;
    bool fin = false;
    for (;;) {
      const std::size_t n = c->stream_read(e.id, buf, &fin, now);
      for (std::size_t i = 0; i < n; ++i) corrupt |= buf[i] != pattern(e.id, received[e.id] + i);
      received[e.id] += n;
      if (n == 0 || fin) break;
    }
    if (fin) {
      ++finished;
      c->stream_finish(e.id, now);
    }
    socket->service(0);
  }
};

struct Source final : SessionHandler {
  TunnelSocket* socket = nullptr;
  std::uint64_t bytes_per_stream = 0;
  int streams = 0;
  std::map<StreamId, std::uint64_t> written;
  std::size_t closed = 0;
  bool up = false;
  void on_session_up(tunnel::session::Session& s, Instant now) override {
    up = true;
    for (int i = 0; i < streams; ++i) written[*s.connection()->open_stream({}, ContentClass::bulk, now)] = 0;
    for (auto& [id, w] : written) fill(id, now);
    socket->service(0);
  }
  void on_stream_writable(const tunnel::StreamWritable& e, Instant now) override {
    fill(e.id, now);
    socket->service(0);
  }
  void on_stream_readable(const tunnel::StreamReadable& e, Instant now) override {
    std::array<std::byte, 64> buf;  // the hub sends nothing but its FIN
    bool fin = false;
    while (socket->endpoint().session(0).connection()->stream_read(e.id, buf, &fin, now) > 0) {}
    socket->service(0);
  }
  void on_stream_closed(const tunnel::StreamClosed&, Instant) override { ++closed; }
  void fill(StreamId id, Instant now) {
    auto* c = socket->endpoint().session(0).connection();
    std::array<std::byte, 16384> buf;
    std::uint64_t& w = written[id];
    while (w < bytes_per_stream) {
      const std::size_t n = std::min<std::uint64_t>(buf.size(), bytes_per_stream - w);
      for (std::size_t i = 0; i < n; ++i) buf[i] = pattern(id, w + i);
      const std::size_t k = c->stream_write(id, std::span(buf).first(n), now);
      w += k;
      if (k < n) return;
    }
    c->stream_finish(id, now);
  }
};

// `from` writes `streams` streams of `bytes_per_stream` each and `to` reads
// them; both sockets started. The handlers point into it: it stays put.
struct Transfer {
  Sink sink;
  Source source;
  Transfer(TunnelSocket& from, TunnelSocket& to, int streams, std::uint64_t bytes_per_stream) {
    sink.socket = &to;
    to.set_handler(0, &sink);
    source.socket = &from;
    source.streams = streams;
    source.bytes_per_stream = bytes_per_stream;
    from.set_handler(0, &source);
    to.start();
    from.start();
  }
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
};

TEST_F(TunnelLoopback, TwoGatewaysFromConfigFilesMoveDataIntact) {
  const std::string hub_pub = make_key("hub");
  const std::string branch_pub = make_key("branch");
  ASSERT_TRUE(tunnel::crypto::parse_wg_key(hub_pub));
  const auto hub_path = write("hub.yaml", "role: hub\nprivate_key_file: " + (dir_ / "hub.key").string() +
                                              "\nlisten: 127.0.0.1:0\npeers:\n  - name: branch\n    public_key: " +
                                              branch_pub + "\n");
  auto hub_config = load_tunnel_config(hub_path);
  ASSERT_TRUE(std::holds_alternative<TunnelConfig>(hub_config)) << std::get<std::string>(hub_config);
  boost::asio::io_context io;
  TunnelSocket hub(io, std::get<TunnelConfig>(hub_config).endpoint, std::get<TunnelConfig>(hub_config).listen, nullptr);
  const auto branch_path = write(
      "branch.yaml", "role: branch\nprivate_key_file: " + (dir_ / "branch.key").string() +
                         "\npeers:\n  - name: hub\n    public_key: " + hub_pub + "\n    endpoint: 127.0.0.1:" +
                         std::to_string(hub.local_endpoint().port()) + "\n");
  auto branch_config = load_tunnel_config(branch_path);
  ASSERT_TRUE(std::holds_alternative<TunnelConfig>(branch_config)) << std::get<std::string>(branch_config);
  TunnelSocket branch(io, std::get<TunnelConfig>(branch_config).endpoint,
                      std::get<TunnelConfig>(branch_config).listen, nullptr);
  Transfer t(branch, hub, 4, 8 << 20);
  const Sink& sink = t.sink;
  const Source& source = t.source;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (source.closed < 4 && std::chrono::steady_clock::now() < deadline) io.run_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(source.up);
  EXPECT_EQ(source.closed, 4u);
  EXPECT_EQ(sink.finished, 4u);
  for (const auto& [id, n] : sink.received) EXPECT_EQ(n, 8u << 20) << "stream " << id;
  EXPECT_FALSE(sink.corrupt);
  EXPECT_EQ(hub.endpoint().stats().dropped_bad_mac1, 0u);
  EXPECT_GT(hub.stats().datagrams_received, 20'000u);
  // Both lanes carried it: the hub's ACKs came to the branch's urgent
  // socket (the data to the hub's first one), and nothing was lost to the
  // reordering between them.
  EXPECT_TRUE(hub.urgent_lane()) << hub.urgent_lane_error();
  EXPECT_TRUE(branch.urgent_lane()) << branch.urgent_lane_error();
  EXPECT_GT(branch.stats().urgent_datagrams_received, 100u);
  EXPECT_GT(hub.endpoint().session(0).connection()->stats().urgent_packets_sent, 100u);
  EXPECT_LT(hub.stats().urgent_datagrams_received, hub.stats().datagrams_received / 10);
}

// The kernel steers by the first byte: a datagram typed as the urgent lane
// lands in the second socket, any other in the first (both are then dropped
// as from no session, and counted).
TEST_F(TunnelLoopback, TheUrgentLaneIsSteeredByTheDatagramsFirstByte) {
  make_pair("127.0.0.1:0", "127.0.0.1");
  ASSERT_TRUE(hub_ && branch_);
  ASSERT_TRUE(hub_->urgent_lane()) << hub_->urgent_lane_error();
  hub_->start();
  boost::asio::ip::udp::socket sender(io_, boost::asio::ip::udp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  std::array<std::uint8_t, 64> datagram{};
  const std::pair<std::uint8_t, std::uint64_t> cases[] = {{0x05, 1}, {0x01, 0}, {0x05, 1}, {0x02, 0}, {0x05, 1}};
  std::uint64_t urgent = 0;
  for (const auto& [type, to_urgent] : cases) {
    datagram[0] = type;
    sender.send_to(boost::asio::buffer(datagram), hub_->local_endpoint());
    urgent += to_urgent;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (hub_->stats().datagrams_received < std::size(cases) && std::chrono::steady_clock::now() < deadline) {
    io_.run_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(hub_->stats().datagrams_received, std::size(cases));
  EXPECT_EQ(hub_->stats().urgent_datagrams_received, urgent);
}

// A port in use fails as it did before the lane's SO_REUSEPORT: a second
// gateway on it is refused, never silently joined to the first one's group.
TEST_F(TunnelLoopback, ASecondGatewayOnTheSamePortIsRefused) {
  make_pair("127.0.0.1:0", "127.0.0.1");
  ASSERT_TRUE(hub_);
  auto config = load_tunnel_config((dir_ / "hub.yaml").string());
  ASSERT_TRUE(std::holds_alternative<TunnelConfig>(config));
  EXPECT_THROW(TunnelSocket(io_, std::get<TunnelConfig>(config).endpoint, hub_->local_endpoint(), nullptr),
               boost::system::system_error);
}

TEST_F(TunnelLoopback, ConfigErrorsNameFileLineAndKey) {
  const std::string pub = make_key("k");
  const std::string key = (dir_ / "k.key").string();
  auto error_of = [&](const std::string& text) {
    auto r = load_tunnel_config(write("c.yaml", text));
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string("(no error)");
  };
  const std::string c = (dir_ / "c.yaml").string();
  EXPECT_EQ(error_of("role: hub\nprivate_key_file: " + key + "\nlisten: 127.0.0.1:1\npeers:\n  - public_key: " + pub + "\n    colour: red\n"),
            c + ":6: peers[0].colour: unknown key");
  EXPECT_EQ(error_of("role: hub\nprivate_key_file: " + key + "\nlisten: 127.0.0.1:1\npeers:\n  - public_key: abc\n"),
            c + ":5: peers[0].public_key: not a WireGuard key (44 characters of base64, as `wg pubkey` prints)");
  EXPECT_EQ(error_of("role: bridge\n"), c + ":1: role: expected 'branch' or 'hub'");
  EXPECT_NE(error_of("role: hub\nprivate_key_file: /nonexistent/key\nlisten: 127.0.0.1:1\npeers: []\n").find(c + ":2: private_key_file: "),
            std::string::npos);
  EXPECT_EQ(error_of("role: branch\nprivate_key_file: " + key + "\npeers:\n  - public_key: " + pub + "\n"),
            c + ":4: peers[0].endpoint: missing (a branch must know where its hub is)");
  EXPECT_EQ(error_of("role: hub\nprivate_key_file: " + key + "\nlisten: 127.0.0.1:99999\npeers: []\n"),
            c + ":3: listen: bad port in '127.0.0.1:99999'");
}

// Runs until the source's streams closed (bounded).
template <class Source>
void run_until_closed(boost::asio::io_context& io, const Source& source, std::size_t streams) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (source.closed < streams && std::chrono::steady_clock::now() < deadline) {
    io.run_for(std::chrono::milliseconds(20));
  }
}

// The branch's send buffer fills (its smallest SO_SNDBUF in front of a
// 100 Mbit/s qdisc in the test's own namespace): the driver waits for room
// instead of dropping what sendmmsg refused. Before, every EAGAIN lost the
// rest of the batch (send_errors) and the connection had to recover it.
TEST_F(TunnelLoopback, FullSendBufferWaitsForRoomInsteadOfDropping) {
  test_support::PrivateNetns ns("tc qdisc add dev lo root tbf rate 100mbit burst 16kb limit 16mb");
  if (!ns.error().empty()) GTEST_SKIP() << ns.error();
  make_pair("127.0.0.1:0", "127.0.0.1");
  ns.leave();
  ASSERT_TRUE(hub_ && branch_);
  const int sndbuf = 4096;
  ASSERT_EQ(setsockopt(branch_->native_handle(), SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf), 0);
  Transfer t(*branch_, *hub_, 2, 2 << 20);
  const Sink& sink = t.sink;
  const Source& source = t.source;
  run_until_closed(io_, source, 2);
  EXPECT_EQ(source.closed, 2u);
  for (const auto& [id, n] : sink.received) EXPECT_EQ(n, 2u << 20) << "stream " << id;
  EXPECT_FALSE(sink.corrupt);
  const TunnelSocketStats& st = branch_->stats();
  const auto totals = branch_->endpoint().session(0).connection_totals();
  std::printf("branch: %lu send waits, %lu send errors, %lu dropped past the queue, %lu packets lost\n",
              static_cast<unsigned long>(st.send_blocked), static_cast<unsigned long>(st.send_errors),
              static_cast<unsigned long>(st.dropped_send_buffer_full),
              static_cast<unsigned long>(totals.packets_lost));
  EXPECT_GT(st.send_blocked, 0u) << "the send buffer never filled: the test proves nothing";
  EXPECT_EQ(st.send_errors, 0u);
  EXPECT_EQ(st.dropped_send_buffer_full, 0u);
  EXPECT_EQ(totals.packets_lost, 0u);
}

// A hub bound to every address (IPv4, and dual-stack IPv6 with the branch
// on IPv4): the branch writes to 127.0.0.2, so the hub answers from
// 127.0.0.2. Before, the kernel chose the source for 127.0.0.1, the branch
// followed the hub's reply there, and a hub with several public addresses
// answered from one its peers (or their NATs and firewalls) never wrote to.
class TunnelLoopbackSource : public TunnelLoopback, public ::testing::WithParamInterface<const char*> {};

// Transfers 256 KB from the branch; the branch's view of the hub's address.
std::string hub_address_seen_by_branch(boost::asio::io_context& io, TunnelSocket& hub, TunnelSocket& branch) {
  Transfer t(branch, hub, 1, 256 << 10);
  const Source& source = t.source;
  run_until_closed(io, source, 1);
  EXPECT_TRUE(source.up);
  EXPECT_EQ(source.closed, 1u);
  EXPECT_EQ(branch.endpoint().session(0).stats().address_changes, 0u);
  return branch.endpoint().session(0).address().to_string();
}

TEST_P(TunnelLoopbackSource, RepliesLeaveFromTheAddressThePeerWroteTo) {
  make_pair(GetParam(), "127.0.0.2");
  ASSERT_TRUE(hub_ && branch_);
  EXPECT_EQ(hub_address_seen_by_branch(io_, *hub_, *branch_),
            "127.0.0.2:" + std::to_string(hub_->local_endpoint().port()))
      << "the branch heard the hub from another address";
}

// The hub loses the address the branch wrote to while it sends the branch a
// download: the kernel refuses that source (EINVAL), the datagram leaves at
// once from the kernel's choice ([::1]), the branch follows the hub there
// (authenticated) and the download completes.
TEST_F(TunnelLoopback, ARefusedSourceIsDroppedAndTheKernelChooses) {
  test_support::PrivateNetns ns("ip addr add fd00::2/128 dev lo nodad");
  if (!ns.error().empty()) GTEST_SKIP() << ns.error();
  make_pair("\"[::]:0\"", "[fd00::2]", boost::asio::ip::udp::endpoint(boost::asio::ip::make_address("::1"), 0));
  ns.leave();
  ASSERT_TRUE(hub_ && branch_);
  Transfer t(*hub_, *branch_, 1, 8 << 20);  // the branch downloads
  const Sink& sink = t.sink;
  const Source& source = t.source;
  bool deleted = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (source.closed < 1 && std::chrono::steady_clock::now() < deadline) {
    io_.run_for(std::chrono::milliseconds(1));
    if (!deleted && !sink.received.empty() && sink.received.begin()->second >= (1u << 20)) {
      ASSERT_TRUE(ns.run("ip addr del fd00::2/128 dev lo"));
      deleted = true;
    }
  }
  EXPECT_TRUE(deleted);
  EXPECT_EQ(source.closed, 1u);
  EXPECT_EQ(sink.finished, 1u);
  EXPECT_FALSE(sink.corrupt);
  EXPECT_GE(hub_->stats().sources_refused, 1u);
  EXPECT_EQ(branch_->endpoint().session(0).address().to_string(),
            "[::1]:" + std::to_string(hub_->local_endpoint().port()));
}

INSTANTIATE_TEST_SUITE_P(Wildcard, TunnelLoopbackSource, ::testing::Values("0.0.0.0:0", "\"[::]:0\""),
                         [](const auto& info) { return std::string(info.index == 0 ? "IPv4" : "DualStackIPv6"); });

// IPv6 only (IPV6_PKTINFO): a second address on the loopback of the test's
// own namespace; the branch on ::1 writes to fd00::2.
TEST_F(TunnelLoopback, IPv6RepliesLeaveFromTheAddressThePeerWroteTo) {
  test_support::PrivateNetns ns("ip addr add fd00::2/128 dev lo nodad");
  if (!ns.error().empty()) GTEST_SKIP() << ns.error();
  make_pair("\"[::]:0\"", "[fd00::2]", boost::asio::ip::udp::endpoint(boost::asio::ip::make_address("::1"), 0));
  ns.leave();
  ASSERT_TRUE(hub_ && branch_);
  EXPECT_EQ(hub_address_seen_by_branch(io_, *hub_, *branch_),
            "[fd00::2]:" + std::to_string(hub_->local_endpoint().port()))
      << "the branch heard the hub from another address";
}

}  // namespace
}  // namespace egw::proxy
