// Attacks on the hub's UDP port over real loopback sockets, against the
// running Gateway: a handshake flood from hundreds of source addresses
// (127.1.x.y), datagrams from strangers (junk, unknown receiver indices,
// initiations with a wrong mac1 or an unknown key), and a man in the middle
// (a relay between branch and hub) that replays and tampers the branch's
// packets. Each time the real branch still gets its tunnel and intact data,
// and the hub counts the attack in its metrics.
#include <fcntl.h>

#include <cstring>
#include <random>

#include "proxy/metrics_exporter.h"
#include "tests/reliability/loopback_gateways.h"
#include "tunnel/crypto/keys.h"
#include "tunnel/session/cookie.h"
#include "tunnel/session/endpoint.h"
#include "tunnel/session/handshake_messages.h"

namespace egw::proxy::reliability {
namespace {

using tunnel::session::kCookieReplyBytes;
using tunnel::session::kInitiationBytes;

// A UDP socket bound to `ip` (host order), any port, non-blocking.
int udp_socket_at(std::uint32_t ip) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(ip);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void send_to(int fd, std::uint16_t port, std::span<const std::uint8_t> bytes) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::sendto(fd, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
}

// Handshake initiations a stranger (a key the hub does not know) sends to
// the hub: exact size, valid mac1 (the stranger knows the hub's public key).
std::vector<std::vector<std::uint8_t>> stranger_initiations(const tunnel::crypto::Key32& hub_key, int count) {
  std::vector<std::vector<std::uint8_t>> out;
  std::vector<std::byte> buffer(2048);
  for (int i = 0; i < count; ++i) {
    tunnel::session::EndpointConfig config;
    config.private_key = tunnel::crypto::x25519_generate_private();
    config.initiator = true;
    tunnel::session::PeerConfig hub;
    hub.public_key = hub_key;
    hub.endpoint = tunnel::session::PeerAddress::v4(0x7f000001, 1);
    config.peers.push_back(hub);
    tunnel::session::Endpoint stranger(config, nullptr, Instant{});
    stranger.session(0).connect(Instant{});
    const auto t = stranger.session(0).poll_transmit(Instant{}, buffer);
    const auto* p = reinterpret_cast<const std::uint8_t*>(buffer.data());
    out.emplace_back(p, p + t->bytes);
  }
  return out;
}

using UdpAttack = LoopbackGateways;

// 400 source addresses send ~3,000 initiations/s (15x the hub's under-load
// threshold of 200/s) from before the branch starts until its download ends.
TEST_F(UdpAttack, HandshakeFloodFromManyAddressesLeavesTheRealPeerServed) {
  const auto initiations = stranger_initiations(hub_public_key(), 16);
  ASSERT_EQ(initiations[0].size(), kInitiationBytes);
  std::vector<int> sockets;
  for (std::uint32_t i = 0; i < 400; ++i) {
    const int fd = udp_socket_at(0x7f010000 + ((i / 200) << 8) + (i % 200) + 1);  // 127.1.{0,1}.{1..200}
    ASSERT_GE(fd, 0) << "cannot bind 127.1.x.y";
    sockets.push_back(fd);
  }
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> sent{0}, replies{0}, reply_bytes{0};
  std::thread flood([&] {
    std::uint8_t buf[2048];
    for (std::size_t k = 0; !stop; ++k) {
      for (int burst = 0; burst < 30; ++burst, ++k) {
        send_to(sockets[k % sockets.size()], hub_port(), initiations[k % initiations.size()]);
        ++sent;
      }
      for (const int fd : sockets) {
        for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) {
          ++replies;
          reply_bytes += static_cast<std::uint64_t>(n);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the hub is under load
  const auto branch_started = std::chrono::steady_clock::now();
  start_branch(hub_port());
  bool up = false;
  while (!up && std::chrono::steady_clock::now() - branch_started < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto b = snapshot(*branch_);
    up = !b.ensembles.empty() && b.ensembles[0].up;
  }
  const double up_after_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - branch_started).count();
  EXPECT_TRUE(up) << "the branch's tunnel did not come up during the flood";
  EXPECT_TRUE(download(2'000'000)) << "no intact download during the flood";
  stop = true;
  flood.join();
  for (const int fd : sockets) ::close(fd);

  const GatewaySnapshot h = snapshot(*hub_);
  std::printf("flood: %llu initiations sent from %zu addresses, %llu cookie replies received (%llu bytes); "
              "hub: %llu initiations processed, %llu cookie replies sent, %llu rate limited; branch up after %.2f s\n",
              (unsigned long long)sent.load(), sockets.size(), (unsigned long long)replies.load(),
              (unsigned long long)reply_bytes.load(), (unsigned long long)h.initiations_processed,
              (unsigned long long)h.cookie_replies_sent,
              (unsigned long long)h.datagrams_dropped.at("rate_limited"), up_after_s);
  // Only the first ~200 in a second cost Diffie-Hellman; the rest got cookies.
  EXPECT_GT(h.cookie_replies_sent, sent / 2);
  EXPECT_LT(h.initiations_processed, sent / 4);
  // The strangers' ones that did cost DH are dropped as unknown peers.
  EXPECT_GE(h.datagrams_dropped.at("unknown_peer") + 2, h.initiations_processed);
  // No amplification: a cookie reply is smaller than the initiation it answers.
  EXPECT_EQ(reply_bytes.load(), replies.load() * kCookieReplyBytes);
  EXPECT_LT(kCookieReplyBytes, kInitiationBytes);
  // The branch got a cookie too and retried with mac2 (its first initiation
  // met a hub under load).
  EXPECT_GE(h.ensembles.at(0).handshakes, 1u);
  const std::string metrics = render_prometheus(h);
  EXPECT_NE(metrics.find("egw_cookie_replies_total " + std::to_string(h.cookie_replies_sent)), std::string::npos);
}

// Issue 19 item 1: one host (127.0.0.2) with 2,000 source ports, each holding
// a valid cookie, floods initiations with a valid mac2. Keyed by address and
// port, every port had its own 20/s bucket (and filled the 4,096-entry table,
// locking out new senders); keyed by IP, the host gets one host's share.
TEST_F(UdpAttack, CookieHoldingFloodFromOneHostsManyPortsGetsOneHostsShare) {
  const auto initiation = stranger_initiations(hub_public_key(), 1).front();
  const auto view = tunnel::session::parse_initiation(initiation);
  ASSERT_TRUE(view);
  tunnel::session::Mac mac1{};
  std::memcpy(mac1.data(), view->mac1.data(), mac1.size());
  constexpr int kPorts = 2'000;
  std::vector<int> sockets;
  for (int i = 0; i < kPorts; ++i) {
    const int fd = udp_socket_at(0x7f000002);
    ASSERT_GE(fd, 0) << "cannot bind 127.0.0.2";
    sockets.push_back(fd);
  }
  // Every port sends: past the first 200 in a second, a cookie each (a few
  // rounds: the hub queues a bounded number of replies per batch).
  std::vector<std::pair<int, tunnel::session::Cookie>> cookies;
  std::vector<bool> has_cookie(sockets.size());
  tunnel::session::CookieJar jar(hub_public_key());
  for (int round = 0; round < 5 && cookies.size() < kPorts * 3 / 4u; ++round) {
    for (std::size_t i = 0; i < sockets.size(); ++i) {
      if (!has_cookie[i]) send_to(sockets[i], hub_port(), initiation);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (std::size_t i = 0; i < sockets.size(); ++i) {
      std::uint8_t buf[256];
      for (ssize_t n; (n = ::recv(sockets[i], buf, sizeof buf, 0)) > 0;) {
        const auto reply = tunnel::session::parse_cookie_reply(std::span(buf, static_cast<std::size_t>(n)));
        if (has_cookie[i] || !reply || !jar.on_reply(*reply, mac1, Instant{})) continue;
        tunnel::session::Cookie c{};
        std::memcpy(c.data(), jar.cookie(Instant{}).data(), c.size());
        cookies.emplace_back(sockets[i], c);
        has_cookie[i] = true;
      }
    }
  }
  ASSERT_GE(cookies.size(), kPorts / 2u);
  const std::uint64_t dh_before = snapshot(*hub_).initiations_processed;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> sent{0};
  std::thread flood([&] {
    auto copy = initiation;
    const std::size_t covered = kInitiationBytes - tunnel::session::kMacBytes;
    for (std::size_t k = 0; !stop; ++k) {
      const auto& [fd, cookie] = cookies[k % cookies.size()];
      const auto mac2 = tunnel::session::truncated_mac(cookie, std::span(copy).first(covered));
      std::memcpy(copy.data() + covered, mac2.data(), mac2.size());
      send_to(fd, hub_port(), copy);
      if (++sent % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto branch_started = std::chrono::steady_clock::now();
  start_branch(hub_port());
  bool up = false;
  while (!up && std::chrono::steady_clock::now() - branch_started < std::chrono::seconds(15)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto b = snapshot(*branch_);
    up = !b.ensembles.empty() && b.ensembles[0].up;
  }
  const double up_after_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - branch_started).count();
  const bool downloaded = up && download(500'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(1'000));
  stop = true;
  flood.join();
  const double flood_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - branch_started).count() + 0.5;
  for (const int fd : sockets) ::close(fd);
  const GatewaySnapshot h = snapshot(*hub_);
  const std::uint64_t dh = h.initiations_processed - dh_before;
  std::printf("one IP, %zu ports with cookies: %llu initiations with valid mac2 in %.1f s; hub: %llu cost DH, "
              "%llu rate limited; branch up after %.2f s\n",
              cookies.size(), (unsigned long long)sent.load(), flood_s, (unsigned long long)dh,
              (unsigned long long)h.datagrams_dropped.at("rate_limited"), up_after_s);
  EXPECT_TRUE(up) << "the branch's tunnel did not come up during the flood";
  EXPECT_TRUE(downloaded);
  // 20/s (burst 5) for the host, plus the branch's own handshakes.
  EXPECT_LE(dh, static_cast<std::uint64_t>(5 + 20 * (flood_s + 1) + 5));
}

// Strangers' datagrams while a download runs: every kind dropped, counted by
// reason, nothing answered, the download intact.
TEST_F(UdpAttack, DatagramsFromStrangersAreDroppedAndCounted) {
  start_branch(hub_port());
  ASSERT_TRUE(download(1000));  // the tunnel is up
  const GatewaySnapshot before = snapshot(*hub_);
  std::atomic<bool> done{false};
  std::atomic<bool> intact{false};
  std::thread client([&] {
    intact = download(3'000'000);
    done = true;
  });
  const int fd = udp_socket_at(0x7f020001);  // 127.2.0.1
  ASSERT_GE(fd, 0);
  std::mt19937 random(7);
  auto bytes = [&](std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (auto& b : v) b = static_cast<std::uint8_t>(random());
    return v;
  };
  const int kEach = 50;
  auto initiation = stranger_initiations(hub_public_key(), 1)[0];
  for (int i = 0; i < kEach; ++i) {
    auto junk = bytes(1 + random() % 1400);
    junk[0] = static_cast<std::uint8_t>(6 + random() % 250);  // no such message type (5: urgent data)
    send_to(fd, hub_port(), junk);
    auto data = bytes(200);  // a data packet to a receiver index nobody has
    data[0] = 1;
    send_to(fd, hub_port(), data);
    auto bad_mac = initiation;  // an initiation for another key: mac1 fails
    bad_mac[100] ^= 1;
    send_to(fd, hub_port(), bad_mac);
  }
  // Unknown static keys with a valid mac1, slower than the under-load rate.
  for (const auto& init : stranger_initiations(hub_public_key(), 5)) send_to(fd, hub_port(), init);
  client.join();
  std::uint8_t buf[2048];
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_LT(::recv(fd, buf, sizeof buf, 0), 0) << "the hub answered a stranger";
  ::close(fd);
  EXPECT_TRUE(intact);
  const GatewaySnapshot after = snapshot(*hub_);
  auto grew = [&](const char* reason) {
    return after.datagrams_dropped.at(reason) - before.datagrams_dropped.at(reason);
  };
  EXPECT_EQ(grew("malformed"), std::uint64_t{kEach});
  EXPECT_GE(grew("unknown_index"), std::uint64_t{kEach});  // a data packet may be dropped as malformed
  EXPECT_EQ(grew("bad_mac1"), std::uint64_t{kEach});
  EXPECT_EQ(grew("unknown_peer"), 5u);
  EXPECT_TRUE(snapshot(*branch_).ensembles.at(0).up);
}

// A relay between branch and hub that, for each data packet of the branch
// (type 1), also sends a copy with a bit flipped in its sealed payload and
// replays the one before.
class Relay {
 public:
  explicit Relay(std::uint16_t hub_port) : hub_port_(hub_port) {
    fd_ = udp_socket_at(INADDR_LOOPBACK);
    sockaddr_in a{};
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~Relay() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }
  std::atomic<bool> attack{false};
  std::atomic<std::uint64_t> tampered{0}, replayed{0};

 private:
  void run() {
    std::vector<std::uint8_t> buf(65536);
    std::vector<std::uint8_t> earlier;
    while (!stop_) {
      sockaddr_in from{};
      socklen_t len = sizeof from;
      const ssize_t n = ::recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n <= 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
      const std::span<const std::uint8_t> d(buf.data(), static_cast<std::size_t>(n));
      if (ntohs(from.sin_port) == hub_port_) {  // to the branch
        if (branch_.sin_port != 0) ::sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<sockaddr*>(&branch_), sizeof branch_);
        continue;
      }
      branch_ = from;
      const bool now = attack && d[0] == 1 && d.size() >= 64;
      if (now) {
        // The tampered copy first: after the genuine one the hub would drop
        // it by its packet number alone, before the AEAD.
        std::vector<std::uint8_t> copy(d.begin(), d.end());
        copy[copy.size() - 20] ^= 0x40;  // inside the sealed payload
        send_to(fd_, hub_port_, copy);
        ++tampered;
      }
      send_to(fd_, hub_port_, d);
      if (!now) continue;
      if (!earlier.empty()) {
        send_to(fd_, hub_port_, earlier);
        ++replayed;
      }
      earlier.assign(d.begin(), d.end());
    }
  }

  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::uint16_t hub_port_;
  sockaddr_in branch_{};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST_F(UdpAttack, ReplayedAndTamperedPacketsAreDroppedAndCountedTheSessionCarriesOn) {
  Relay relay(hub_port());
  start_branch(relay.port());
  ASSERT_TRUE(download(1000));
  const GatewaySnapshot before = snapshot(*hub_);
  relay.attack = true;
  // Uploads: the branch sends the data packets, the relay attacks them.
  for (int i = 0; i < 3; ++i) {
    const int fd = test_support::tcp_socket_to(listener_port_);
    ASSERT_GE(fd, 0);
    std::vector<std::uint8_t> upload(500'000);
    std::uint64_t hash = PatternServer::kFnvBasis;
    for (std::size_t k = 0; k < upload.size(); ++k) upload[k] = pattern(k * 7 + static_cast<std::size_t>(i));
    hash = PatternServer::fnv1a(hash, upload.data(), upload.size());
    ASSERT_TRUE(test_support::send_all(fd, upload));
    ::shutdown(fd, SHUT_WR);
    int error = 0;
    test_support::read_all(fd, &error);
    ::close(fd);
    EXPECT_EQ(error, 0);
    for (int k = 0; k < 250 && server_.sunk().size() < static_cast<std::size_t>(i + 1); ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(server_.sunk().size(), static_cast<std::size_t>(i + 1));
    EXPECT_EQ(server_.sunk()[i].bytes, upload.size());
    EXPECT_EQ(server_.sunk()[i].hash, hash) << "upload " << i << " corrupted";
  }
  relay.attack = false;
  const GatewaySnapshot after = snapshot(*hub_);
  const auto forged = after.datagrams_dropped.at("forged") - before.datagrams_dropped.at("forged");
  const auto duplicate = after.datagrams_dropped.at("duplicate") - before.datagrams_dropped.at("duplicate");
  std::printf("relay: %llu tampered, %llu replayed; hub dropped %llu forged, %llu duplicate\n",
              (unsigned long long)relay.tampered.load(), (unsigned long long)relay.replayed.load(),
              (unsigned long long)forged, (unsigned long long)duplicate);
  EXPECT_GT(relay.tampered.load(), 100u);
  EXPECT_EQ(forged, relay.tampered.load());
  EXPECT_EQ(duplicate, relay.replayed.load());
  EXPECT_TRUE(after.ensembles.at(0).up);
  EXPECT_EQ(after.ensembles.at(0).handshakes, before.ensembles.at(0).handshakes) << "the session was disturbed";
}

}  // namespace
}  // namespace egw::proxy::reliability
