// The ensemble: every stream that shares a path shares one congestion state.
//
// Model (E-TCP's ensemble control block; EFCM; TCP session; seed 003):
//  - one window state (cwnd, ssthresh) driven by a pluggable window law,
//    one RTT estimator (RFC 6298) fed by every member, one list of
//    outstanding packets across members in send order;
//  - loss detection across members (RFC 9002 packet and time thresholds on
//    the ensemble-wide send order): a packet of stream A is declared lost by
//    acknowledgements of later packets of stream B;
//  - one multiplicative decrease per loss round for the whole ensemble
//    (`n_flows`: one 1/(2n) decrease per member that lost in its own round,
//    as each of n flows would halve its share, EFCM 2.4.2); an RTO
//    only when the whole ensemble heard nothing, so one stream's tail loss
//    never sends the ensemble back to slow start while others are acked;
//  - optionally HyStart++ (RFC 9406) to leave the initial slow start when
//    the RTT grows, one packet at once on entering recovery (RFC 9002
//    7.3.2), and Proportional Rate Reduction during recovery (RFC 6937);
//    all per domain, off by default;
//  - a stride scheduler that picks which member sends the next packet;
//  - joins that take a share of the aggregate released on the ACK clock;
//  - a resume from a cached PathState (careful resume / TCP fast start; the
//    state machine is drawn in congestion/careful_resume.h).
// Coupling `none` keeps one independent state per member instead (the
// uncoupled bundle baseline) behind the same API.
//
// Sans-IO: no clock, no sockets. Every call takes `now`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/content_class.h"
#include "common/units.h"
#include "congestion/path_state.h"
#include "congestion/stride_scheduler.h"

namespace egw::congestion {

// Packets that carry no stream data (a lone PING or flow-control credit) but
// still need an ACK are charged to this pseudo-member.
inline constexpr MemberId kControlMember = ~MemberId{0};

enum class CouplingMode {
  single,   // the ensemble is as aggressive as one flow (E-TCP, TCP session)
  n_flows,  // as aggressive as n flows, n = active members (EFCM, ctrlTCP)
  none,     // each member has its own independent state (uncoupled baseline)
};

enum class WindowLawKind { newreno, cubic };

// How a domain's initial slow start ends: at the first loss (RFC 5681), or
// earlier, when the RTT grows, with HyStart++ (RFC 9406, congestion/hystart.h).
enum class SlowStart { standard, hystart_pp };

// How a domain sends during loss recovery: `gate` holds every packet until
// the flight is below the reduced window (RFC 6582 with the plain cwnd gate);
// `prr` releases ssthresh/RecoverFS bytes per byte delivered (RFC 6937,
// PRR-SSRB, congestion/prr.h), so the first retransmission goes at once.
enum class Recovery { gate, prr };

enum class JoinMode {
  ack_clocked,  // seed 003 Algorithm 1: the joiner's share is released by ACKs of the others
  immediate,    // the joiner may send its share at once (the bursty baseline)
  paced,        // EFCM: the share is released by timer pacing
};

struct PacingConfig {
  std::uint32_t max_burst_packets = 2;  // EFCM: at most 2 segments back to back
  double alpha_min = 1.0;               // spacing alpha*SRTT/CWND, alpha grows
  double alpha_max = 2.0;               //   from 1 to 2 as SRTT grows
};

struct ResumeConfig {
  bool enabled = true;
  bool mark_low_priority = true;  // DSCP LE (RFC 8622) on unvalidated packets
};

struct EnsembleConfig {
  CouplingMode coupling = CouplingMode::single;
  WindowLawKind law = WindowLawKind::newreno;
  SlowStart slow_start = SlowStart::standard;  // every domain (`none`: each member)
  // RFC 9002 7.3.2 / RFC 6675 5: on entering recovery one packet may be sent
  // at once whatever the reduced window says, so the first retransmission is
  // not held until the flight drains below the new cwnd.
  bool send_one_on_recovery = false;
  Recovery recovery = Recovery::gate;  // every domain (`none`: each member)
  JoinMode join = JoinMode::ack_clocked;
  ByteCount max_datagram_bytes = 1200;        // window arithmetic unit ("MSS")
  std::uint32_t initial_window_packets = 10;  // RFC 6928
  std::uint32_t min_window_packets = 2;
  Duration initial_rtt = ms(333);  // RFC 9002 6.2.2, before any sample
  Duration min_rto = ms(200);      // Linux's floor; RFC 6298 says 1 s
  Duration max_rto = ms(60'000);
  std::uint32_t packet_threshold = 3;  // RFC 9002 kPacketThreshold
  double time_threshold = 9.0 / 8.0;   // RFC 9002 kTimeThreshold
  SchedulerConfig scheduler;
  PacingConfig pacing;
  ResumeConfig resume;
};

struct SentPacket {
  PacketNumber number = 0;
  MemberId member = kControlMember;
  ByteCount bytes = 0;  // whole datagram
  Instant sent_time{};
  bool ack_eliciting = true;  // ACK-only packets are not tracked as in flight
};

// Inclusive range of acknowledged packet numbers.
struct AckedRange {
  PacketNumber smallest = 0;
  PacketNumber largest = 0;
};

struct AckOutcome {
  std::vector<SentPacket> acked;  // newly acknowledged, in send order
  std::vector<SentPacket> lost;   // newly declared lost, in send order
};

struct TimeoutOutcome {
  std::vector<SentPacket> lost;  // declared lost by the time threshold or RTO
  bool rto_fired = false;        // the tunnel should send a probe if nothing is lost
};

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
  std::size_t members = 0;
  bool resumed = false;           // started from a cached PathState
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

  // Sending. can_send: may `id` put one more full-size packet on the wire now
  // (window, join share and pacing). Retransmissions use it too but skip
  // pick_sender: they go first.
  bool can_send(MemberId id, Instant now) const;
  // The member that sends next among those with data (has_data) that may
  // send, by the stride scheduler (and join state).
  std::optional<MemberId> pick_sender(Instant now,
                                      const std::function<bool(MemberId)>& has_data) const;
  // Packet numbers must increase in send order (never reused); a packet whose
  // number does not is counted but not tracked.
  void on_packet_sent(const SentPacket& packet);
  // True while packets belong to an unvalidated resumed window: the driver
  // marks them DSCP LE so routers that honour it drop them first.
  bool low_priority() const;

  // Feedback. Ranges may come in any order; packet numbers this ensemble did
  // not send are ignored. ack_delay is the receiver's reported delay.
  AckOutcome on_ack(std::span<const AckedRange> ranges, Duration ack_delay, Instant now);
  // Earliest of the loss-time and RTO deadlines; nullopt when nothing is outstanding.
  std::optional<Instant> next_timeout() const;
  TimeoutOutcome on_timeout(Instant now);
  // When can_send() is false only because of pacing, when it becomes true.
  std::optional<Instant> next_pacing_release(Instant now) const;

  // The state to cache when the ensemble ends.
  PathState snapshot(Instant now) const;
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
