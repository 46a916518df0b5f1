#include "tests/support/memory_pair.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "tests/support/test_protection.h"

namespace egw::test_support {

namespace {
inline constexpr std::uint64_t kKey = 0x5eed'cafe'f00d'1234;
}  // namespace

MemoryLink::MemoryLink(std::size_t slots, double rate_bits_per_s, Duration delay)
    : slots_(slots),
      storage_(new std::byte[slots * kSlotBytes]),
      rate_(rate_bits_per_s),
      delay_(delay) {}

void MemoryLink::commit(std::size_t bytes, Instant now) {
  if (count_ == slots_.size()) {
    std::fprintf(stderr, "memory_pair: link overflow (%zu slots)\n", slots_.size());
    std::abort();
  }
  Slot& s = slots_[(head_ + count_) % slots_.size()];
  s.size = bytes;
  const Instant start = std::max(now, free_at_);
  free_at_ = start + Duration(static_cast<Duration::rep>(double(bytes) * 8 / rate_ * 1e6));
  s.arrival = free_at_ + delay_;
  ++count_;
}

MemoryPair::MemoryPair(const MemoryPairConfig& config)
    : enter_side_(config.enter_side),
      to_hub_(config.link_slots, config.rate_bits_per_s, config.one_way),
      to_client_(config.link_slots, config.rate_bits_per_s, config.one_way) {
  tunnel::ConnectionConfig client = config.client;
  client.is_client = true;
  tunnel::ConnectionConfig hub = config.hub;
  hub.is_client = false;
  auto protection = [&]() -> std::unique_ptr<tunnel::PacketProtection> {
    if (config.null_protection) return std::make_unique<tunnel::NullProtection>();
    return std::make_unique<tunnel::TestProtection>(kKey);
  };
  enter(kClient);
  client_ = std::make_unique<tunnel::Connection>(client, protection(), nullptr, now_);
  enter(kHub);
  hub_ = std::make_unique<tunnel::Connection>(hub, protection(), nullptr, now_);
  enter(kHarness);
}

MemoryPair::~MemoryPair() {
  enter(kClient);
  client_.reset();
  enter(kHub);
  hub_.reset();
  enter(kHarness);
}

StreamId MemoryPair::open_stream() {
  enter(kClient);
  tunnel::Destination d;
  d.address = {10, 0, 0, 1};
  d.port = 80;
  const StreamId id = *client_->open_stream(d, ContentClass::bulk, now_);
  enter(kHarness);
  return id;
}

void MemoryPair::run_for(Duration d, bool stop_at_end) {
  const Instant end = now_ + d;
  if (stop_at_end) horizon_ = end;
  while (now_ < end) step();
  horizon_.reset();
}

void MemoryPair::step() {
  const std::uint64_t t0 = cycles();
  enter(kHub);
  deliver(to_hub_, *hub_);
  fire(*hub_);
  hub_app();
  flush(*hub_, to_client_, nullptr);
  const std::uint64_t t1 = cycles();
  enter(kClient);
  deliver(to_client_, *client_);
  fire(*client_);
  client_app();
  flush(*client_, to_hub_, &client_sent_);
  const std::uint64_t t2 = cycles();
  enter(kHarness);
  hub_cycles_ += t1 - t0;
  client_cycles_ += t2 - t1;
  // Next event: an arrival or a timer (at least 1 us ahead).
  std::optional<Instant> next;
  auto consider = [&](std::optional<Instant> t) {
    if (t && (!next || *t < *next)) next = t;
  };
  consider(to_hub_.next_arrival());
  consider(to_client_.next_arrival());
  consider(client_->next_timeout());
  consider(hub_->next_timeout());
  const Instant floor = now_ + us(1);
  now_ = next && *next > floor ? *next : floor;
  if (horizon_ && now_ > *horizon_) now_ = std::max(*horizon_, floor);
}

void MemoryPair::deliver(MemoryLink& link, tunnel::Connection& c) {
  while (auto d = link.arrived(now_)) {
    c.on_datagram(*d, now_);
    link.pop();
  }
}

void MemoryPair::fire(tunnel::Connection& c) {
  if (auto t = c.next_timeout(); t && *t <= now_) c.on_timeout(now_);
}

void MemoryPair::flush(tunnel::Connection& c, MemoryLink& link, std::uint64_t* sent) {
  while (auto t = c.poll_transmit(now_, link.next_slot())) {
    link.commit(t->bytes, now_);
    if (sent) ++*sent;
  }
}

}  // namespace egw::test_support
