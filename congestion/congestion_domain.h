// One congestion state: what a coupled ensemble shares among all its members
// and what coupling `none` gives each member alone.
//
// A domain owns the window law, the RTT estimator (RFC 6298), the recent
// maximum RTT (Veno's test), the outstanding packets in send order with RFC
// 9002 loss detection, and everything that decides when the window changes
// and when a packet may leave:
//  - Window validation (RFC 7661, RFC 9002 7.8, quiche IsCwndLimited): an ack
//    grows the window only if the flight before it was within
//    kCwndLimitedSlackPackets of cwnd (or, in slow start, above half of it).
//  - Loss rounds (RFC 6582 3.2 "recover", RFC 9002 7.3.2): on a congestion
//    event the domain remembers the largest packet number sent so far; losses
//    of packets at or below it belong to the same round and do not decrease
//    again, and their acks do not grow the window. Within one ack, losses are
//    handled before acks (RFC 9002 A.7), so an ack that reveals a loss never
//    grows the window first. With send_one_on_recovery the next packet may
//    leave whatever the reduced window says (7.3.2). `n_flows`: one decrease
//    per member that lost in its own round (EFCM 2.4.2).
//  - Spurious-loss undo: when every packet a round declared lost is acked
//    after all, the round was reordering and its decrease is undone.
//  - PRR (Recovery::prr, RFC 6937): from the decrease until recovery ends the
//    domain's Prr, not cwnd - flight, says whether a packet may leave.
//  - HyStart++ (SlowStart::hystart_pp): while ssthresh is unset, each ack's
//    growable bytes pass through HyStart.
//  - RTO (RFC 6298 5.1-5.7): armed when a packet leaves an idle domain,
//    restarted by every ack of new data, off when nothing is outstanding;
//    before it, tail loss probes (RFC 9002 6.2).
//  - Idle. A domain that sends again after more than one RTO with nothing in
//    flight restarts its window: by careful resume from its own state when
//    DomainOptions::resume_after_idle (initial window, RTT check, then at
//    most half the old window, paced and marked low priority, validated by
//    one RTT), or from the initial window (RFC 5681 4.1) when the idle time
//    exceeds resume.max_idle or the domain is the uncoupled baseline's.
//    Shorter idle periods are removed from CUBIC's clock. Data ends the idle
//    period, not a control-only packet (kControlMember: a keep-alive PING,
//    credit): RFC 5681 4.1 counts the time since data was sent, and careful
//    resume is for the first data after idle. A flight of control packets
//    alone neither restarts the window nor moves idle_since_; data sent while
//    one is outstanding restarts as if the domain were empty.
//  - Delivery rate (congestion/delivery_rate.h): every packet takes the
//    sampler's snapshot at send; every ack gives the law a rate sample, and
//    every loss goes to the law as it is declared (a rate-based law such as
//    `model` answers losses there, not per loss round). The owner marks the
//    domain app-limited when nothing is backlogged and the window is open.
//  - Pacing (EnsembleConfig::pacing.enabled, a law's own rate, or
//    max_rate_bps): every ack-eliciting packet but a tail probe and a join's
//    allowance leaves at pacing_rate_bytes_per_s(), within a small burst
//    allowance (congestion/rate_pacer.h).
//
// What the domain does not know (members, joins, the scheduler) it tells a
// DomainListener. Sans-IO: every call takes `now`.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/ring_deque.h"
#include "common/units.h"
#include "congestion/ack_path_meter.h"
#include "congestion/careful_resume.h"
#include "congestion/delivery_rate.h"
#include "congestion/ensemble_config.h"
#include "congestion/hystart.h"
#include "congestion/pacer.h"
#include "congestion/packet.h"
#include "congestion/path_state.h"
#include "congestion/prr.h"
#include "congestion/queue_bound.h"
#include "congestion/rate_pacer.h"
#include "congestion/recent_max_rtt.h"
#include "congestion/rtt_estimator.h"
#include "congestion/sent_packets.h"
#include "congestion/window_law.h"

