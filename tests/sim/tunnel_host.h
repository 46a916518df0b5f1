// Drives one egw::tunnel::Connection at a simulated host exactly as a real
// driver (the Asio gateway) does, so scenario tests exercise the real core:
//
//   packet arrives      -> conn.on_datagram(bytes, now); service()
//   service()           -> dispatch poll_event() to stream handlers (which may
//                          read and write), drain poll_transmit() into the
//                          network, repeat until quiet, re-arm the timer
//   timer fires         -> conn.on_timeout(now); service()
//   app wrote something -> flush() (= service())
//
// One timer is armed for next_timeout(). Stale timers are not cancelled but
// invalidated by a generation counter; a timer is only re-scheduled when the
// new deadline is earlier than the armed one, and a timer that fires early
// (the deadline moved later) just re-arms. Loops at one instant are bugs in
// the core: a flush that sends more than kMaxDatagramsPerFlush datagrams, or a
// timer that fires more than kMaxTimeoutsPerInstant times at the same instant,
// throws std::logic_error instead of spinning forever.
//
// Streams are dispatched to StreamHandlers: streams this host opens go to the
// handler passed to open_stream; streams the peer opens go to the handler
// listening on the StreamOpened destination port.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "congestion/temporal_cache.h"
#include "tests/sim/event_loop.h"
#include "tests/sim/network.h"
#include "tunnel/connection.h"

namespace egw::sim {

class TunnelHost;

// Application side of a stream. Handlers must outlive their streams.
class StreamHandler {
 public:
  virtual ~StreamHandler() = default;
  // A peer-opened stream arrived on a port this handler listens on.
  virtual void on_opened(TunnelHost&, const tunnel::StreamOpened&) {}
  virtual void on_readable(TunnelHost&, StreamId) {}
  virtual void on_writable(TunnelHost&, StreamId) {}
  virtual void on_reset(TunnelHost&, StreamId, std::uint64_t /*error_code*/) {}
  virtual void on_closed(TunnelHost&, StreamId) {}
};

struct TunnelHostStats {
  std::uint64_t datagrams_sent = 0;
  std::uint64_t datagrams_received = 0;
  std::uint64_t low_priority_sent = 0;
  std::uint64_t timeouts = 0;       // on_timeout calls
  std::uint64_t events = 0;         // poll_event results
  std::uint64_t unrouted_events = 0;  // for streams without a handler
};

class TunnelHost {
 public:
  static constexpr std::size_t kMaxDatagramsPerFlush = 100'000;
  static constexpr int kMaxTimeoutsPerInstant = 1'000;

  TunnelHost(EventLoop& loop, Dumbbell& network, Address self, Address peer,
             const tunnel::ConnectionConfig& config,
             std::unique_ptr<tunnel::PacketProtection> protection,
             congestion::TemporalCache* cache);
  ~TunnelHost();
  TunnelHost(const TunnelHost&) = delete;
  TunnelHost& operator=(const TunnelHost&) = delete;

  // Peer-opened streams to `port` go to `handler`.
  void listen(std::uint16_t port, StreamHandler* handler);
  // A peer-opened stream with this id goes to `handler` instead of the port's
  // listener: lets one object play both ends of a transfer (both hosts live
  // in one process); the id is known once the opening host has opened it.
  void expect_stream(StreamId id, StreamHandler* handler) { expected_[id] = handler; }
  // Opens a stream to `port` on the peer (destination 10.9.9.9:port).
  std::optional<StreamId> open_stream(std::uint16_t port, ContentClass cls, StreamHandler* handler);
  // "Send now": after stream_write / stream_read / stream_finish.
  void flush() { service(); }

  tunnel::Connection& connection() { return *conn_; }
  Instant now() const { return loop_.now(); }
  Address address() const { return self_; }
  const TunnelHostStats& stats() const { return stats_; }
  // Set once the connection reported ConnectionClosed.
  const std::optional<tunnel::ConnectionClosed>& closed() const { return closed_; }
  void set_on_closed(std::function<void(const tunnel::ConnectionClosed&)> cb) { on_closed_ = std::move(cb); }

 private:
  void on_packet(Packet packet);
  void service();
  std::size_t dispatch_events();
  void drain_transmit();
  void rearm_timer();
  void on_timer(std::uint64_t generation);
  StreamHandler* handler_for(StreamId id) const;

  EventLoop& loop_;
  Dumbbell& network_;
  Address self_;
  Address peer_;
  std::unique_ptr<tunnel::Connection> conn_;
  // poll_transmit writes here (max_datagram_bytes is at most 64 KB).
  std::vector<std::byte> transmit_buffer_ = std::vector<std::byte>(64 * 1024);
  std::map<std::uint16_t, StreamHandler*> listeners_;
  std::map<StreamId, StreamHandler*> streams_;
  std::map<StreamId, StreamHandler*> expected_;
  // Timer: the armed deadline and the generation that identifies its event.
  std::optional<Instant> armed_at_;
  std::uint64_t timer_generation_ = 0;
  Instant last_timeout_at_{};
  int timeouts_at_instant_ = 0;
  bool in_service_ = false;
  bool service_again_ = false;
  // Lets events scheduled before destruction see that the host is gone.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::optional<tunnel::ConnectionClosed> closed_;
  std::function<void(const tunnel::ConnectionClosed&)> on_closed_;
  TunnelHostStats stats_;
};

}  // namespace egw::sim
