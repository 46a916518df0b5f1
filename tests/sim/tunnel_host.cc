#include "tests/sim/tunnel_host.h"

#include <utility>

namespace egw::sim {

namespace {
constexpr std::uint64_t kRefusedStreamError = 1;
}  // namespace

TunnelHost::TunnelHost(EventLoop& loop, Dumbbell& network, Address self, Address peer,
                       const tunnel::ConnectionConfig& config,
                       std::unique_ptr<tunnel::PacketProtection> protection,
                       congestion::TemporalCache* cache)
    : loop_(loop),
      network_(network),
      self_(self),
      peer_(peer),
      conn_(std::make_unique<tunnel::Connection>(config, std::move(protection), cache, loop.now())),
      driver_(std::make_unique<tunnel::ConnectionDriver>(
          *conn_, static_cast<tunnel::ConnectionEventHandler&>(*this),
          static_cast<tunnel::TransmitSink&>(*this), static_cast<tunnel::DriverTimer&>(*this),
          std::span<std::byte>(transmit_buffer_))) {
  network_.attach(self_, [this](Packet p) { on_packet(std::move(p)); });
  // The client may have something to say at once (nothing in this protocol
  // today, but a real driver would ask).
  driver_->service(now());
}

TunnelHost::~TunnelHost() {
  network_.attach(self_, {});
}

TunnelHostStats TunnelHost::stats() const {
  const tunnel::DriverStats& d = driver_->stats();
  TunnelHostStats s;
  s.datagrams_sent = d.datagrams_sent;
  s.datagrams_received = datagrams_received_;
  s.low_priority_sent = d.low_priority_sent;
  s.timeouts = d.timeouts;
  s.events = d.events;
  s.unrouted_events = unrouted_events_;
  return s;
}

void TunnelHost::listen(std::uint16_t port, StreamHandler* handler) { listeners_[port] = handler; }

std::optional<StreamId> TunnelHost::open_stream(std::uint16_t port, ContentClass cls,
                                                StreamHandler* handler) {
  tunnel::Destination destination;
  destination.address = {10, 9, 9, 9};
  destination.port = port;
  const auto id = conn_->open_stream(destination, cls, now());
  if (id) streams_[*id] = handler;
  return id;
}

void TunnelHost::on_packet(Packet packet) {
  ++datagrams_received_;
  driver_->on_datagram(packet.payload, now());
}

StreamHandler* TunnelHost::handler_for(StreamId id) const {
  const auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second;
}

void TunnelHost::on_stream_opened(const tunnel::StreamOpened& e, Instant now) {
  if (const auto ex = expected_.find(e.id); ex != expected_.end()) {
    StreamHandler* h = ex->second;
    expected_.erase(ex);
    streams_[e.id] = h;
    h->on_opened(*this, e);
    return;
  }
  const auto it = listeners_.find(e.destination.port);
  if (it == listeners_.end()) {  // nobody listens: refuse, like a closed port
    ++unrouted_events_;
    conn_->stream_reset(e.id, kRefusedStreamError, now);
    return;
  }
  streams_[e.id] = it->second;
  it->second->on_opened(*this, e);
}

void TunnelHost::on_stream_readable(const tunnel::StreamReadable& e, Instant) {
  if (auto* h = handler_for(e.id)) h->on_readable(*this, e.id);
  else ++unrouted_events_;
}

void TunnelHost::on_stream_writable(const tunnel::StreamWritable& e, Instant) {
  if (auto* h = handler_for(e.id)) h->on_writable(*this, e.id);
  else ++unrouted_events_;
}

void TunnelHost::on_stream_reset(const tunnel::StreamReset& e, Instant) {
  auto* h = handler_for(e.id);
  streams_.erase(e.id);
  if (h) h->on_reset(*this, e.id, e.error_code);
  else ++unrouted_events_;
}

void TunnelHost::on_stream_closed(const tunnel::StreamClosed& e, Instant) {
  auto* h = handler_for(e.id);
  streams_.erase(e.id);
  if (h) h->on_closed(*this, e.id);
  else ++unrouted_events_;
}

void TunnelHost::on_connection_closed(const tunnel::ConnectionClosed& e, Instant) {
  closed_ = e;
  if (on_closed_) on_closed_(e);
}

void TunnelHost::transmit(std::span<const std::byte> datagram, bool low_priority) {
  // The simulated network owns each packet's bytes: one copy out of the buffer.
  network_.send(Packet{self_, peer_, std::vector<std::byte>(datagram.begin(), datagram.end()),
                       low_priority});
}

void TunnelHost::arm(Instant deadline) {
  // The event loop cannot cancel: the generation tells the superseded event
  // (always a later one: the driver only re-arms earlier) to do nothing.
  const std::uint64_t generation = ++timer_generation_;
  loop_.schedule_at(deadline, [this, generation, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired() || generation != timer_generation_) return;
    driver_->on_timer(now());
  });
}

// The simulator's drivers have no turn budget (no CPU to share); for the
// interface's sake a resume is a service at the same instant.
void TunnelHost::resume_soon() {
  loop_.schedule_at(now(), [this, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.expired()) driver_->service(now());
  });
}

}  // namespace egw::sim
