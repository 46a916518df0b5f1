// A branch Endpoint and a hub Endpoint joined by an in-memory wire on
// virtual time: the sans-IO secure tunnel without sockets. Every datagram
// either side sends is queued with its source and destination address and
// delivered one `delay` later; tests can drop, capture, replay, tamper with
// or re-address datagrams on the way (WireTap).
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "tunnel/crypto/keys.h"
#include "tunnel/session/endpoint.h"

namespace egw::tunnel::session::testing {

struct WireDatagram {
  PeerAddress from;
  PeerAddress to;
  std::vector<std::byte> bytes;
  Instant arrives{};
};

inline PeerAddress branch_address() { return PeerAddress::v4(0x0a000001, 40000); }
inline PeerAddress hub_address() { return PeerAddress::v4(0x0a000002, 51900); }

struct Keys {
  crypto::Key32 private_key = crypto::x25519_generate_private();
  crypto::Key32 public_key = crypto::x25519_public_key(private_key);
};

class SessionPair {
 public:
  // `tap` sees every datagram before delivery; false drops it.
  using Tap = std::function<bool(WireDatagram&)>;

  explicit SessionPair(SessionTimers timers = {}, std::uint32_t under_load = 200) {
    branch_config.private_key = branch_keys.private_key;
    branch_config.initiator = true;
    branch_config.timers = timers;
    branch_config.peers.push_back({"hub", hub_keys.public_key, std::nullopt, hub_address()});
    hub_config.private_key = hub_keys.private_key;
    hub_config.initiator = false;
    hub_config.timers = timers;
    hub_config.under_load_initiations_per_second = under_load;
    hub_config.peers.push_back({"branch", branch_keys.public_key, std::nullopt, std::nullopt});
  }
  void start() {
    branch = std::make_unique<Endpoint>(branch_config, nullptr, now);
    hub = std::make_unique<Endpoint>(hub_config, nullptr, now);
  }
  Session& branch_session() { return branch->session(0); }
  Session& hub_session() { return hub->session(0); }

  // Sends what every session wants to send now and queues it on the wire.
  void collect() {
    std::vector<std::byte> buffer(2048);
    for (Endpoint* e : {branch.get(), hub.get()}) {
      const PeerAddress self = e == branch.get() ? branch_from : hub_address();
      for (std::size_t i = 0; i < e->session_count(); ++i) {
        Session& s = e->session(i);
        while (auto t = s.poll_transmit(now, buffer)) {
          wire.push_back({self, s.address(), {buffer.begin(), buffer.begin() + t->bytes}, now + delay});
        }
      }
      while (auto r = e->poll_reply(buffer)) {
        wire.push_back({self, r->to, {buffer.begin(), buffer.begin() + r->bytes}, now + delay});
      }
    }
  }
  // Delivers what has arrived by `now`.
  void deliver() {
    while (!wire.empty() && wire.front().arrives <= now) {
      WireDatagram d = std::move(wire.front());
      wire.pop_front();
      if (tap && !tap(d)) continue;
      deliver_one(d);
    }
  }
  void deliver_one(WireDatagram& d) {
    Endpoint* to = d.to == hub_address() ? hub.get() : branch.get();
    if (to) to->on_datagram(d.from, d.bytes, now);
  }
  void timers() {
    for (Endpoint* e : {branch.get(), hub.get()}) {
      for (std::size_t i = 0; i < e->session_count(); ++i) {
        Session& s = e->session(i);
        const auto t = s.next_timeout();
        if (t && *t <= now) s.on_timeout(now);
      }
    }
  }
  // Runs for `duration` in steps of `step`; `app` runs every step.
  void run_for(Duration duration, const std::function<void()>& app = {}, Duration step = ms(1)) {
    const Instant end = now + duration;
    while (now < end) {
      deliver();
      timers();
      if (app) app();
      collect();
      now += step;
    }
  }
  // Drains every event of a session (returns them).
  static std::vector<ConnectionEvent> events(Session& s) {
    std::vector<ConnectionEvent> out;
    while (auto e = s.poll_event()) out.push_back(std::move(*e));
    return out;
  }
  static std::vector<SessionEvent> session_events(Session& s) {
    std::vector<SessionEvent> out;
    while (auto e = s.poll_session_event()) out.push_back(std::move(*e));
    return out;
  }

  Keys branch_keys, hub_keys;
  EndpointConfig branch_config, hub_config;
  std::unique_ptr<Endpoint> branch, hub;
  PeerAddress branch_from = branch_address();  // change it to emulate NAT rebinding
  std::deque<WireDatagram> wire;
  Tap tap;
  Instant now = instant_at(ms(1'000));
  Duration delay = ms(10);
};

}  // namespace egw::tunnel::session::testing
