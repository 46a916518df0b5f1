// The service loop every driver of a tunnel::Connection runs, sans-IO: the
// simulator (tests/sim/tunnel_host) and the Asio gateway run this same code.
// It holds no clock, no socket and no thread; every call takes `now`, and the
// outside world is three small interfaces the driver's owner implements:
//
//   ConnectionEventHandler  poll_event() results, one method per event kind
//   TransmitSink            each datagram poll_transmit() wrote (span + DSCP LE flag)
//   DriverTimer             arm(deadline): the one timer for next_timeout()
//
// Driving it:
//   datagram received        -> driver.on_datagram(bytes, now)
//   the armed timer fired    -> driver.on_timer(now)
//   the app wrote / read / finished / reset / opened a stream
//                            -> driver.service(now)  ("send now")
//
// service(now) runs rounds until quiet: dispatch every pending event to the
// handler (which may read and write streams), then drain poll_transmit() into
// the sink; another round follows if any event was handled or a handler asked
// for service. Re-entrancy: a handler that calls service() from inside a
// dispatch does not recurse; it marks the running service to go round once
// more. After the last round the timer is re-armed (below).
//
// Turns: with limits.datagrams_per_turn, one service() hands the sink at most
// that many datagrams, then stops and calls timer.resume_soon(); the owner
// calls service() again once its other ready work ran.
// A single-threaded gateway's other handlers (a request's relay, the
// socket's receive) otherwise wait for a whole window's worth of sealing.
//
// Timer: exactly one. arm(deadline) is called only when next_timeout()
// (clamped to `now`) is earlier than the deadline already armed, or nothing is
// armed; arm *replaces* the armed deadline: the timer implementation must
// cancel or ignore the superseded one (Asio: steady_timer::expires_at and
// ignore operation_aborted; the simulator: a generation counter). A later
// deadline never re-arms: the armed timer fires early, on_timer sees nothing
// due and re-arms for the current deadline. A deadline that went away leaves
// the armed timer to fire and find nothing to do.
//
// Spin guards (bug detectors, not flow control): the Connection must settle at
// one instant. A drain that would hand out more than max_datagrams_per_flush
// datagrams, a dispatch of more than max_events_per_round events, more than
// max_timeouts_per_instant on_timeout calls at the same instant, or more than
// max_service_rounds rounds in one service() throw
// std::logic_error rather than spin forever. The driver stays usable after a
// throw (it is not left "in service"), but the connection that spun is
// suspect: the gateway closes it, the simulator lets the test fail.
//
// The loop is a template over the connection type so unit tests can drive a
// scripted fake; ConnectionDriver (tunnel::Connection) is instantiated once in
// connection_driver.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "common/units.h"
#include "tunnel/connection.h"

