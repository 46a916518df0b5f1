// Two Connections wired back to back in one process, on virtual time: each
// step moves every datagram that is due, fires due timers, lets the apps read
// and write, and advances time by `step`. A filter may drop, delay or
// duplicate chosen datagrams. Every datagram is also checked against the
// one-member-per-packet rule (STREAM frames of one stream only).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tunnel/connection.h"
#include "tunnel/frame_codec.h"
#include "tunnel/packet_header.h"
#include "tests/support/test_protection.h"

namespace egw::tunnel::testing {

inline constexpr std::uint64_t kKey = 0x5eed'cafe'f00d'1234;

inline std::vector<std::byte> pattern(std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> v(n);
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::byte>(x);
  }
  return v;
}

inline Destination destination_at(std::uint8_t last, std::uint16_t port) {
  Destination e;
  e.address = {10, 0, 0, last};
  e.port = port;
  return e;
}

// One side's application: writes queued data, reads what arrives.
struct App {
  struct Out {
    std::vector<std::byte> data;
    std::size_t written = 0;
    bool fin = false;
    bool fin_sent = false;
  };
  struct In {
    std::vector<std::byte> data;
    bool fin = false;
  };
  std::map<StreamId, Out> out;
  std::map<StreamId, In> in;
  std::vector<ConnectionEvent> events;
  std::vector<StreamOpened> opened;
  std::vector<StreamReset> resets;
  std::vector<StreamId> closed_streams;
  std::optional<ConnectionClosed> connection_closed;
  std::size_t writable_events = 0;
  bool reading = true;

  void send(StreamId id, std::vector<std::byte> data, bool fin) {
    Out& o = out[id];
    o.data.insert(o.data.end(), data.begin(), data.end());
    o.fin = fin;
  }
};

class ConnectionPair {
 public:
  struct Options {
    ConnectionConfig client;
    ConnectionConfig hub;
    congestion::TemporalCache* client_cache = nullptr;
    congestion::TemporalCache* hub_cache = nullptr;
    Duration one_way_delay = ms(10);
    Duration step = ms(1);
    // Each side's protection (null: TestProtection(kKey)); what it seals must
    // open with TestProtection(kKey) (the pair checks every datagram).
    std::function<std::unique_ptr<PacketProtection>()> protection;
  };
  // Returns how many copies to deliver (0 = drop) and may add extra delay.
  // `index` counts datagrams sent in that direction, from 0.
  using Filter = std::function<int(bool from_client, std::size_t index, Duration* extra_delay)>;

  static Options default_options() {
    Options o;
    o.client.is_client = true;
    o.hub.is_client = false;
    return o;
  }

  explicit ConnectionPair(Options options = default_options())
      : options_(options),
        client_(options.client, make_protection(options), options.client_cache, now_),
        hub_(options.hub, make_protection(options), options.hub_cache, now_) {}

  Connection& client() { return client_; }
  Connection& hub() { return hub_; }
  App& client_app() { return client_app_; }
  App& hub_app() { return hub_app_; }
  Instant now() const { return now_; }
  void set_filter(Filter f) { filter_ = std::move(f); }
  // The path drops datagrams larger than this (0: no limit); may change mid-run.
  void set_path_mtu(std::size_t bytes) { path_mtu_ = bytes; }
  std::size_t largest_delivered(bool from_client) const { return largest_[from_client ? 1 : 0]; }
  // When each datagram left, and whether it carried a flow's datagram (a
  // DATAGRAM frame): for a bottleneck replayed after the fact.
  struct Sent {
    Instant at;
    std::size_t bytes = 0;
    bool flow_datagram = false;
    bool urgent = false;  // PacketType::data_urgent
    bool stream_data = false;  // carries a STREAM frame
  };
  // Every datagram sent from one side, in send order.
  const std::vector<Sent>& datagrams_sent(bool from_client) const { return log_[from_client ? 1 : 0]; }
  std::size_t sent_from_client() const { return sent_[1]; }
  std::size_t sent_from_hub() const { return sent_[0]; }
  std::size_t low_priority_datagrams() const { return low_priority_; }

  // Delivers a raw datagram to one side at the current time (forgeries).
  void inject(bool to_hub, std::span<const std::byte> bytes) {
    std::vector<std::byte> copy(bytes.begin(), bytes.end());  // opened in place
    (to_hub ? hub_ : client_).on_datagram(copy, now_);
  }

  void step() {
    for (int side = 0; side < 2; ++side) {
      Connection& c = side ? client_ : hub_;
      if (auto t = c.next_timeout(); t && *t <= now_) c.on_timeout(now_);
    }
    // Deliver what is due (in arrival order; ties keep send order).
    while (!queue_.empty() && queue_.begin()->first.first <= now_) {
      auto node = queue_.extract(queue_.begin());
      (node.mapped().to_hub ? hub_ : client_).on_datagram(node.mapped().bytes, now_);
    }
    for (int side = 0; side < 2; ++side) run_app(side == 1);
    for (int side = 0; side < 2; ++side) flush(side == 1);
    now_ += options_.step;
  }

