// Drives one egw::tunnel::Connection at a simulated host with the product's
// own service loop (tunnel::ConnectionDriver, the loop the Asio gateway runs),
// so scenario tests exercise the real core and the real driver loop. This
// class only adapts it to the simulator:
//
//   packet arrives      -> driver.on_datagram(bytes, now)
//   timer fires         -> driver.on_timer(now)
//   app wrote something -> flush() (= driver.service(now))
//   driver events       -> routed to StreamHandlers (below)
//   driver transmits    -> one copy into a Packet on the Dumbbell
//   driver arms timer   -> an EventLoop event; a superseded one is not
//                          cancelled but invalidated by a generation counter
//
// Loops at one instant are bugs in the core: the driver's spin guards
// (DriverLimits; kMaxDatagramsPerFlush and kMaxTimeoutsPerInstant below are
// its defaults) throw std::logic_error instead of spinning forever.
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
#include <span>
#include <string>
#include <vector>

#include "congestion/temporal_cache.h"
#include "tests/sim/event_loop.h"
#include "tests/sim/network.h"
#include "tunnel/connection.h"
#include "tunnel/connection_driver.h"

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

class TunnelHost final : private tunnel::ConnectionEventHandler,
                         private tunnel::TransmitSink,
                         private tunnel::DriverTimer {
 public:
  static constexpr std::size_t kMaxDatagramsPerFlush = tunnel::DriverLimits{}.max_datagrams_per_flush;
  static constexpr int kMaxTimeoutsPerInstant = tunnel::DriverLimits{}.max_timeouts_per_instant;

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
  void flush() { driver_->service(now()); }

  tunnel::Connection& connection() { return *conn_; }
  Instant now() const { return loop_.now(); }
  Address address() const { return self_; }
  TunnelHostStats stats() const;
  // Set once the connection reported ConnectionClosed.
  const std::optional<tunnel::ConnectionClosed>& closed() const { return closed_; }
  void set_on_closed(std::function<void(const tunnel::ConnectionClosed&)> cb) { on_closed_ = std::move(cb); }

 private:
  void on_packet(Packet packet);
  StreamHandler* handler_for(StreamId id) const;
  // tunnel::ConnectionEventHandler
  void on_stream_opened(const tunnel::StreamOpened& e, Instant now) override;
  void on_stream_readable(const tunnel::StreamReadable& e, Instant now) override;
  void on_stream_writable(const tunnel::StreamWritable& e, Instant now) override;
  void on_stream_reset(const tunnel::StreamReset& e, Instant now) override;
  void on_stream_closed(const tunnel::StreamClosed& e, Instant now) override;
  void on_connection_closed(const tunnel::ConnectionClosed& e, Instant now) override;
  // tunnel::TransmitSink
  void transmit(std::span<const std::byte> datagram, bool low_priority) override;
  // tunnel::DriverTimer
  void arm(Instant deadline) override;
  void resume_soon() override;

  EventLoop& loop_;
  Dumbbell& network_;
  Address self_;
  Address peer_;
  std::unique_ptr<tunnel::Connection> conn_;
  // poll_transmit writes here (max_datagram_bytes is at most 64 KB).
  std::vector<std::byte> transmit_buffer_ = std::vector<std::byte>(64 * 1024);
  std::unique_ptr<tunnel::ConnectionDriver> driver_;
  std::map<std::uint16_t, StreamHandler*> listeners_;
  std::map<StreamId, StreamHandler*> streams_;
  std::map<StreamId, StreamHandler*> expected_;
  // Identifies the latest armed timer event; older ones are stale.
  std::uint64_t timer_generation_ = 0;
  // Lets events scheduled before destruction see that the host is gone.
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::optional<tunnel::ConnectionClosed> closed_;
  std::function<void(const tunnel::ConnectionClosed&)> on_closed_;
  std::uint64_t datagrams_received_ = 0;
  std::uint64_t unrouted_events_ = 0;
};

}  // namespace egw::sim