namespace egw::congestion {

struct AckOutcome {
  std::vector<SentPacket> acked;  // newly acknowledged, in send order
  std::vector<SentPacket> lost;   // newly declared lost, in send order
};

struct TimeoutOutcome {
  std::vector<SentPacket> lost;  // declared lost by the time threshold or RTO
  bool rto_fired = false;        // the tunnel should send a probe if nothing is lost
  // Tail loss probes due (EnsembleConfig::tail_probes): per domain whose PTO
  // fired, its newest outstanding packet. One packet of that member may now
  // go whatever the window says: its new data or a retransmission if it has
  // any, else this packet's data again (a PING if there is none to resend).
  std::vector<SentPacket> probes;
};

// Events a domain counts (an ensemble sums them over its domains).
struct DomainCounters {
  std::uint64_t packets_lost = 0;
  std::uint64_t loss_rounds = 0;  // multiplicative decreases
  std::uint64_t rto_count = 0;
  std::uint64_t tail_probes = 0;
  std::uint64_t spurious_rounds = 0;     // decreases undone
  std::uint64_t random_loss_rounds = 0;  // of loss_rounds, Veno's lighter cuts

  DomainCounters& operator+=(const DomainCounters& o);
};

// What the owner of a domain learns from it, and the one thing it decides.
// The defaults suit a domain alone (a test, one flow).
class DomainListener {
 public:
  virtual ~DomainListener() = default;
  // How many flows the law emulates (`n_flows`: the active members).
  virtual std::uint32_t law_flows() const { return 1; }
  // A packet was acknowledged or declared lost: it left the flight.
  virtual void on_left_flight(const SentPacket& /*packet*/) {}
  // A loss round began or an RTO fired: the window was cut.
  virtual void on_congestion_event() {}
  // Should this ack's growth be held though the window was used? (seed 003:
  // the others hold their increase while a joiner's share is clocked out.)
  // Asked in congestion avoidance only.
  virtual bool growth_held() const { return false; }
  // Every ack of new data, after losses were handled and before the window
  // grows: `acked` in send order.
  virtual void on_acked(const std::vector<SentPacket>& /*acked*/, Instant /*now*/) {}
  // A packet the latest loss round declared lost is (no longer) awaited by
  // the spurious-loss undo.
  virtual void on_undo_awaits(const SentPacket& /*lost*/) {}
  virtual void on_undo_forgets(PacketNumber /*number*/) {}
};

struct DomainOptions {
  std::uint32_t initial_window_packets = 10;
  // After idle: careful resume (coupled ensembles) or RFC 5681's restart
  // window (the uncoupled baseline).
  bool resume_after_idle = true;
};

// Why a packet may not leave now: the window (window_open false), or pacing
// until paced_until. A tail loss probe is never paced (unheld).
struct SendGate {
  bool window_open = false;
  bool unheld = false;
  std::optional<Instant> paced_until;
  bool open() const { return window_open && !paced_until; }
  void hold(Instant release, Instant now) {
    if (release > now) paced_until = paced_until ? std::max(*paced_until, release) : release;
  }
};

// Undoing a decrease that reordering caused (Linux's undo on DSACK, RFC
// 9002's "spurious" losses): the window before the latest loss round and
// the packets that round declared lost.
struct SpuriousLossUndo {
  static constexpr std::size_t kMaxTracked = 64;  // larger rounds are not undone
  ByteCount cwnd_before = 0;
  ByteCount ssthresh_before = 0;
  RingDeque<PacketNumber> lost;  // declared lost in the round, not acked yet
  bool overflowed = false;
};

class CongestionDomain {
 public:
  // `config` is read at use time (the owner may change max_datagram_bytes);
  // it and `listener` must outlive the domain.
  CongestionDomain(const EnsembleConfig& config, const DomainOptions& options, Instant now,
                   DomainListener* listener = nullptr);

  // A resume from a cached PathState (careful resume). The estimator is
  // seeded at once only without the RTT check.
  void resume_from(const PathState& saved);
  // Seed the RTT estimator (a new member domain of a resumed `none` ensemble).
  void seed_rtt(const PathState& saved) { rtt_.seed(saved.srtt, saved.rttvar, saved.min_rtt); }

