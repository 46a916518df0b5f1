#include "tests/sim/tunnel_host.h"

#include <stdexcept>
#include <utility>
#include <variant>

#include "common/overloaded.h"

namespace egw::sim {

namespace {

// A service round handles events then transmits; more rounds than this at
// one instant means handlers and the core keep waking each other up.
constexpr int kMaxServiceRounds = 10'000;
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
      conn_(std::make_unique<tunnel::Connection>(config, std::move(protection), cache, loop.now())) {
  network_.attach(self_, [this](Packet p) { on_packet(std::move(p)); });
  // The client may have something to say at once (nothing in this protocol
  // today, but a real driver would ask).
  service();
}

TunnelHost::~TunnelHost() {
  network_.attach(self_, {});
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
  ++stats_.datagrams_received;
  conn_->on_datagram(packet.payload, now());
  service();
}

void TunnelHost::service() {
  if (in_service_) {  // a handler flushed from inside dispatch: loop once more
    service_again_ = true;
    return;
  }
  in_service_ = true;
  for (int round = 0;; ++round) {
    if (round >= kMaxServiceRounds) throw std::logic_error("TunnelHost: service does not settle");
    service_again_ = false;
    const std::size_t handled = dispatch_events();
    drain_transmit();
    if (handled == 0 && !service_again_) break;
  }
  in_service_ = false;
  rearm_timer();
}

StreamHandler* TunnelHost::handler_for(StreamId id) const {
  const auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second;
}

std::size_t TunnelHost::dispatch_events() {
  std::size_t handled = 0;
  while (auto event = conn_->poll_event()) {
    ++handled;
    ++stats_.events;
    std::visit(
        Overloaded{
            [&](const tunnel::StreamOpened& e) {
              if (const auto ex = expected_.find(e.id); ex != expected_.end()) {
                StreamHandler* h = ex->second;
                expected_.erase(ex);
                streams_[e.id] = h;
                h->on_opened(*this, e);
                return;
              }
              const auto it = listeners_.find(e.destination.port);
              if (it == listeners_.end()) {  // nobody listens: refuse, like a closed port
                ++stats_.unrouted_events;
                conn_->stream_reset(e.id, kRefusedStreamError, now());
                return;
              }
              streams_[e.id] = it->second;
              it->second->on_opened(*this, e);
            },
            [&](const tunnel::StreamReadable& e) {
              if (auto* h = handler_for(e.id)) h->on_readable(*this, e.id);
              else ++stats_.unrouted_events;
            },
            [&](const tunnel::StreamWritable& e) {
              if (auto* h = handler_for(e.id)) h->on_writable(*this, e.id);
              else ++stats_.unrouted_events;
            },
            [&](const tunnel::StreamReset& e) {
              auto* h = handler_for(e.id);
              streams_.erase(e.id);
              if (h) h->on_reset(*this, e.id, e.error_code);
              else ++stats_.unrouted_events;
            },
            [&](const tunnel::StreamClosed& e) {
              auto* h = handler_for(e.id);
              streams_.erase(e.id);
              if (h) h->on_closed(*this, e.id);
              else ++stats_.unrouted_events;
            },
            [&](const tunnel::ConnectionClosed& e) {
              closed_ = e;
              if (on_closed_) on_closed_(e);
            },
        },
        *event);
  }
  return handled;
}

void TunnelHost::drain_transmit() {
  for (std::size_t sent = 0;; ++sent) {
    auto datagram = conn_->poll_transmit(now(), transmit_buffer_);
    if (!datagram) return;
    if (sent >= kMaxDatagramsPerFlush) {
      throw std::logic_error("TunnelHost: poll_transmit does not stop at one instant");
    }
    ++stats_.datagrams_sent;
    if (datagram->low_priority) ++stats_.low_priority_sent;
    // The simulated network owns each packet's bytes: one copy out of the buffer.
    std::vector<std::byte> bytes(transmit_buffer_.begin(),
                                 transmit_buffer_.begin() + static_cast<std::ptrdiff_t>(datagram->bytes));
    network_.send(Packet{self_, peer_, std::move(bytes), datagram->low_priority});
  }
}

void TunnelHost::rearm_timer() {
  const auto deadline = conn_->next_timeout();
  if (!deadline) return;  // an armed timer will find nothing due and stop
  const Instant when = *deadline < now() ? now() : *deadline;
  if (armed_at_ && *armed_at_ <= when) return;  // fires early enough; re-arms then
  armed_at_ = when;
  const std::uint64_t generation = ++timer_generation_;
  loop_.schedule_at(when, [this, generation, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    on_timer(generation);
  });
}

void TunnelHost::on_timer(std::uint64_t generation) {
  if (generation != timer_generation_) return;  // superseded by an earlier deadline
  armed_at_.reset();
  const auto deadline = conn_->next_timeout();
  if (!deadline || *deadline > now()) {  // moved later (or away) since arming
    rearm_timer();
    return;
  }
  if (now() == last_timeout_at_) {
    if (++timeouts_at_instant_ > kMaxTimeoutsPerInstant) {
      throw std::logic_error("TunnelHost: next_timeout stays due after on_timeout");
    }
  } else {
    last_timeout_at_ = now();
    timeouts_at_instant_ = 1;
  }
  ++stats_.timeouts;
  conn_->on_timeout(now());
  service();
}

}  // namespace egw::sim
