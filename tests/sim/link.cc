#include "tests/sim/link.h"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace egw::sim {

std::uint64_t LinkStats::dropped_total() const {
  std::uint64_t total = 0;
  for (auto n : packets_dropped) total += n;
  return total;
}

Link::Link(EventLoop& loop, const LinkConfig& config, std::mt19937_64* rng, Sink sink)
    : loop_(loop), config_(config), rng_(rng), sink_(std::move(sink)) {
  if (config_.rate_bits_per_second == 0) throw std::invalid_argument("Link: rate must be > 0");
  if (config_.propagation_delay < Duration{0} || config_.max_jitter < Duration{0})
    throw std::invalid_argument("Link: negative delay");
  if (config_.loss_probability < 0.0 || config_.loss_probability > 1.0)
    throw std::invalid_argument("Link: loss probability outside [0, 1]");
  if (config_.low_priority_queue_fraction < 0.0 || config_.low_priority_queue_fraction > 1.0)
    throw std::invalid_argument("Link: low-priority fraction outside [0, 1]");
  if ((config_.loss_probability > 0.0 || config_.max_jitter > Duration{0}) && rng_ == nullptr)
    throw std::invalid_argument("Link: loss or jitter needs an rng");
  if (!sink_) throw std::invalid_argument("Link: no sink");
}

Duration Link::serialization_time(ByteCount payload_bytes) const {
  const std::uint64_t bits = (payload_bytes + config_.overhead_bytes) * 8;
  return us(static_cast<std::int64_t>(bits * 1'000'000 / config_.rate_bits_per_second));
}

void Link::notify(LinkEvent::Kind kind, DropCause cause, bool low_priority) {
  if (observer_) observer_(LinkEvent{kind, loop_.now(), queue_.size(), cause, low_priority, queued_bytes_});
}

void Link::drop(const Packet& p, DropCause cause) {
  ++stats_.packets_dropped[static_cast<int>(cause)];
  notify(LinkEvent::Kind::drop, cause, p.low_priority);
}

void Link::send(Packet packet) {
  if (config_.loss_probability > 0.0 &&
      std::uniform_real_distribution<double>(0.0, 1.0)(*rng_) < config_.loss_probability) {
    drop(packet, DropCause::random_loss);
    return;
  }
  const std::size_t limit = config_.queue_limit_packets;
  if (limit != 0 && config_.priority_drop && packet.low_priority) {
    // Threshold in packets, rounded up so a fraction of 0.5 of 5 admits 2 (< 3).
    const auto threshold = static_cast<std::size_t>(
        std::ceil(config_.low_priority_queue_fraction * static_cast<double>(limit)));
    if (queue_.size() >= threshold) {
      drop(packet, DropCause::low_priority);
      return;
    }
  }
  if (limit != 0 && queue_.size() >= limit) {
    if (!(config_.priority_drop && !packet.low_priority && low_priority_queued_ > 0)) {
      drop(packet, DropCause::queue_full);
      return;
    }
    // Push out the newest low-priority packet: it would have waited longest.
    for (auto it = queue_.end(); it != queue_.begin();) {
      --it;
      if (it->low_priority) {
        Packet victim = std::move(*it);
        queue_.erase(it);
        queued_bytes_ -= wire_bytes(victim);
        --low_priority_queued_;
        drop(victim, DropCause::evicted);
        break;
      }
    }
  }
  ++stats_.packets_enqueued;
  stats_.bytes_enqueued += wire_bytes(packet);
  const bool low_priority = packet.low_priority;
  if (!busy_) {
    // An idle transmitter takes the arrival at once: it never waits.
    remainder_ = 0;  // an idle gap resets the carried fraction
    notify(LinkEvent::Kind::enqueue, DropCause::queue_full, low_priority);
    transmit(std::move(packet));
    return;
  }
  if (low_priority) ++low_priority_queued_;
  queued_bytes_ += wire_bytes(packet);
  queue_.push_back(std::move(packet));
  if (queue_.size() > stats_.max_queue_packets) stats_.max_queue_packets = queue_.size();
  notify(LinkEvent::Kind::enqueue, DropCause::queue_full, low_priority);
}

void Link::set_rate(std::uint64_t bits_per_second) {
  if (bits_per_second == 0) throw std::invalid_argument("Link: rate must be > 0");
  config_.rate_bits_per_second = bits_per_second;
  remainder_ = 0;  // a fraction of the old rate's microsecond means nothing at the new
}

void Link::transmit(Packet packet) {
  busy_ = true;
  // bits * 1e6 / rate microseconds, with the remainder carried.
  const std::uint64_t numerator = wire_bytes(packet) * 8 * 1'000'000 + remainder_;
  const std::uint64_t tx_us = numerator / config_.rate_bits_per_second;
  remainder_ = numerator % config_.rate_bits_per_second;
  loop_.schedule_in(us(static_cast<std::int64_t>(tx_us)), [this, p = std::move(packet)]() mutable {
    Duration delay = config_.propagation_delay;
    if (config_.max_jitter > Duration{0}) {
      delay += us(std::uniform_int_distribution<std::int64_t>(0, config_.max_jitter.count())(*rng_));
    }
    loop_.schedule_in(delay, [this, p = std::move(p)]() mutable {
      ++stats_.packets_delivered;
      stats_.bytes_delivered += wire_bytes(p);
      notify(LinkEvent::Kind::deliver, DropCause::queue_full, p.low_priority);
      sink_(std::move(p));
    });
    on_transmitted();
  });
}

void Link::on_transmitted() {
  busy_ = false;
  if (queue_.empty()) return;
  Packet next = std::move(queue_.front());
  queue_.pop_front();
  queued_bytes_ -= wire_bytes(next);
  if (next.low_priority) --low_priority_queued_;
  transmit(std::move(next));
}

}  // namespace egw::sim
