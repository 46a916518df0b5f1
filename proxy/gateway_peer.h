// Gateway's private parts shared by its source files (gateway.cc,
// gateway_snapshot.cc): one configured peer, and the text forms of
// addresses that logs and the status use.
#pragma once

#include <spdlog/spdlog.h>

#include <deque>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "proxy/endpoint_text.h"
#include "proxy/gateway.h"

namespace egw::proxy {

// "192.0.2.1:443", "[2001:db8::1]:443".
std::string to_string(const tunnel::Destination& d);

// One configured peer: its session's stream events, its relays, its policy.
struct Gateway::Peer final : SessionHandler {
  using Session = tunnel::session::Session;
  Peer(Gateway& g, std::size_t i, DestinationPolicy p) : gateway(g), index(i), policy(std::move(p)) {}

  Relay* by_stream(StreamId id) {
    auto it = streams.find(id);
    return it == streams.end() ? nullptr : it->second;
  }

  void on_stream_opened(const tunnel::StreamOpened& e, Instant) override { gateway.on_peer_stream(*this, e); }
  void on_stream_readable(const tunnel::StreamReadable& e, Instant) override {
    if (Relay* r = by_stream(e.id)) {
      // Branch: the hub may have reclassified the stream (STREAM_CLASS); its
      // bytes count under the new class from now on.
      if (const tunnel::Connection* c = session().connection()) {
        if (const auto cls = c->stream_class(e.id)) r->set_content_class(*cls);
      }
      r->on_stream_readable();
    }
  }
  void on_stream_writable(const tunnel::StreamWritable& e, Instant) override {
    if (Relay* r = by_stream(e.id)) r->on_stream_writable();
  }
  void on_stream_reset(const tunnel::StreamReset& e, Instant) override {
    if (Relay* r = by_stream(e.id)) {
      spdlog::debug("stream {} to {} reset by {} (code {:#x})", e.id, to_string(r->destination()),
                    session().peer().name, e.error_code);
      r->on_stream_reset(e.error_code);
    }
  }
  void on_stream_closed(const tunnel::StreamClosed& e, Instant) override {
    if (Relay* r = by_stream(e.id)) r->on_stream_closed();
  }
  void on_flow_opened(const tunnel::FlowOpened& e, Instant) override { gateway.on_peer_flow_opened(*this, e); }
  void on_flow_closed(const tunnel::FlowClosed& e, Instant) override { gateway.on_peer_flow_closed(*this, e); }
  void on_datagram_received(const tunnel::DatagramReceived& e, Instant) override { gateway.on_peer_datagram(*this, e); }
  void on_connection_closed(const tunnel::ConnectionClosed& e, Instant) override {
    gateway.on_peer_connection_closed(*this);
    spdlog::warn("tunnel to {} closed: {} (code {:#x}); resetting {} connections", session().peer().name, e.reason,
                 e.error_code, streams.size());
    std::vector<Relay*> all;
    for (const auto& [id, r] : streams) all.push_back(r);
    for (Relay* r : all) r->on_connection_closed();
  }
  void on_session_up(Session& s, Instant) override {
    ++handshakes;
    const auto aead = s.aead();
    spdlog::info("tunnel to {} up ({}, {})", s.peer().name, address_text(s),
                 aead ? tunnel::crypto::aead_name(*aead) : std::string_view("no keys"));
    std::deque<std::shared_ptr<Relay>> ready;
    ready.swap(waiting_for_tunnel);
    for (auto& r : ready) gateway.open_stream(r);
  }
  void on_session_down(Session& s, const std::string& reason, Instant) override {
    spdlog::warn("tunnel to {} down: {}", s.peer().name, reason);
    // The branch keeps trying: clients arriving meanwhile wait for it.
    if (!gateway.config_.is_hub && !gateway.draining_) gateway.tunnel_->connect(index);
  }

  Session& session() { return gateway.tunnel_->endpoint().session(index); }
  static std::string address_text(Session& s) {
    std::ostringstream o;
    o << to_udp_endpoint(s.address());
    return o.str();
  }

  Gateway& gateway;
  std::size_t index;
  DestinationPolicy policy;
  // Every relay of this peer, and the ones that have a stream, by its id.
  std::unordered_map<Relay*, std::shared_ptr<Relay>> relays;
  std::unordered_map<StreamId, Relay*> streams;
  std::deque<std::shared_ptr<Relay>> waiting_for_tunnel;  // branch: first bytes seen, tunnel down
  std::unordered_map<Relay*, std::vector<std::byte>> sniffing;  // hub: response heads so far
  bool service_posted = false;
  // An immediate service ran in this round of ready handlers (service_now):
  // the next burst's read in the same round posts instead.
  bool serviced_now = false;
  std::uint64_t handshakes = 0;
  std::uint64_t address_changes_logged = 0;
  std::uint64_t streams_total = 0;
  PerClass<std::uint64_t> bytes_by_class_closed{};  // of relays that ended
};

}  // namespace egw::proxy