  bool run_until(const std::function<bool()>& done, Duration limit = ms(60'000)) {
    const Instant end = now_ + limit;
    while (now_ < end) {
      if (done()) return true;
      step();
    }
    return done();
  }
  void run_for(Duration d) {
    const Instant end = now_ + d;
    while (now_ < end) step();
  }

 private:
  static std::unique_ptr<PacketProtection> make_protection(const Options& o) {
    if (o.protection) return o.protection();
    return std::make_unique<TestProtection>(kKey);
  }

  struct InFlight {
    bool to_hub = false;
    std::vector<std::byte> bytes;
  };

  void run_app(bool is_client) {
    Connection& c = is_client ? client_ : hub_;
    App& app = is_client ? client_app_ : hub_app_;
    while (auto e = c.poll_event()) {
      app.events.push_back(*e);
      if (auto* o = std::get_if<StreamOpened>(&*e)) app.opened.push_back(*o);
      if (auto* r = std::get_if<StreamReset>(&*e)) app.resets.push_back(*r);
      if (auto* s = std::get_if<StreamClosed>(&*e)) app.closed_streams.push_back(s->id);
      if (std::holds_alternative<StreamWritable>(*e)) ++app.writable_events;
      if (auto* cc = std::get_if<ConnectionClosed>(&*e)) app.connection_closed = *cc;
    }
    for (auto& [id, o] : app.out) {
      if (!c.stream_exists(id)) continue;
      if (o.written < o.data.size()) {
        o.written += c.stream_write(
            id, std::span<const std::byte>(o.data).subspan(o.written), now_);
      }
      if (o.fin && !o.fin_sent && o.written == o.data.size()) {
        c.stream_finish(id, now_);
        o.fin_sent = true;
      }
    }
    if (!app.reading) return;
    std::vector<StreamId> ids;
    for (const auto& o : app.opened) ids.push_back(o.id);
    for (const auto& [id, o] : app.out) ids.push_back(id);
    std::vector<std::byte> buf(64 * 1024);
    for (StreamId id : ids) {
      while (c.stream_exists(id)) {
        bool fin = false;
        const std::size_t n = c.stream_read(id, buf, &fin, now_);
        App::In& in = app.in[id];
        in.data.insert(in.data.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
        if (fin) in.fin = true;
        if (n == 0 || fin) break;
      }
    }
  }

  void flush(bool from_client) {
    Connection& c = from_client ? client_ : hub_;
    while (auto t = c.poll_transmit(now_, transmit_buffer_)) {
      std::vector<std::byte> bytes(transmit_buffer_.begin(),
                                   transmit_buffer_.begin() + static_cast<std::ptrdiff_t>(t->bytes));
      bool stream_data = false;
      const bool flow_datagram = check_one_stream_per_packet(bytes, &stream_data);
      if (t->low_priority) ++low_priority_;
      const std::size_t index = sent_[from_client ? 1 : 0]++;
      log_[from_client ? 1 : 0].push_back(
          Sent{now_, bytes.size(), flow_datagram, is_urgent_datagram(bytes), stream_data});
      Duration extra{0};
      int copies = filter_ ? filter_(from_client, index, &extra) : 1;
      if (path_mtu_ != 0 && bytes.size() > path_mtu_) copies = 0;
      if (copies > 0) {
        std::size_t& largest = largest_[from_client ? 1 : 0];
        largest = std::max(largest, bytes.size());
      }
      for (int i = 0; i < copies; ++i) {
        queue_.emplace(std::make_pair(now_ + options_.one_way_delay + extra, seq_++),
                       InFlight{from_client, bytes});
      }
    }
  }

  // Whether the packet carries a flow's datagram.
  static bool check_one_stream_per_packet(std::vector<std::byte> datagram, bool* stream_data = nullptr) {
    TestProtection p(kKey);
    auto opened = open_packet(p, datagram);
    EXPECT_TRUE(opened);
    if (!opened) return false;
    auto frames = parse_frames(opened->payload);
    EXPECT_TRUE(frames);
    if (!frames) return false;
    std::optional<StreamId> stream;
    bool flow_datagram = false;
    for (const Frame& f : *frames) {
      flow_datagram |= std::holds_alternative<DatagramFrame>(f);
      if (auto* s = std::get_if<StreamFrame>(&f)) {
        if (stream) {
          EXPECT_EQ(*stream, s->stream_id) << "two streams in one packet";
        }
        stream = s->stream_id;
      }
    }
    if (stream_data) *stream_data = stream.has_value();
    return flow_datagram;
  }

  Options options_;
  Instant now_{};
  Connection client_;
  Connection hub_;
  App client_app_;
  App hub_app_;
  Filter filter_;
  std::map<std::pair<Instant, std::uint64_t>, InFlight> queue_;
  std::uint64_t seq_ = 0;
  std::size_t sent_[2] = {0, 0};
  std::size_t low_priority_ = 0;
  std::vector<std::byte> transmit_buffer_ = std::vector<std::byte>(64 * 1024);
  std::size_t path_mtu_ = 0;
  std::size_t largest_[2] = {0, 0};
  std::vector<Sent> log_[2];
};

}  // namespace egw::tunnel::testing