namespace egw::tunnel {

// Receives the connection's events. Each call may use the connection (read,
// write, reset, open streams) and call the driver's service(): see above.
class ConnectionEventHandler {
 public:
  virtual ~ConnectionEventHandler() = default;
  virtual void on_stream_opened(const StreamOpened&, Instant /*now*/) {}
  virtual void on_stream_readable(const StreamReadable&, Instant /*now*/) {}
  virtual void on_stream_writable(const StreamWritable&, Instant /*now*/) {}
  virtual void on_stream_reset(const StreamReset&, Instant /*now*/) {}
  virtual void on_stream_closed(const StreamClosed&, Instant /*now*/) {}
  virtual void on_connection_closed(const ConnectionClosed&, Instant /*now*/) {}
  virtual void on_flow_opened(const FlowOpened&, Instant /*now*/) {}
  virtual void on_flow_closed(const FlowClosed&, Instant /*now*/) {}
  virtual void on_datagram_received(const DatagramReceived&, Instant /*now*/) {}
};

// Sends one datagram: the first Transmit::bytes of the driver's transmit
// buffer. The span is valid only during the call (the next poll_transmit
// overwrites it): copy or send it before returning. A sink that queues
// datagrams may offer, per datagram, the place it would copy it to
// (next_buffer): the packet is then sealed there and transmit() gets a span
// inside it, with nothing to copy; an empty span (or one shorter than the
// driver's buffer) means "use the driver's buffer".
class TransmitSink {
 public:
  virtual ~TransmitSink() = default;
  virtual void transmit(std::span<const std::byte> datagram, bool low_priority) = 0;
  virtual std::span<std::byte> next_buffer() { return {}; }
};

// The one timer. arm() replaces any armed deadline (see above); when the
// timer fires, its owner calls the driver's on_timer(now).
class DriverTimer {
 public:
  virtual ~DriverTimer() = default;
  virtual void arm(Instant deadline) = 0;
  // The turn's budget ran out, maybe with more to send (see "Turns"):
  // call service() again soon, after the owner's other ready work.
  virtual void resume_soon() = 0;
};

struct DriverLimits {
  std::size_t max_datagrams_per_flush = 100'000;  // per drain of poll_transmit
  std::size_t max_events_per_round = 100'000;     // poll_event results per dispatch
  int max_timeouts_per_instant = 1'000;           // on_timeout calls at one instant
  int max_service_rounds = 10'000;                // dispatch+drain rounds per service()
  std::size_t datagrams_per_turn = 0;             // per service(), then resume_soon(); 0: no limit
};

struct DriverStats {
  std::uint64_t datagrams_sent = 0;
  std::uint64_t low_priority_sent = 0;
  std::uint64_t timeouts = 0;        // on_timeout calls
  std::uint64_t events = 0;          // poll_event results dispatched
  std::uint64_t timers_armed = 0;    // arm() calls
};

template <class Conn>
class BasicConnectionDriver {
 public:
  // Everything passed in must outlive the driver. `transmit_buffer` must hold
  // at least the connection's max_datagram_bytes. The constructor does not
  // service: call service(now) once the owner is ready for callbacks.
  BasicConnectionDriver(Conn& connection, ConnectionEventHandler& handler, TransmitSink& sink,
                        DriverTimer& timer, std::span<std::byte> transmit_buffer,
                        DriverLimits limits = {})
      : conn_(connection),
        handler_(handler),
        sink_(sink),
        timer_(timer),
        buffer_(transmit_buffer),
        limits_(limits) {}
  BasicConnectionDriver(const BasicConnectionDriver&) = delete;
  BasicConnectionDriver& operator=(const BasicConnectionDriver&) = delete;

  // A datagram arrived: hands it to the connection (opened in place, see
  // Connection::on_datagram) and services.
  void on_datagram(std::span<std::byte> datagram, Instant now) {
    conn_.on_datagram(datagram, now);
    service(now);
  }

  // Events, transmit, timer until quiet. From inside a handler: one more round.
  void service(Instant now);

  // The armed timer fired (at `now` >= its deadline).
  void on_timer(Instant now);

  // The deadline armed last and not fired since, if any.
  std::optional<Instant> armed_deadline() const { return armed_at_; }
  bool in_service() const { return in_service_; }
  const DriverStats& stats() const { return stats_; }
  const DriverLimits& limits() const { return limits_; }

 private:
  std::size_t dispatch_events(Instant now);
  void drain_transmit(Instant now);
  void rearm_timer(Instant now);

