// A minimal packet-level path for the window-law tests: senders (each a
// window law and a delivery-rate sampler, always backlogged) share one FIFO
// bottleneck of `rate` with a drop-tail buffer of `buffer_packets`, a base
// RTT and random loss after the bottleneck. One ack per packet (or per
// ack_every_packets, held); a lost packet is reported when its ack would
// have come. Deterministic (fixed-seed
// generator). Not the simulator in tests/sim: it has no tunnel, members or
// ensemble, only what a law sees.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <queue>
#include <vector>

#include "congestion/delivery_rate.h"
#include "congestion/window_law.h"

namespace egw::congestion::testing {

struct PathConfig {
  double rate_bytes_per_s = 20e6 / 8;
  Duration base_rtt = ms(60);
  std::size_t buffer_packets = 600;
  double random_loss = 0;
  ByteCount packet_bytes = 1200;
  // A receiver that decimates: one ACK per this many packets, or when the
  // oldest it holds has waited ack_hold_max (a loss is reported at once).
  std::uint32_t ack_every_packets = 1;
  Duration ack_hold_max = ms(15);
};

struct SimFlow {
  std::unique_ptr<WindowLaw> law;
  DeliveryRateSampler sampler;
  ByteCount in_flight = 0;
  ByteCount delivered = 0;     // during the measured interval
  Instant next_send{};
  Instant recovery_start{};    // loss-based laws: one cut per round
  bool paced = true;
  bool stopped = false;        // sends nothing more (the flow ended)
  std::uint32_t n_flows = 1;
  Duration srtt{0};
  Duration min_rtt{0};
  std::vector<SentPacket> held;  // delivered, their ACK not yet sent
  std::uint64_t hold_generation = 0;
};

class PathSim {
 public:
  explicit PathSim(PathConfig config) : config_(config) {}

  SimFlow& add_flow(std::unique_ptr<WindowLaw> law, bool paced = true) {
    flows_.push_back(std::make_unique<SimFlow>());
    flows_.back()->law = std::move(law);
    flows_.back()->paced = paced;
    flows_.back()->next_send = now_;
    return *flows_.back();
  }

  // Runs until `until`; counts deliveries from `measure_from` on.
  void run(Instant until, Instant measure_from = {}) {
    measure_from_ = measure_from;
    while (now_ < until) {
      for (std::size_t i = 0; i < flows_.size(); ++i) try_send(i);
      Instant next = until;
      if (!events_.empty()) next = std::min(next, events_.top().time);
      for (const auto& f : flows_) {
        if (!f->stopped && f->in_flight < f->law->cwnd_bytes() && f->next_send > now_) {
          next = std::min(next, f->next_send);
        }
      }
      now_ = std::max(now_, next);
      while (!events_.empty() && events_.top().time <= now_) {
        const Event e = events_.top();
        events_.pop();
        handle(e);
      }
    }
  }

  Instant now() const { return now_; }
  void set_base_rtt(Duration rtt) { config_.base_rtt = rtt; }
  void set_rate(double bytes_per_s) { config_.rate_bytes_per_s = bytes_per_s; }
  void reset_counters() {
    for (auto& f : flows_) f->delivered = 0;
    queue_samples_.clear();
  }
  // Queueing delay of a packet arriving now.
  Duration queue_delay() const {
    return last_departure_ > now_ ? last_departure_ - now_ : Duration{0};
  }
  // Samples of the queueing delay seen by each packet sent in the interval.
  std::vector<Duration>& queue_samples() { return queue_samples_; }
  double utilisation(std::size_t flow, Duration interval) const {
    return static_cast<double>(flows_[flow]->delivered) /
           (config_.rate_bytes_per_s * to_seconds(interval));
  }
  SimFlow& flow(std::size_t i) { return *flows_[i]; }

 private:
  struct Event {
    Instant time;
    std::size_t flow;
    SentPacket packet;
    bool lost;
    std::uint64_t flush_generation = 0;  // > 0: the hold timer of that generation
    bool operator<(const Event& o) const { return time > o.time; }  // min-heap
  };

  double uniform() {
    rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(rng_ >> 11) / 9007199254740992.0;
  }

  Duration tx_time() const {
    return us(static_cast<std::int64_t>(
        std::llround(1e6 * static_cast<double>(config_.packet_bytes) / config_.rate_bytes_per_s)));
  }

