#include "bench/wanem/link.h"

#include <algorithm>

namespace egw::wanem {

// flight_ is a min-heap: std::push_heap keeps the greatest on top, so invert.
bool Link::later(const InFlight& a, const InFlight& b) {
  return a.departure != b.departure ? a.departure > b.departure : a.seq > b.seq;
}

Link::Link(const LinkConfig& config) : config_(config), rng_(config.seed) {
  flight_.reserve(4096);
  evicted_.reserve(64);
}

void Link::configure(const LinkConfig& config) {
  if (config.seed != config_.seed) rng_.seed(config.seed);
  config_ = config;
}

void Link::reset_counters() {
  counters_ = {};
  counters_.max_queue_packets = queued_packets();
  counters_.max_queue_bytes = waiting_bytes_;
}

Nanos Link::serialisation(std::uint32_t len_bytes) const {
  if (config_.rate_bps == 0) return Nanos(0);
  // ceil(len * 8 bit * 1e9 ns/s / rate); below 2^63 for any IP length.
  const std::uint64_t bit_ns = std::uint64_t{len_bytes} * 8 * 1'000'000'000;
  return Nanos((bit_ns + config_.rate_bps - 1) / config_.rate_bps);
}

double Link::uniform() {
  // 53 random bits, the same on every standard library (unlike
  // std::uniform_real_distribution), so seeded runs repeat anywhere.
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

bool Link::fits(std::uint64_t waiting_packets, std::uint64_t waiting_bytes) const {
  return (config_.queue_packets == 0 || waiting_packets <= config_.queue_packets) &&
         (config_.queue_bytes == 0 || waiting_bytes <= config_.queue_bytes);
}

void Link::start_head(Time start) {
  head_finish_ = start + serialisation(wire_.front().packet.len_bytes);
}

Time Link::departure_of(const Waiting& w, Time finish) const {
  const Time raw = finish + config_.delay + w.jitter;
  return w.may_overtake ? raw : std::max(raw, last_departure_);
}

void Link::advance(Time now) {
  while (!wire_.empty() && head_finish_ <= now) {
    const Waiting& w = wire_.front();
    const Time departure = departure_of(w, head_finish_);
    // Only packets that keep order move the clamp: an overtaking packet with
    // a long jitter does not hold back the ones behind it.
    if (!w.may_overtake) last_departure_ = departure;
    flight_.push_back({departure, next_seq_++, w.packet});
    std::push_heap(flight_.begin(), flight_.end(), later);
    const Time finish = head_finish_;
    wire_.pop_front();
    if (!wire_.empty()) {  // the next one starts the moment the wire is free
      waiting_bytes_ -= wire_.front().packet.len_bytes;
      start_head(finish);
    }
  }
}

bool Link::evict_le_for(std::uint32_t len_bytes) {
  // Newest LE packets first, as few as make room; none if all of them would
  // not. Index 0 is on the wire and stays.
  std::uint64_t freed_packets = 0, freed_bytes = 0;
  std::size_t oldest = 0;
  for (std::size_t i = wire_.size(); i-- > 1;) {
    if (!wire_[i].packet.is_le) continue;
    ++freed_packets;
    freed_bytes += wire_[i].packet.len_bytes;
    if (fits(queued_packets() - freed_packets + 1, waiting_bytes_ - freed_bytes + len_bytes)) {
      oldest = i;
      break;
    }
  }
  if (oldest == 0) return false;
  for (std::size_t i = wire_.size(); i-- > oldest;) {
    if (!wire_[i].packet.is_le) continue;
    evicted_.push_back(wire_[i].packet);
    waiting_bytes_ -= wire_[i].packet.len_bytes;
    ++counters_.dropped_le;
    wire_.erase(i);
  }
  return true;
}

Admission Link::on_packet(Time now, Packet packet) {
  evicted_.clear();
  advance(now);
  ++counters_.in_packets;
  counters_.in_bytes += packet.len_bytes;
  if (config_.loss > 0 && uniform() < config_.loss) {
    ++counters_.dropped_loss;
    return {Verdict::dropped_loss, {}};
  }
  if (!wire_.empty() && !fits(queued_packets() + 1, waiting_bytes_ + packet.len_bytes)) {
    if (packet.is_le || !config_.le_drop || !evict_le_for(packet.len_bytes)) {
      ++counters_.dropped_queue;
      return {Verdict::dropped_queue, {}};
    }
  }
  Waiting w{packet, Nanos(0), false};
  if (config_.jitter > Nanos(0)) {  // uniform over [0, jitter], whole ns
    w.jitter = Nanos(static_cast<Nanos::rep>(uniform() * static_cast<double>(config_.jitter.count() + 1)));
  }
  w.may_overtake = config_.reorder > 0 && uniform() < config_.reorder;
  wire_.push_back(w);
  if (wire_.size() == 1) {
    start_head(now);  // the wire was idle (advance() emptied what had ended)
  } else {
    waiting_bytes_ += packet.len_bytes;
  }
  advance(now);  // rate 0: done serialising at once
  counters_.max_queue_packets = std::max(counters_.max_queue_packets, queued_packets());
  counters_.max_queue_bytes = std::max(counters_.max_queue_bytes, waiting_bytes_);
  return {Verdict::queued, evicted_};
}

std::optional<Time> Link::next_departure() const {
  std::optional<Time> next;
  if (!flight_.empty()) next = flight_.front().departure;
  // Packets still on the wire or waiting leave no earlier than this.
  if (!wire_.empty()) {
    const Time earliest = head_finish_ + config_.delay;
    if (!next || earliest < *next) next = earliest;
  }
  return next;
}

std::optional<Packet> Link::pop_due(Time now) {
  advance(now);
  if (flight_.empty() || flight_.front().departure > now) return std::nullopt;
  std::pop_heap(flight_.begin(), flight_.end(), later);
  const Packet packet = flight_.back().packet;
  flight_.pop_back();
  ++counters_.out_packets;
  counters_.out_bytes += packet.len_bytes;
  return packet;
}

}  // namespace egw::wanem