  Conn& conn_;
  ConnectionEventHandler& handler_;
  TransmitSink& sink_;
  DriverTimer& timer_;
  std::span<std::byte> buffer_;
  DriverLimits limits_;
  std::size_t turn_sent_ = 0;  // datagrams this service() handed out
  bool turn_over_ = false;     // ... its budget ran out (maybe nothing is left)
  std::optional<Instant> armed_at_;
  Instant last_timeout_at_{};
  int timeouts_at_instant_ = 0;
  bool in_service_ = false;
  bool service_again_ = false;
  DriverStats stats_;
};

template <class Conn>
void BasicConnectionDriver<Conn>::service(Instant now) {
  if (in_service_) {  // a handler asked from inside dispatch: go round once more
    service_again_ = true;
    return;
  }
  {
    in_service_ = true;
    turn_sent_ = 0;
    turn_over_ = false;
    struct Leave {  // a spin guard's throw must not leave the driver "in service"
      bool& flag;
      ~Leave() { flag = false; }
    } leave{in_service_};
    for (int round = 0;; ++round) {
      if (round >= limits_.max_service_rounds) {
        throw std::logic_error("ConnectionDriver: service does not settle");
      }
      service_again_ = false;
      const std::size_t handled = dispatch_events(now);
      drain_transmit(now);
      if (turn_over_ || (handled == 0 && !service_again_)) break;
    }
  }
  rearm_timer(now);
  if (turn_over_) timer_.resume_soon();
}

template <class Conn>
std::size_t BasicConnectionDriver<Conn>::dispatch_events(Instant now) {
  std::size_t handled = 0;
  while (auto event = conn_.poll_event()) {
    if (handled >= limits_.max_events_per_round) {
      throw std::logic_error("ConnectionDriver: poll_event does not run dry");
    }
    ++handled;
    ++stats_.events;
    std::visit(
        [&](const auto& e) {
          using E = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<E, StreamOpened>) handler_.on_stream_opened(e, now);
          else if constexpr (std::is_same_v<E, StreamReadable>) handler_.on_stream_readable(e, now);
          else if constexpr (std::is_same_v<E, StreamWritable>) handler_.on_stream_writable(e, now);
          else if constexpr (std::is_same_v<E, StreamReset>) handler_.on_stream_reset(e, now);
          else if constexpr (std::is_same_v<E, StreamClosed>) handler_.on_stream_closed(e, now);
          else if constexpr (std::is_same_v<E, FlowOpened>) handler_.on_flow_opened(e, now);
          else if constexpr (std::is_same_v<E, FlowClosed>) handler_.on_flow_closed(e, now);
          else if constexpr (std::is_same_v<E, DatagramReceived>) handler_.on_datagram_received(e, now);
          else {
            static_assert(std::is_same_v<E, ConnectionClosed>, "a new ConnectionEvent needs a handler");
            handler_.on_connection_closed(e, now);
          }
        },
        *event);
  }
  return handled;
}

template <class Conn>
void BasicConnectionDriver<Conn>::drain_transmit(Instant now) {
  for (std::size_t sent = 0;; ++sent) {
    if (limits_.datagrams_per_turn > 0 && turn_sent_ >= limits_.datagrams_per_turn) {
      turn_over_ = true;  // maybe nothing is left: the resume then finds so
      return;
    }
    std::span<std::byte> buffer = sink_.next_buffer();
    if (buffer.size() < buffer_.size()) buffer = buffer_;
    const auto datagram = conn_.poll_transmit(now, buffer);
    if (!datagram) return;
    if (sent >= limits_.max_datagrams_per_flush) {
      throw std::logic_error("ConnectionDriver: poll_transmit does not stop at one instant");
    }
    ++stats_.datagrams_sent;
    ++turn_sent_;
    if (datagram->low_priority) ++stats_.low_priority_sent;
    sink_.transmit(std::span<const std::byte>(buffer.first(datagram->bytes)), datagram->low_priority);
  }
}

template <class Conn>
void BasicConnectionDriver<Conn>::rearm_timer(Instant now) {
  const auto deadline = conn_.next_timeout();
  if (!deadline) return;  // an armed timer will find nothing due and stop
  const Instant when = *deadline < now ? now : *deadline;
  if (armed_at_ && *armed_at_ <= when) return;  // fires early enough; re-arms then
  armed_at_ = when;
  ++stats_.timers_armed;
  timer_.arm(when);
}

template <class Conn>
void BasicConnectionDriver<Conn>::on_timer(Instant now) {
  armed_at_.reset();
  const auto deadline = conn_.next_timeout();
  if (!deadline || *deadline > now) {  // moved later (or away) since arming
    rearm_timer(now);
    return;
  }
  if (now == last_timeout_at_) {
    if (++timeouts_at_instant_ > limits_.max_timeouts_per_instant) {
      throw std::logic_error("ConnectionDriver: next_timeout stays due after on_timeout");
    }
  } else {
    last_timeout_at_ = now;
    timeouts_at_instant_ = 1;
  }
  ++stats_.timeouts;
  conn_.on_timeout(now);
  service(now);
}

// The driver for the real connection (instantiated in connection_driver.cc).
extern template class BasicConnectionDriver<Connection>;
using ConnectionDriver = BasicConnectionDriver<Connection>;

}  // namespace egw::tunnel
