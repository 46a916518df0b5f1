// The ensemble: every stream that shares a path shares one congestion state.
//
// Model (E-TCP's ensemble control block; EFCM; TCP session; seed 003):
//  - one window state (cwnd, ssthresh) driven by a pluggable window law,
//    one RTT estimator (RFC 6298) fed by every member, one list of
//    outstanding packets across members in send order;
//  - loss detection across members (RFC 9002 packet and time thresholds on
//    the ensemble-wide send order): a packet of stream A is declared lost by
//    acknowledgements of later packets of stream B;
//  - one multiplicative decrease per loss round for the whole ensemble, undone
//    when every packet the round declared lost is acked after all (reordering)
//    (`n_flows`: one 1/(2n) decrease per member that lost in its own round,
//    as each of n flows would halve its share, EFCM 2.4.2); an RTO
//    only when the whole ensemble heard nothing, so one stream's tail loss
//    never sends the ensemble back to slow start while others are acked,
//    and only after tail loss probes (RFC 9002 6.2) went unanswered;
//  - optionally HyStart++ (RFC 9406) to leave the initial slow start when
//    the RTT grows, one packet at once on entering recovery (RFC 9002
//    7.3.2), and Proportional Rate Reduction during recovery (RFC 6937);
//    all per domain, off by default;
//  - window validation (RFC 7661, RFC 9002 7.8): the window grows only on
//    acks that arrive while the sender was window-limited, so an
//    application-limited ensemble keeps the window it has proven;
//  - a stride scheduler that picks which backlogged member sends next;
//  - joins that take a share of the aggregate released on the ACK clock;
//  - a resume from a cached PathState, and a restart after any idle period
//    longer than an RTO, by careful resume (the state machine is drawn in
//    congestion/careful_resume.h).
// Coupling `none` keeps one independent state per member instead (the
// uncoupled bundle baseline) behind the same API.
//
// Sans-IO: no clock, no sockets. Every call takes `now`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/content_class.h"
#include "common/units.h"
#include "congestion/congestion_domain.h"
#include "congestion/ensemble_config.h"
#include "congestion/packet.h"
#include "congestion/path_state.h"
#include "congestion/stride_scheduler.h"

namespace egw::congestion {

struct EnsembleStats {
  ByteCount cwnd_bytes = 0;      // aggregate (sum over members for `none`)
  ByteCount ssthresh_bytes = 0;
  ByteCount bytes_in_flight = 0;
  Duration srtt{0};
  Duration rttvar{0};
  Duration min_rtt{0};
  std::uint64_t packets_sent = 0;
  std::uint64_t packets_lost = 0;
  std::uint64_t loss_rounds = 0;  // multiplicative decreases
  std::uint64_t rto_count = 0;
  std::uint64_t tail_probes = 0;  // PTOs that sent a probe instead of an RTO
  std::uint64_t spurious_rounds = 0;  // decreases undone: every loss was reordering
  std::uint64_t random_loss_rounds = 0;  // of loss_rounds: lighter cuts (`random_loss: veno`)
  std::size_t members = 0;
  std::size_t active_members = 0;  // backlogged or with packets in flight
  bool resumed = false;           // started from a cached PathState
  LawState law;                   // the reference domain's law
  double pacing_rate_bytes_per_s = 0;  // the reference domain's pacer
  // Congestion domains an ACK was applied to, summed over ACKs: with
  // coupling `none` only the domains of the packets an ACK covers.
  std::uint64_t ack_domain_visits = 0;
};

class Ensemble {
 public:
  Ensemble(const EnsembleConfig& config, Instant now,
           std::optional<PathState> resume_from = std::nullopt);
  ~Ensemble();
  Ensemble(const Ensemble&) = delete;
  Ensemble& operator=(const Ensemble&) = delete;

  // Membership. A removed member's outstanding packets stay tracked until
  // they are acknowledged or lost.
  void add_member(MemberId id, ContentClass cls, Instant now);
  void remove_member(MemberId id, Instant now);
  void set_class(MemberId id, ContentClass cls);
  void set_scheduler_config(const SchedulerConfig& config);
  std::size_t member_count() const;