  // May a full-size packet leave now? `beyond_window`: the owner allows one
  // whatever the window says (a join's allowance).
  SendGate gate(Instant now, bool beyond_window = false) const;
  // May a realtime datagram leave now? As gate(), but the pacers wait only
  // until they are out of debt, not until a full packet's budget is back: a
  // call's datagram does not wait for the pacer's next slot behind bulk; it
  // leaves now and the buckets go into debt for it (RatePacer::on_sent),
  // which the next bulk packet pays. The rate over time is unchanged.
  SendGate realtime_gate(Instant now) const;
  // An ack-eliciting packet left. Returns whether it is part of an
  // unvalidated resumed window (the driver marks it DSCP LE). The domain
  // fills the packet's delivery snapshot itself.
  bool on_sent(const SentPacket& packet);
  // A datagram outside the window (an ACK-only packet, a path MTU probe)
  // left: it is not held, but max_rate_bps counts every byte on the link,
  // so the data after it waits for its share (a download's ACKs take ~13 %
  // of a 1 Mbit/s uplink).
  void on_unscheduled_sent(Instant now, ByteCount bytes);
  // Nothing is backlogged while the window is open: the rate samples of
  // what is in flight now do not measure the path (delivery_rate.h).
  void on_app_limited() { rate_sampler_.on_app_limited(sent_.bytes_in_flight()); }
  const DeliveryRateSampler& rate_sampler() const { return rate_sampler_; }
  // Would a full-size packet sent now be part of the unvalidated window?
  bool next_is_extra() const;

  // Process one ACK: acked packets are appended to out.acked, packets it
  // declares lost to out.lost. `scratch` is the caller's reused buffer.
  // `peer_sent_at`: the ACK's timestamp, when the peer stamps them
  // (congestion/ack_path_meter.h).
  void on_ack(std::span<const AckedRange> ranges, Duration ack_delay, Instant now,
              AckOutcome& out, SentPackets::AckResult& scratch,
              std::optional<Duration> peer_sent_at = std::nullopt);
  // Earliest of the loss-time and PTO/RTO deadlines; nullopt when idle.
  std::optional<Instant> next_timeout() const;
  // Whatever of those deadlines is due at `now`, appended to `out`.
  void on_timeout(Instant now, TimeoutOutcome& out);
  // The datagram size changed (the owner's config already holds it).
  void on_max_datagram_changed();
  // `n_flows`: a removed member's recovery point is forgotten.
  void forget_member(MemberId id) { member_recovery_.erase(id); }
  // Tells the listener the spurious-loss undo awaits none of its packets
  // any more (the owner drops the domain).
  void forget_undo();

  PathObservation observe(Instant now) const;
  // The rate packets are paced at: the law's if it gives one, else (with
  // pacing.enabled) cwnd/srtt x 2 in slow start and x 1.25 after (Linux
  // tcp_pacing_ss_ratio and ca_ratio, quiche); at most max_rate_bps.
  // 0: not paced.
  double pacing_rate_bytes_per_s() const;
  // The path's rate as this domain knows it (realtime_packets.h): the
  // law's measured bottleneck rate, else (a loss-based law, pacing on) the
  // pacing rate, at most max_rate_bps; 0 when nothing says.
  double path_rate_bytes_per_s() const;

  const WindowLaw& law() const { return *law_; }
  WindowLaw& law() { return *law_; }
  const RttEstimator& rtt() const { return rtt_; }
  const QueueBound& queue_bound() const { return queue_bound_; }
  const SentPackets& sent() const { return sent_; }
  ByteCount cwnd_bytes() const { return law_->cwnd_bytes(); }
  // What the gate allows in flight: the law's window under the queue bound.
  ByteCount window_bytes() const {
    return config_.queue_bound ? queue_bound_.apply(law_->cwnd_bytes()) : law_->cwnd_bytes();
  }
  ByteCount bytes_in_flight() const { return sent_.bytes_in_flight(); }
  bool idle() const { return sent_.empty(); }
  ByteCount initial_window_bytes() const { return initial_window_bytes_; }
  bool resume_unvalidated() const { return resume_ && resume_->unvalidated(); }
  bool in_recovery() const { return prr_.has_value(); }
  const DomainCounters& counters() const { return counters_; }