  void try_send(std::size_t i) {
    SimFlow& f = *flows_[i];
    while (!f.stopped && f.in_flight + config_.packet_bytes <= std::max(f.law->cwnd_bytes(), config_.packet_bytes) &&
           (!f.paced || f.next_send <= now_)) {
      SentPacket p{next_number_++, 0, config_.packet_bytes, now_, true};
      p.delivery = f.sampler.on_packet_sent(f.in_flight, now_);
      p.sent_in_flight_bytes = static_cast<std::uint32_t>(f.in_flight + p.bytes);
      f.in_flight += p.bytes;
      const Duration queued = queue_delay();
      if (now_ >= measure_from_) queue_samples_.push_back(queued);
      const bool overflow = queued >= tx_time() * static_cast<std::int64_t>(config_.buffer_packets);
      bool lost = overflow;
      Instant ack_time = now_ + config_.base_rtt + queued;
      if (!overflow) {
        last_departure_ = std::max(last_departure_, now_) + tx_time();
        ack_time = last_departure_ + config_.base_rtt;
        lost = uniform() < config_.random_loss;
      }
      events_.push(Event{ack_time, i, p, lost});
      if (f.paced) {
        const std::optional<double> rate = f.law->pacing_rate_bytes_per_s();
        const double r = rate && *rate > 0 ? *rate
                         : f.srtt > Duration{0}
                             ? 1.25 * static_cast<double>(f.law->cwnd_bytes()) / to_seconds(f.srtt)
                             : 0;
        if (r > 0) {
          f.next_send = std::max(f.next_send, now_ - tx_time()) +
                        us(static_cast<std::int64_t>(1e6 * static_cast<double>(p.bytes) / r));
        }
      }
    }
  }

  void handle(const Event& e) {
    SimFlow& f = *flows_[e.flow];
    if (e.flush_generation > 0) {
      if (e.flush_generation == f.hold_generation) ack_held(f);
      return;
    }
    if (!e.lost) {  // acknowledged at once, or held for ack_every_packets or the hold timer
      if (f.held.empty() && config_.ack_every_packets > 1) {
        events_.push(Event{now_ + config_.ack_hold_max, e.flow, e.packet, false, ++f.hold_generation});
      }
      f.held.push_back(e.packet);
      if (f.held.size() >= config_.ack_every_packets) ack_held(f);
      return;
    }
    if (!f.held.empty()) ack_held(f);  // a gap is acknowledged at once
    const ByteCount prior = f.in_flight;
    f.in_flight -= e.packet.bytes;
    f.sampler.on_lost(e.packet.bytes);
    f.law->on_packets_lost(e.packet.bytes, prior, e.packet.sent_in_flight_bytes, now_);
    if (e.packet.sent_time >= f.recovery_start) {  // loss-based laws: once a round
      f.recovery_start = now_;
      f.law->on_congestion_event(now_, f.n_flows);
    }
  }

  // One ACK for every packet held (one, unless the receiver decimates); the
  // RTT sample is the newest's.
  void ack_held(SimFlow& f) {
    ++f.hold_generation;
    const ByteCount prior = f.in_flight;
    ByteCount bytes = 0;
    for (const SentPacket& p : f.held) bytes += p.bytes;
    f.in_flight -= bytes;
    const SentPacket& newest = f.held.back();
    const Duration rtt = now_ - newest.sent_time;
    f.srtt = f.srtt == Duration{0} ? rtt : (7 * f.srtt + rtt) / 8;
    f.min_rtt = f.min_rtt == Duration{0} ? rtt : std::min(f.min_rtt, rtt);
    if (now_ >= measure_from_) f.delivered += bytes;
    const RateSample rs = f.sampler.on_ack(f.held, {}, prior, now_, f.min_rtt);
    if (newest.sent_time >= f.recovery_start) f.law->on_ack(bytes, RttInfo{rtt, f.srtt, f.min_rtt}, now_, f.n_flows);
    f.law->on_rate_sample(rs, now_);
    f.held.clear();
  }

  PathConfig config_;
  std::vector<std::unique_ptr<SimFlow>> flows_;
  std::priority_queue<Event> events_;
  Instant now_ = instant_at(Duration{0});
  Instant measure_from_{};
  Instant last_departure_{};
  PacketNumber next_number_ = 0;
  std::uint64_t rng_ = 42;
  std::vector<Duration> queue_samples_;
};

}  // namespace egw::congestion::testing