  // Which members have something to send: new data within their own stream
  // credit, or a retransmission. The tunnel says so whenever it changes; only
  // backlogged members are scheduled, and idle members cost nothing per
  // packet. With `n_flows` a member counts towards n while it is backlogged
  // or has packets in flight (an idle stream adds no aggressiveness).
  void set_backlogged(MemberId id, bool backlogged, Instant now);
  bool backlogged(MemberId id) const;

  // Sending. can_send: may `id` put one more full-size packet on the wire now
  // (window, join share and pacing). Retransmissions use it too but skip
  // pick_sender: they go first.
  bool can_send(MemberId id, Instant now) const;
  // The backlogged member that sends next, by the stride scheduler (and join
  // state), among those that may send now. At high rates the last sender
  // goes on for up to kRunDuration at the pacing rate (and a window at most)
  // while the scheduler's choice is in its class (ensemble.cc, "Runs").
  std::optional<MemberId> pick_sender(Instant now);
  static constexpr Duration kRunDuration = us(100);
  // Packet numbers must increase in send order (never reused); a packet whose
  // number does not is counted but not tracked.
  // Returns whether this packet is part of an unvalidated resumed window:
  // the driver marks it DSCP LE so routers that honour it drop it first.
  bool on_packet_sent(const SentPacket& packet);
  // A datagram the window does not hold (ACK-only, path MTU probe) left:
  // counted against max_rate_bps only (CongestionDomain::on_unscheduled_sent).
  void on_unscheduled_sent(Instant now, ByteCount bytes);
  // Would a packet sent now be marked (see on_packet_sent)?
  bool low_priority() const;
  // The largest datagram a packet of `id` may be now: max_datagram_bytes,
  // or less while a realtime member is sending on a slow path and `id` is
  // not realtime (congestion/realtime_packets.h). Coupled modes measure the
  // rate; `none` goes by max_rate_bps alone.
  ByteCount packet_bytes_limit(MemberId id, Instant now) const;

  // Feedback. Ranges may come in any order; packet numbers this ensemble did
  // not send are ignored. ack_delay is the receiver's reported delay. The
  // outcome lives in buffers the ensemble reuses: valid until the next
  // on_ack or on_timeout (no allocation per ack in steady state).
  // `peer_sent_at`: the ACK's timestamp when the peer stamps ACKs (the
  // peer's clock; congestion/ack_path_meter.h).
  const AckOutcome& on_ack(std::span<const AckedRange> ranges, Duration ack_delay, Instant now,
                           std::optional<Duration> peer_sent_at = std::nullopt);
  // Earliest of the loss-time and PTO/RTO deadlines; nullopt when nothing is outstanding.
  std::optional<Instant> next_timeout() const;
  const TimeoutOutcome& on_timeout(Instant now);
  // When a backlogged member is held only by pacing (or a join's release
  // timer), the instant it may send; nullopt otherwise.
  std::optional<Instant> next_pacing_release(Instant now) const;

  // The datagram size in use changed (the tunnel's path MTU discovery found
  // a larger one, or a black hole sent it back to the base). RFC 9002 7.2:
  // the window's unit follows, and so does the initial window: a restart
  // after idle, a new member domain (`none`), CA growth, floors and pacing
  // use the new size. cwnd and ssthresh are not rescaled, except that a
  // domain that has never sent and still holds its initial window starts
  // with the new one.
  void set_max_datagram_bytes(ByteCount bytes);
  // The configured WAN rate for what this side sends (EnsembleConfig::
  // max_rate_bps; 0 = none): the pacer never exceeds it. The hub learns its
  // peer's download rate after the ensemble exists.
  void set_max_rate_bps(std::uint64_t bits_per_s);

  // What the ensemble measured, with how far to trust it (for the cache).
  PathObservation observe(Instant now) const;
  PathState snapshot(Instant now) const { return observe(now).state; }
  EnsembleStats stats() const;
  // Per-member view (for `none` it is the member's own state; otherwise the
  // member's share of the aggregate).
  ByteCount member_cwnd_bytes(MemberId id) const;
  const EnsembleConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace egw::congestion
