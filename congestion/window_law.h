// How the congestion window grows and shrinks: the pluggable "window law".
//
// A law owns cwnd and ssthresh (bytes) and nothing else: it does not know
// about packets, members, timers or pacing. The Ensemble decides *when* an
// event happens (which acks count, one decrease per loss round, whether an RTO
// fired) and the law decides *by how much* the window changes.
//
// `n_flows` is how many standard flows the caller wants to emulate (EFCM: an
// ensemble of n members is as aggressive as n flows). n = 1 is the plain
// single-flow algorithm; callers pass at least 1.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>

#include "common/units.h"

namespace egw::congestion {

enum class WindowLawKind;  // congestion/ensemble_config.h
struct RateSample;         // congestion/delivery_rate.h

// A fresh flow has no ssthresh: slow start runs until the first loss.
inline constexpr ByteCount kInfiniteSsthresh = std::numeric_limits<ByteCount>::max();

struct WindowLawParams {
  ByteCount max_datagram_bytes = 1200;  // "MSS" / SMSS
  ByteCount initial_cwnd_bytes = 10 * 1200;
  ByteCount min_cwnd_bytes = 2 * 1200;  // floor after a multiplicative decrease
  bool ack_path_window = false;         // the model law's window covers the ACK path's delay
};

// A law's own view of the path, for status and metrics. `state` is a static
// string: "slow_start"/"avoidance" for the loss-based laws, the model's
// state ("startup", "drain", "probe_bw/up", "competitive", ...).
struct LawState {
  const char* state = "";
  double bottleneck_bytes_per_s = 0;  // the model's bw; 0 for loss-based laws
  std::uint64_t probe_extensions = 0;  // the model's UP probes that found room and went on
  Duration ack_path_delay{0};          // the model's window covers it (model_law_ack_path.cc)
};

// What a law may want to know about the path when an ack arrives.
struct RttInfo {
  Duration latest{0};
  Duration srtt{0};
  Duration min_rtt{0};
};

class WindowLaw {
 public:
  virtual ~WindowLaw() = default;

  virtual ByteCount cwnd_bytes() const = 0;
  virtual ByteCount ssthresh_bytes() const = 0;
  bool in_slow_start() const { return cwnd_bytes() < ssthresh_bytes(); }

  // `acked_bytes` newly acknowledged bytes that may grow the window (the
  // caller already left out acks of packets sent before recovery started).
  virtual void on_ack(ByteCount acked_bytes, const RttInfo& rtt, Instant now,
                      std::uint32_t n_flows) = 0;
  // One multiplicative decrease (the caller guarantees one per loss round).
  virtual void on_congestion_event(Instant now, std::uint32_t n_flows) = 0;
  // A loss round the queue did not cause (TCP Veno: the backlog estimate was
  // below a few packets, so the loss was random, e.g. a radio link): a
  // lighter decrease. The default treats it as congestion.
  virtual void on_random_loss_events(Instant now, std::uint32_t n_flows, std::uint32_t count) {
    on_congestion_events(now, n_flows, count);
  }
  // `count` decreases from one batch of losses (`n_flows`: several members
  // each lost in their own round, EFCM 2.4.2). The default applies them one
  // by one; a law with per-epoch memory (CUBIC's W_max) treats them as one
  // event that starts from the window before the batch.
  virtual void on_congestion_events(Instant now, std::uint32_t n_flows, std::uint32_t count) {
    for (std::uint32_t i = 0; i < count; ++i) on_congestion_event(now, n_flows);
  }
  // Retransmission timeout (RFC 5681 3.1 eq. 4 and LW): back to one segment.
  virtual void on_rto(ByteCount bytes_in_flight, std::uint32_t n_flows) = 0;
  // Sending resumed after `idle` with nothing in flight (shorter than an
  // RTO: longer idle periods restart the window instead). A law whose growth
  // follows the clock (CUBIC) must not count the idle time (RFC 9438 5.8).
  virtual void on_idle_ended(Duration /*idle*/) {}
  // Idle longer than an RTO: the domain restarts the window next (set_state
  // with the restart window, or a careful resume's, which carries what is
  // worth resuming); a law with a model of the path forgets it here.
  virtual void on_idle_restart() {}
  // Overwrite the state (resume from a cache, validation, fallback). Any
  // per-epoch memory (CUBIC's W_max, byte counters) starts over.
  virtual void set_state(ByteCount cwnd_bytes, ByteCount ssthresh_bytes) = 0;
  // The datagram size changed (path MTU discovery, RFC 9002 7.2): the
  // arithmetic from now on (CA growth per RTT, floors, the RTO's one
  // segment, CUBIC's curve in segments) uses the new params. cwnd and
  // ssthresh stay as they are: initial_cwnd_bytes was only the start.
  virtual void set_params(const WindowLawParams& params) = 0;

  // Rate-based laws (congestion/model_law.h). The loss-based laws ignore
  // these; the domain calls them for every law.
  //
  // One delivery-rate sample per ack (congestion/delivery_rate.h).
  virtual void on_rate_sample(const RateSample& /*sample*/, Instant /*now*/) {}
  // Packets declared lost (every loss, not one call per loss round):
  // `prior_in_flight` the flight before they were taken out of it,
  // `sent_in_flight` the largest flight any of them was sent into.
  virtual void on_packets_lost(ByteCount /*lost_bytes*/, ByteCount /*prior_in_flight*/,
                               ByteCount /*sent_in_flight*/, Instant /*now*/) {}
  // The rate this law wants packets paced at, in bytes per second of whole
  // datagrams; nullopt: the domain derives one from cwnd and srtt.
  virtual std::optional<double> pacing_rate_bytes_per_s() const { return std::nullopt; }

  virtual LawState law_state() const {
    return {.state = in_slow_start() ? "slow_start" : "avoidance"};
  }
};

std::unique_ptr<WindowLaw> make_window_law(WindowLawKind kind, const WindowLawParams& params);

}  // namespace egw::congestion
