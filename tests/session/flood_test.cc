// Handshake floods that hold valid cookies (issue 19 item 1): one host with
// thousands of source ports, or many hosts, must not buy unbounded
// Diffie-Hellman work, and the real branch still connects. Prints the DH
// count and the branch's time to connect (docs/reliability.md).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstring>

#include "tests/session/session_pair.h"
#include "tunnel/session/cookie.h"

namespace egw::tunnel::session::testing {
namespace {

// A flooder: one initiation of a key the hub does not know (valid mac1), a
// cookie per source address, and mac2 recomputed per address.
struct Flooder {
  explicit Flooder(SessionPair& p) : pair(p), jar(p.hub_keys.public_key) {
    EndpointConfig config = pair.branch_config;
    config.private_key = Keys{}.private_key;
    Endpoint stranger(config, nullptr, pair.now);
    stranger.session(0).connect(pair.now);
    std::vector<std::byte> buffer(2048);
    const auto t = stranger.session(0).poll_transmit(pair.now, buffer);
    std::memcpy(initiation.data(), buffer.data(), t->bytes);
  }
  SessionPair& pair;
  std::array<std::uint8_t, kInitiationBytes> initiation{};
  CookieJar jar;
  std::vector<std::pair<PeerAddress, Cookie>> cookies;
  std::size_t next = 0;

