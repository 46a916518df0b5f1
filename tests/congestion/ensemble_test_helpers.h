// Drives an Ensemble with explicit instants: send packets, build ack events.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <vector>

#include "congestion/ensemble.h"
#include "tests/congestion/path_state_builder.h"

namespace egw::congestion::testing {

inline constexpr ByteCount kMss = 1200;

inline EnsembleConfig test_config(CouplingMode coupling = CouplingMode::single) {
  EnsembleConfig c;
  c.coupling = coupling;
  c.max_datagram_bytes = kMss;
  c.initial_window_packets = 10;  // 12000 bytes
  c.scheduler.policy = SchedulingPolicy::fair;
  // The loss tests model congestive losses. Their RTT samples show no queue,
  // which Veno would take for random loss (ensemble_veno_test.cc covers it).
  c.random_loss = RandomLoss::congestion;
  return c;
}

struct Harness {
  explicit Harness(const EnsembleConfig& config, std::optional<PathState> resume = std::nullopt)
      : now(instant_at(ms(1'000))), ensemble(config, now, resume) {}

  PacketNumber send(MemberId member, ByteCount bytes = kMss) {
    const SentPacket p{next_number++, member, bytes, now, true};
    last_marked = ensemble.on_packet_sent(p);
    if (last_marked) ++marked;
    return p.number;
  }
  // Send from `member` while the gate allows; returns how many were sent.
  int fill(MemberId member) {
    int sent = 0;
    while (ensemble.can_send(member, now)) {
      send(member);
      ++sent;
    }
    return sent;
  }
  // Marks each of `members` backlogged as has_data says, then asks the
  // scheduler (the tunnel keeps the backlog current the same way).
  std::optional<MemberId> pick(const std::function<bool(MemberId)>& has_data,
                               std::initializer_list<MemberId> members) {
    for (MemberId m : members) ensemble.set_backlogged(m, has_data(m), now);
    return ensemble.pick_sender(now);
  }
  AckOutcome ack(std::initializer_list<AckedRange> ranges, Duration ack_delay = ms(0)) {
    const std::vector<AckedRange> v(ranges);
    return ensemble.on_ack(v, ack_delay, now);
  }
  AckOutcome ack_range(PacketNumber smallest, PacketNumber largest) {
    return ack({AckedRange{smallest, largest}});
  }
  EnsembleStats stats() const { return ensemble.stats(); }
  ByteCount cwnd() const { return ensemble.stats().cwnd_bytes; }
  ByteCount flight() const { return ensemble.stats().bytes_in_flight; }

  // Sends while the window allows, waiting for the pacer whenever only
  // pacing holds a packet back; returns how many were sent.
  int fill_paced(MemberId member, int at_most = 1000) {
    int sent = 0;
    while (sent < at_most) {
      if (!ensemble.can_send(member, now)) {
        const auto release = ensemble.next_pacing_release(now);
        if (!release) break;
        now = *release;
        continue;
      }
      send(member);
      ++sent;
    }
    return sent;
  }

  Instant now;
  Ensemble ensemble;
  PacketNumber next_number = 1;
  bool last_marked = false;  // the last packet sent is DSCP LE
  int marked = 0;            // packets marked so far
};

inline std::vector<PacketNumber> numbers(const std::vector<SentPacket>& v) {
  std::vector<PacketNumber> out;
  for (const auto& p : v) out.push_back(p.number);
  return out;
}

// A cached path of 80 packets, ssthresh 50, srtt 100 ms, min_rtt 90 ms: the
// careful-resume jump is 40 packets, above the 20 that slow start reaches in
// the reconnaissance round trip.
inline PathState cached_path() { return path_state(96000, 60000); }

// Careful resume's reconnaissance: the initial window (packets 1..10) and its
// acks 100 ms later pass the RTT check; returns with the jump taken.
inline void pass_reconnaissance(Harness& h, MemberId member) {
  for (int i = 0; i < 10; ++i) h.send(member);
  h.now += ms(100);
  h.ack_range(1, 10);
}

}  // namespace egw::congestion::testing