 private:
  static RttConfig rtt_config(const EnsembleConfig& config);
  // gate() with the pacers waiting for `paced_bytes` of budget.
  SendGate gate_for(Instant now, bool beyond_window, ByteCount paced_bytes) const;
  ByteCount mss() const { return config_.max_datagram_bytes; }
  WindowLawParams law_params() const;
  bool cwnd_limited(ByteCount prior_flight) const;
  bool looks_random(ByteCount prior_flight) const;
  bool restart_due(Instant now) const;
  void restart_after_idle(Instant now);
  void on_flight_started(const SentPacket& packet);
  Duration resume_interval() const;
  // How many decreases the losses from `first` on are (0: same round).
  std::uint32_t new_decreases(const std::vector<SentPacket>& lost, std::size_t first);
  void on_lost(const std::vector<SentPacket>& lost, std::size_t first, Instant now,
               ByteCount prior_flight_bytes);
  // Every declared loss, to the law (before its loss-round logic).
  void report_losses(const std::vector<SentPacket>& lost, std::size_t first, Instant now,
                     ByteCount prior_flight_bytes);
  bool resume_on_lost();
  void grow(const SentPackets::AckResult& result, ByteCount growable_bytes,
            ByteCount prior_flight, Instant now);
  void after_ack(const SentPackets::AckResult& result, ByteCount acked_bytes);
  void end_prr_if_recovered(PacketNumber largest_acked_in_event);
  void remember_lost(const std::vector<SentPacket>& lost, std::size_t first);
  void undo_if_spurious(std::span<const AckedRange> ranges);
  void fire_rto(Instant now, TimeoutOutcome& out);
  void fire_probe(Instant now, TimeoutOutcome& out);
  // Does the timer send a tail probe (else it is the RTO)? Not while a
  // careful resume is unvalidated: silence then says the jump was dropped
  // (its packets are marked LE), and the RTO's fallback is the answer (TCP
  // fast start 3.4.4; the careful-resume draft's safe retreat).
  bool probe_next() const;
  // How long after rto_armed_at_ the timer fires: a PTO while tail probes
  // are left, then the RTO.
  Duration timer_interval() const;
  void update_timer(Instant now, bool new_data_acked);

  const EnsembleConfig& config_;
  DomainListener* listener_;
  bool resume_after_idle_;
  std::unique_ptr<WindowLaw> law_;
  RttEstimator rtt_;
  RecentMaxRtt recent_max_rtt_;  // random_loss: veno
  QueueBound queue_bound_;       // the standing queue RTT shows and loss does not
  DeliveryRateSampler rate_sampler_;
  AckPathMeter ack_path_;  // the ACKs' queueing, from the peer's stamps
  SentPackets sent_;
  Pacer pacer_;  // paces the unvalidated part of a careful resume
  RatePacer rate_pacer_;  // paces every packet (pacing.enabled, max_rate_bps)
  RatePacer cap_pacer_;   // max_rate_bps over every datagram, data or not
  double cap_bytes_per_s() const { return static_cast<double>(config_.max_rate_bps) / 8.0; }
  // What a datagram of `bytes` (UDP payload) takes of the link: plus its IPv4
  // and UDP headers, which the ACK-only packets' ~60 bytes roughly double.
  static constexpr ByteCount kIpUdpHeaderBytes = 28;
  void charge_cap(Instant now, ByteCount bytes);
  std::uint32_t initial_window_packets_;
  ByteCount initial_window_bytes_;  // also the restart window after idle
  std::optional<PacketNumber> recovery_point_;  // RFC 6582 "recover"
  // `n_flows`: each member's own RFC 6582 "recover" point.
  std::unordered_map<MemberId, PacketNumber> member_recovery_;
  std::optional<HyStart> hystart_;       // SlowStart::hystart_pp
  bool recovery_send_pending_ = false;   // send_one_on_recovery: one packet may go
  std::optional<Prr> prr_;               // Recovery::prr, while in recovery
  std::optional<CarefulResume> resume_;  // from the cache or after idle
  std::optional<SpuriousLossUndo> undo_;  // the latest loss round, while undoable
  std::optional<Instant> rto_armed_at_;   // the PTO's and the RTO's start
  // The PTO from a resumed PathState's RTT, until the estimator's first sample.
  std::optional<Duration> saved_pto_;
  std::uint32_t probes_unanswered_ = 0;   // tail loss probes since the last ack of new data
  bool probe_pending_ = false;            // one packet may go beyond the window
  Instant idle_since_;                    // when the last flight with data was acked
  bool control_only_flight_ = false;      // the flight outstanding carries no data
  bool sent_data_ = false;                // a flight has carried data (the law's state is the data's)
  DomainCounters counters_;
};

}  // namespace egw::congestion