  // Sends the plain initiation from each address; keeps the cookies it gets.
  void get_cookies(const std::vector<PeerAddress>& from) {
    std::vector<std::byte> buffer(2048);
    const auto view = parse_initiation(initiation);
    Mac mac1{};
    std::memcpy(mac1.data(), view->mac1.data(), mac1.size());
    for (const PeerAddress& a : from) {
      auto copy = initiation;
      pair.hub->on_datagram(a, std::as_writable_bytes(std::span(copy)), pair.now);
      while (auto r = pair.hub->poll_reply(buffer)) {
        const auto* p = reinterpret_cast<const std::uint8_t*>(buffer.data());
        const auto reply = parse_cookie_reply(std::span(p, r->bytes));
        if (reply && jar.on_reply(*reply, mac1, pair.now)) {
          Cookie c{};
          std::memcpy(c.data(), jar.cookie(pair.now).data(), c.size());
          cookies.emplace_back(r->to, c);
        }
      }
    }
  }
  // `count` initiations with a valid mac2, round robin over the addresses.
  void flood(int count) {
    std::vector<std::byte> buffer(2048);
    for (int i = 0; i < count && !cookies.empty(); ++i) {
      const auto& [from, cookie] = cookies[next++ % cookies.size()];
      auto copy = initiation;
      const auto view = parse_initiation(copy);
      const Mac mac2 = truncated_mac(cookie, view->covered_by_mac2);
      std::memcpy(copy.data() + kInitiationBytes - kMacBytes, mac2.data(), kMacBytes);
      pair.hub->on_datagram(from, std::as_writable_bytes(std::span(copy)), pair.now);
      while (auto r = pair.hub->poll_reply(buffer)) {
        if (r->to.ip == branch_address().ip) {  // the real branch's cookie: on the wire
          pair.wire.push_back({hub_address(), r->to, {buffer.begin(), buffer.begin() + r->bytes},
                               pair.now + pair.delay});
        }
      }
    }
  }
};

struct FloodResult {
  std::uint64_t dh_initiations;
  double branch_up_after_s;
};

// 5,000 initiations/s with valid mac2 for 5 s from `sources`; the branch
// connects 1 s into the flood.
FloodResult flood_from(const std::vector<PeerAddress>& sources, std::uint32_t budget = 1'000) {
  SessionPair pair({}, /*under_load=*/200);
  pair.hub_config.handshake_budget_per_second = budget;
  pair.start();
  Flooder flooder(pair);
  flooder.get_cookies(sources);
  EXPECT_EQ(flooder.cookies.size() + 200, sources.size()) << "each address past the first 200 gets a cookie";
  const std::uint64_t before = pair.hub->stats().initiations_processed;
  const Instant flood_start = pair.now;
  std::optional<Instant> up_at;
  pair.run_for(ms(5'000), [&] {
    flooder.flood(50);
    if (pair.now - flood_start == ms(1'000)) pair.branch_session().connect(pair.now);
    if (!up_at && pair.branch_session().is_up()) up_at = pair.now;
  }, ms(10));
  const std::uint64_t dh = pair.hub->stats().initiations_processed - before;
  const double up_after = up_at ? to_seconds(*up_at - (flood_start + ms(1'000))) : -1;
  return {dh, up_after};
}

TEST(HandshakeFlood, OneHostWithThousandsOfPortsGetsOneHostsShare) {
  std::vector<PeerAddress> ports;
  for (std::uint16_t p = 0; p < 4'400; ++p) ports.push_back(PeerAddress::v4(0x0b000001, 10'000 + p));
  const FloodResult r = flood_from(ports);
  std::printf("one IP, 4,400 ports, 25,000 initiations with valid mac2 in 5 s: %llu cost DH; "
              "branch up %.2f s after connect\n",
              (unsigned long long)r.dh_initiations, r.branch_up_after_s);
  // 20/s with a burst of 5 for the one address (and the branch's own).
  EXPECT_LE(r.dh_initiations, 5u + 20 * 5 + 3);
  EXPECT_GE(r.branch_up_after_s, 0) << "the branch did not connect during the flood";
  EXPECT_LT(r.branch_up_after_s, 3.0);
}

TEST(HandshakeFlood, OneIpv6SlashSixtyFourIsOneHost) {
  std::vector<PeerAddress> addresses;
  for (std::uint16_t i = 0; i < 1'000; ++i) {
    PeerAddress a;
    a.ip = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1};  // 2001:db8:0:1::/64
    a.ip[14] = static_cast<std::uint8_t>(i >> 8);
    a.ip[15] = static_cast<std::uint8_t>(i);
    a.port = 4'000;
    addresses.push_back(a);
  }
  const FloodResult r = flood_from(addresses);
  std::printf("one /64, 1,000 addresses: %llu cost DH\n", (unsigned long long)r.dh_initiations);
  EXPECT_LE(r.dh_initiations, 5u + 20 * 5 + 3);
}

TEST(HandshakeFlood, ManyHostsTogetherStayWithinTheGlobalBudget) {
  std::vector<PeerAddress> hosts;
  for (std::uint32_t i = 0; i < 2'000; ++i) hosts.push_back(PeerAddress::v4(0x0c000000 + i, 5'000));
  const FloodResult r = flood_from(hosts, /*budget=*/250);
  std::printf("2,000 IPs, 25,000 initiations with valid mac2 in 5 s, budget 250/s: %llu cost DH; "
              "branch up %.2f s after connect\n",
              (unsigned long long)r.dh_initiations, r.branch_up_after_s);
  // The budget (burst: one second's worth) over 5 s.
  EXPECT_LE(r.dh_initiations, 250u * 6 + 3);
  EXPECT_GE(r.branch_up_after_s, 0) << "the branch did not connect during the flood";
}

// A branch that restarts during a many-host flood that exhausts the budget
// (1 handshake/s here) still gets through at once: it comes from the IP the
// hub's confirmed session knows (a new port: NAT), which the budget exempts.
TEST(HandshakeFlood, ARestartedBranchGetsPastAnExhaustedBudget) {
  SessionPair pair({}, /*under_load=*/200);
  pair.hub_config.handshake_budget_per_second = 1;
  pair.start();
  pair.branch_session().connect(pair.now);
  std::optional<StreamId> id;
  pair.run_for(ms(1'000), [&] {
    Connection* c = pair.branch_session().connection();
    if (c && !id) {
      id = c->open_stream(Destination{}, ContentClass::html, pair.now);
      const std::array<std::byte, 100> bytes{};
      c->stream_write(*id, bytes, pair.now);
    }
  });
  ASSERT_TRUE(pair.hub_session().is_confirmed());
  std::vector<PeerAddress> hosts;
  for (std::uint32_t i = 0; i < 2'000; ++i) hosts.push_back(PeerAddress::v4(0x0c000000 + i, 5'000));
  Flooder flooder(pair);
  flooder.get_cookies(hosts);
  pair.run_for(ms(1'000), [&] { flooder.flood(50); }, ms(10));
  // The branch restarts behind its NAT: same IP, another port.
  pair.branch = std::make_unique<Endpoint>(pair.branch_config, nullptr, pair.now);
  pair.branch_from = PeerAddress::v4(0x0a000001, 40'001);
  pair.branch_session().connect(pair.now);
  const Instant restarted = pair.now;
  std::optional<Instant> up_at;
  pair.run_for(ms(4'000), [&] {
    flooder.flood(50);
    if (!up_at && pair.branch_session().is_up()) up_at = pair.now;
  }, ms(10));
  ASSERT_TRUE(up_at) << "the restarted branch did not get past the flood";
  std::printf("restarted branch, 2,000-host flood over a 1/s budget: up after %.2f s\n",
              to_seconds(*up_at - restarted));
  EXPECT_LT(*up_at - restarted, ms(2'500));
  EXPECT_GT(pair.hub->stats().dropped_over_budget, 1'000u);
}

// The branch never responds, so an initiation (valid mac1: the sender knows
// the branch's public key) costs it no Diffie-Hellman at all.
TEST(HandshakeFlood, ABranchDoesNoWorkForInitiations) {
  SessionPair pair;
  pair.start();
  EndpointConfig config = pair.hub_config;  // a stranger initiating towards the branch
  config.private_key = Keys{}.private_key;
  config.initiator = true;
  config.peers = {{"branch", pair.branch_keys.public_key, std::nullopt, branch_address()}};
  Endpoint stranger(config, nullptr, pair.now);
  stranger.session(0).connect(pair.now);
  std::vector<std::byte> buffer(2048);
  const auto t = stranger.session(0).poll_transmit(pair.now, buffer);
  ASSERT_TRUE(t);
  for (int i = 0; i < 100; ++i) {
    auto copy = std::vector<std::byte>(buffer.begin(), buffer.begin() + t->bytes);
    pair.branch->on_datagram(PeerAddress::v4(0x0b000001, 7000), copy, pair.now);
  }
  EXPECT_EQ(pair.branch->stats().initiations_processed, 0u);
  EXPECT_FALSE(pair.branch->poll_reply(buffer)) << "no cookie replies from a branch either";
}

}  // namespace
}  // namespace egw::tunnel::session::testing
