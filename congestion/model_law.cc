#include "congestion/model_law.h"

#include <algorithm>
#include <cmath>

#include "congestion/delivery_rate.h"

namespace egw::congestion {

ModelLaw::ModelLaw(const WindowLawParams& params)
    : params_(params), cwnd_(params.initial_cwnd_bytes), cubic_(params) {}

ByteCount ModelLaw::ssthresh_bytes() const {
  // Startup is the law's slow start; after it the window is the model's.
  return state_ == State::startup ? kInfiniteSsthresh : cwnd_;
}

ByteCount ModelLaw::bdp_bytes() const {
  const double bw = bw_bytes_per_s();
  if (bw <= 0 || !min_rtt_) return params_.initial_cwnd_bytes;
  return static_cast<ByteCount>(bw * to_seconds(*min_rtt_));
}

// 5 ms, but at most a few min RTTs: on a sub-ms path (a LAN, or the peer
// gateway's CPU as the bottleneck, where the queue is its UDP receive
// buffer) 5 ms of queue is 20-100 round trips that every request waits
// behind (issue 22). Paths of 2.5 ms and more keep the 5 ms.
Duration ModelLaw::queue_target_delay() const {
  const Duration by_rtt =
      std::max<Duration>(kQueueTargetMinRtts * min_rtt_.value_or(kQueueTarget), kQueueTargetFloor);
  return std::min(kQueueTarget, by_rtt);
}

// The floor is the ACK clock's (an ACK per 2 packets; a min_rtt sampled on
// a small packet lacks a full one's serialization), but 4 packets were
// 47 ms at 1 Mbit/s: the upload's queue before every ACK of the download.
ByteCount ModelLaw::queue_target_bytes() const {
  const double bw = bw_bytes_per_s();
  const ByteCount packet = params_.max_datagram_bytes;
  ByteCount floor = kQueueTargetMinPackets * packet;
  const auto at_bw = [bw](Duration d) { return static_cast<ByteCount>(bw * to_seconds(d)); };
  if (bw > 0) {
    floor = std::max(kAckClockPackets * packet, std::min(floor, at_bw(kQueueTargetMinPacketsDelay)));
  }
  return std::max(at_bw(queue_target_delay()), floor);
}

Duration ModelLaw::own_target_delay() const {
  const double bw = bw_bytes_per_s();
  if (bw <= 0) return Duration{0};
  return Duration{static_cast<std::int64_t>(1e6 * static_cast<double>(queue_target_bytes()) / bw)};
}

void ModelLaw::set_params(const WindowLawParams& params) {
  params_ = params;
  cubic_.set_params(params);
}

void ModelLaw::on_ack(ByteCount acked_bytes, const RttInfo& rtt, Instant now,
                      std::uint32_t n_flows) {
  n_flows_ = std::max<std::uint32_t>(n_flows, 1);
  if (rtt.srtt > Duration{0}) srtt_ = rtt.srtt;
  if (!competitive_) return;  // the model's window moves with rate samples
  cubic_.on_ack(acked_bytes, rtt, now, competing_flows());
  take_cubic_window();
  if (state_ == State::probe_bw && phase_ == Phase::down) cwnd_ = std::min(cwnd_, bdp_bytes());
  cwnd_ = std::max(cwnd_, min_cwnd());
}

void ModelLaw::on_rto(ByteCount bytes_in_flight, std::uint32_t n_flows) {
  // The path may have changed beyond what the model knows: one packet, then
  // cwnd grows by what is acked back to the model's target.
  if (competitive_) cubic_.on_rto(bytes_in_flight, n_flows);
  cwnd_ = params_.max_datagram_bytes;
}

void ModelLaw::set_state(ByteCount cwnd_bytes, ByteCount ssthresh_bytes) {
  // Careful resume's jump, an undo, a restart: the window, as the domain
  // says. A finite ssthresh at or below it (HyStart++'s exit) ends startup.
  cwnd_ = std::max(cwnd_bytes, params_.max_datagram_bytes);
  if (state_ == State::startup && ssthresh_bytes != 0 && ssthresh_bytes != kInfiniteSsthresh &&
      ssthresh_bytes <= cwnd_bytes) {
    filled_pipe_ = true;
    state_ = State::drain;
    phase_start_round_ = round_;
  }
  if (competitive_) cubic_.set_state(cwnd_bytes, ssthresh_bytes);
}

std::optional<double> ModelLaw::pacing_rate_bytes_per_s() const {
  const double bw = bw_bytes_per_s();
  if (competitive_) return competitive_pacing_rate();
  if (bw <= 0) {
    // No sample yet: startup's gain over the initial window (BBR's init).
    if (!srtt_ || *srtt_ <= Duration{0}) return std::nullopt;
    return kStartupPacingGain * static_cast<double>(cwnd_) / to_seconds(*srtt_);
  }
  double gain = 1.0;
  switch (state_) {
    case State::startup: return startup_pacing_rate();
    case State::drain: gain = kDrainPacingGain; break;
    case State::probe_rtt: gain = 1.0; break;
    case State::probe_bw:
      gain = phase_ == Phase::down ? kDownPacingGain : phase_ == Phase::up ? kUpGain : 1.0;
      break;
  }
  return gain * bw * kPacingMargin;
}

// Startup paces at its gain over bw, but never below its gain over the
// initial window (Linux BBR: the pacing rate starts from the initial window
// over srtt and does not fall during startup; not the window as set_state
// moves it: an undo or a join of EFCM's n_flows would unpace startup). The first
// samples of a transfer are a request's few bytes, app-limited: the model
// takes them (they beat a bw of 0), and 2.77 x that paced the next round at
// 27 kbit/s where the initial window alone allowed 4 Mbit/s (the simulator's
// upload beside a download: startup then took 8 rounds from 10 kbit/s, the
// download's queue in its ACK path ended it at 2.6 Mbit/s, 49 % of a 7 s
// transfer; a lone 40 KB fetch took 35 ms longer than NewReno's).
double ModelLaw::startup_pacing_rate() const {
  const double by_model = kStartupPacingGain * bw_bytes_per_s() * kPacingMargin;
  const std::optional<Duration> rtt = min_rtt_ ? min_rtt_ : srtt_;
  if (!rtt || *rtt <= Duration{0}) return by_model;
  const double by_window =
      kStartupPacingGain * static_cast<double>(params_.initial_cwnd_bytes) / to_seconds(*rtt);
  return std::max(by_model, by_window);
}

LawState ModelLaw::law_state() const {
  const char* name = "probe_rtt";
  switch (state_) {
    case State::startup: name = "startup"; break;
    case State::drain: name = "drain"; break;
    case State::probe_rtt: break;
    case State::probe_bw:
      name = phase_ == Phase::down ? "probe_bw/down" : phase_ == Phase::up ? "probe_bw/up" : "probe_bw/cruise";
      break;
  }
  if (competitive_) name = "competitive";
  return {.state = name,
          .bottleneck_bytes_per_s = bw_bytes_per_s(),
          .probe_extensions = probe_extensions_,
          .ack_path_delay = ack_path_delay_};
}

void ModelLaw::on_rate_sample(const RateSample& rs, Instant now) {
  // Stamped ACKs: their wait on the way back, for the window (model_law_ack_path.cc);
  // the rules below judge the whole RTT (session 34: the forward one lost CUBIC's queue).
  if (rs.ack_path_delay) measure_ack_path(rs);
  measure_ack_stretch(rs);
  update_min_rtt(rs, now);
  update_bw(rs);
  round_loss_.delivered += rs.acked_bytes;
  flight_max_[1] = std::max(flight_max_[1], rs.prior_in_flight);
  const ByteCount gone = rs.acked_bytes + rs.lost_bytes;
  const ByteCount inflight = rs.prior_in_flight > gone ? rs.prior_in_flight - gone : 0;
  round_min_flight_ = std::min(round_min_flight_, inflight);
  if (rs.round_start) {
    flight_max_[0] = flight_max_[1];
    flight_max_[1] = 0;
    on_round_start(rs);
    round_min_flight_ = kNoFlight;
  }
  if (rs.rtt && state_ == State::probe_bw) {
    cycle_min_rtt_ = cycle_min_rtt_ ? std::min(*cycle_min_rtt_, *rs.rtt) : *rs.rtt;
  }
  sample_ack_path(rs);
  sample_down(rs);
  sample_standing(rs);
  advance_state(inflight, now);
  startup_app_limited_ = rs.is_app_limited;
  update_cwnd(rs.acked_bytes);
}

void ModelLaw::update_bw(const RateSample& rs) {
  if (!rs.valid) return;
  // An app-limited sample only counts if it beats the model: a sender with
  // little to send says nothing about the path's ceiling.
  if (rs.is_app_limited && rs.delivery_rate_bytes_per_s < bw_bytes_per_s()) return;
  if (ack_compressed(rs)) return;
  if (!rs.is_app_limited) cycle_busy_ = true;
  bw_hi_[1] = std::max(bw_hi_[1], rs.delivery_rate_bytes_per_s);
}

void ModelLaw::update_min_rtt(const RateSample& rs, Instant now) {
  if (!rs.rtt || *rs.rtt <= Duration{0}) return;
  const Duration rtt = *rs.rtt;
  const Instant previous_sample = last_rtt_sample_;
  last_rtt_sample_ = now;
  if (state_ == State::probe_rtt) {
    probe_rtt_min_ = probe_rtt_min_ ? std::min(*probe_rtt_min_, rtt) : rtt;
  }
  if (!min_rtt_ || rtt < *min_rtt_) {
    min_rtt_ = rtt;
    min_rtt_stamp_ = now;
    last_near_min_ = now;
    return;
  }
  // A pause in the samples (idle, app-limited) is no evidence of a queue. A
  // window-limited sender, even a starved one, gets one every round trip.
  const Duration rtt_now = srtt_ ? std::max(*srtt_, rtt) : rtt;
  const bool gap = now - previous_sample > std::max<Duration>(kSampleGap, 2 * rtt_now);
  if (gap || rtt <= *min_rtt_ + standing_threshold()) last_near_min_ = now;
  // A sample near the minimum confirms it: with a drained queue every cycle
  // the model needs no ProbeRTT to stay fresh.
  const Duration tolerance = std::max<Duration>(ms(1), *min_rtt_ / 16);
  if (rtt <= *min_rtt_ + tolerance) min_rtt_stamp_ = now;
}

void ModelLaw::on_round_start(const RateSample& rs) {
  round_ = rs.round_count;
  for (std::size_t i = kLossWindowRounds - 1; i > 0; --i) past_loss_[i] = past_loss_[i - 1];
  past_loss_[0] = round_loss_;
  round_loss_ = RoundLoss{};
  lost_sent_in_ = {lost_sent_in_[1], 0};
  if (state_ == State::startup) check_full_bw(rs);
  if (state_ == State::probe_bw && phase_ == Phase::up && inflight_hi_ != kInfiniteSsthresh) {
    // A round of UP without too much loss: raise the ceiling, faster each
    // round (BBRv3's probe_up), and drop it once it is far above the model.
    inflight_hi_ += inflight_hi_growth_;
    inflight_hi_growth_ *= 2;
    if (inflight_hi_ > 2 * target_cwnd()) inflight_hi_ = kInfiniteSsthresh;
  }
}

void ModelLaw::probe_again(Instant now) {
  ++probe_extensions_;
  enter_phase(Phase::up, now);
}

void ModelLaw::advance_state(ByteCount inflight, Instant now) {
  switch (state_) {
    case State::startup:
      if (!filled_pipe_) break;
      state_ = State::drain;
      phase_start_round_ = round_;
      [[fallthrough]];
    case State::drain:
      // Bounded: beside someone else's standing queue our flight at the
      // drain rate stays above the BDP (the RTT is longer than min_rtt).
      if (inflight <= bdp_bytes() || round_ - phase_start_round_ >= 3) {
        state_ = State::probe_bw;
        last_near_min_ = now;  // startup's queue was ours: the evidence starts here
        enter_phase(Phase::down, now);
      }
      break;
    case State::probe_bw: advance_probe_bw(inflight, now); break;
    case State::probe_rtt: check_probe_rtt(inflight, now); return;
  }
  // Judged on a fresh RTT sample (update_min_rtt ran: a pause reset it).
  if (state_ == State::probe_bw && !competitive_ && last_rtt_sample_ == now) judge_standing_queue(now);
  // Competing, ProbeRTT would only measure the other queue and take it for
  // the path's RTT.
  const Duration window = competitive_ ? kCompetitiveMinRttWindow : kMinRttWindow;
  if (state_ == State::probe_bw && min_rtt_ && now - min_rtt_stamp_ > window) {
    if (competitive_) {
      // A standing queue for a minute: take the RTT as it now is (a route
      // change looks the same); the next cycle decides afresh.
      if (cycle_min_rtt_) min_rtt_ = *cycle_min_rtt_;
      min_rtt_stamp_ = now;
    } else {
      enter_probe_rtt(now);
    }
  }
}

void ModelLaw::advance_probe_bw(ByteCount inflight, Instant now) {
  const std::uint64_t rounds = round_ - phase_start_round_;
  if (phase_ != Phase::up && up_start_bw_ > 0) {
    // The acks of UP's last packets arrive in the round after it.
    if (probe_found_room()) {
      probe_again(now);
      return;
    }
    if (round_ > up_end_round_ + 1) up_start_bw_ = 0;
  }
  switch (phase_) {
    case Phase::down:
      // Our queue is gone once the flight is down to the BDP; a bound of 3
      // rounds for a model that overestimates bw.
      if (competitive_ ? rounds >= 2
                       : ((inflight <= bdp_bytes() && !down_measures_ack_path()) || rounds >= 3)) {
        check_down_drained(inflight, now);
        enter_phase(Phase::cruise, now);
      }
      break;
    case Phase::cruise:
      if (now - cycle_start_ >= cycle_length_) {
        end_cycle(now);
      } else if (early_up_due(now)) {
        // An early UP, not a cycle: the max filter keeps startup's samples
        // for two whole cycles still (rotated here, beside CUBIC's slow
        // start the model forgot its share 2-3 s early: 0.25x one flow).
        enter_phase(Phase::up, now);
      }
      break;
    case Phase::up: {
      if (rounds >= 1 && probe_found_room()) {
        probe_again(now);
        break;
      }
      const auto up_target = static_cast<ByteCount>(kUpGain * static_cast<double>(window_bdp_bytes()));
      // Not ended by inflight_hi: UP is where a bound set by loss grows back.
      if (rounds >= 1 && (inflight >= up_target || rounds >= 3)) {
        enter_phase(Phase::down, now);
      }
      break;
    }
  }
}

// The pipe took the whole probe: the model found nearly a quarter more rate
// and the queue did not grow. The path may have far more room than the
// model thought, e.g. startup ended early on a plateau that the reverse
// path's queue made (a download beside an upload): probe up again at once,
// 25 % per probe instead of per 2-3 s cycle (BBRv3's PROBE_UP also runs on
// while the rate grows). Not startup again: its 2.77x overshoots by up to a
// BDP (the WAN lab's requests beside it: +60 ms at p99); a probe's 1.25x by
// a quarter. Judged from UP's start until its packets are acked, a round
// after it: in the WAN lab UP's first round ended the phase (the flight
// reached 1.25 BDP) before its samples showed the growth.
bool ModelLaw::probe_found_room() const {
  return !competitive_ && up_start_bw_ > 0 && bw_bytes_per_s() >= kUpRoomGrowth * up_start_bw_;
}

// The first UP after startup comes early (8 min_rtt, not 2-3 s).
// Startup's estimate is often short of the link: a plateau may be the
// peer's startup queue in our ACK path (the upload beside a download), gone
// a few rounds later; a loss exit came when 2.77 x bw overflowed a shallow
// buffer, before bw reached the link (14-15 of 20 Mbit/s with 25 packets).
// Waiting 2-3 s for the first UP cost 7 s transfers both ways 5-15 points
// (the simulator, 0.5-1 % loss, five seeds). Only when the cycle's RTT came
// within one min_rtt of min_rtt: not beside someone else's deep standing
// queue (with the standing threshold, half of that, the lab's lossy upload
// lost its early UP: 79-81 % in 2 of 4 runs).
bool ModelLaw::early_up_due(Instant now) {
  if (!early_up_pending_ || !min_rtt_ || now - cycle_start_ < kFirstCycleRtts * *min_rtt_) {
    return false;
  }
  early_up_pending_ = false;
  return cycle_min_rtt_ && *cycle_min_rtt_ <= *min_rtt_ + std::max(standing_threshold(), *min_rtt_);
}

void ModelLaw::end_cycle(Instant now) {
  // Competing, a drained cycle whose RTT came near min_rtt again: the other
  // queue is gone, the model is back.
  if (competitive_ && cycle_drains_ && cycle_min_rtt_ && min_rtt_ &&
      *cycle_min_rtt_ <= *min_rtt_ + standing_threshold()) {
    competitive_ = false;
    last_near_min_ = now;
  }
  ++cycle_count_;
  // BBRv3: the max filter spans this cycle and the last one. A cycle whose
  // every sample was app-limited (idle but for keep-alive PINGs) says
  // nothing of the path and ages nothing (Linux BBR's filter too only
  // expires on a new sample): the window stays what the path last carried,
  // for the domain's restart to resume from (model_law_idle.cc).
  if (cycle_busy_) {
    bw_hi_[0] = bw_hi_[1];
    bw_hi_[1] = 0;
  }
  cycle_busy_ = false;
  enter_phase(Phase::up, now);
}

void ModelLaw::enter_phase(Phase phase, Instant now) {
  if (phase_ == Phase::up && phase != Phase::up) up_end_round_ = round_;
  if (phase_ == Phase::down && phase != Phase::down && ack_path_inferred()) end_ack_path_sample();
  phase_ = phase;
  phase_start_round_ = round_;
  if (phase == Phase::down) {
    down_rtt_sum_ = Duration{0};  // the ACK path is judged on this DOWN's rounds
    down_rtt_samples_ = 0;
    down_acked_ = 0;
    down_start_ = now;
    down_app_limited_ = false;
    cycle_start_ = now;
    cycle_length_ = next_cycle_length();
    cycle_min_rtt_.reset();
    // Competing, draining our share costs it: only every
    // kCompetitiveDrainCycles-th cycle looks whether the other queue is gone.
    cycle_drains_ = !competitive_ || cycle_count_ % kCompetitiveDrainCycles == 0;
    if (!cycle_drains_) phase_ = Phase::cruise;
  }
  if (phase == Phase::up) up_start_bw_ = bw_bytes_per_s();
  if (phase == Phase::up && inflight_hi_ != kInfiniteSsthresh) {
    // +1/8, +1/4, +1/2 of the bound in UP's rounds (BBRv3 doubles its step
    // each round too, from one packet: too slow to undo a 0.7 cut in the
    // few rounds of one UP).
    inflight_hi_growth_ = std::max(params_.max_datagram_bytes, inflight_hi_ / 8);
  }
}

Duration ModelLaw::next_cycle_length() {
  // 2-3 s, so that ensembles sharing a bottleneck do not probe in step
  // (BBRv3); a fixed-seed xorshift keeps the simulator deterministic.
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 7;
  rng_ ^= rng_ << 17;
  return ms(2000 + static_cast<std::int64_t>(rng_ % 1000));
}

void ModelLaw::enter_probe_rtt(Instant now) {
  state_ = State::probe_rtt;
  probe_rtt_done_.reset();
  probe_rtt_min_.reset();
  phase_start_round_ = round_;
  min_rtt_stamp_ = now;  // do not re-enter while here
}

void ModelLaw::check_probe_rtt(ByteCount inflight, Instant now) {
  const ByteCount cap = std::max(bdp_bytes() / 2, min_cwnd());
  if (!probe_rtt_done_) {
    if (inflight > cap) return;
    probe_rtt_done_ = now + kProbeRttDuration;
    phase_start_round_ = round_;
    return;
  }
  if (now < *probe_rtt_done_ || round_ == phase_start_round_) return;
  if (probe_rtt_min_) min_rtt_ = *probe_rtt_min_;
  min_rtt_stamp_ = now;
  last_near_min_ = now;
  state_ = State::probe_bw;
  enter_phase(Phase::down, now);
}

ByteCount ModelLaw::target_cwnd() const {
  const ByteCount bdp = bdp_bytes();
  switch (state_) {
    case State::startup:
      return static_cast<ByteCount>(kStartupCwndGain * static_cast<double>(bdp));
    case State::drain:
      // Not only the pacing gain: without a pacer (or behind a slower one)
      // the window is what drains startup's queue.
      return bdp + queue_target_bytes();
    case State::probe_rtt: return std::max(bdp / 2, min_cwnd());
    case State::probe_bw: break;
  }
  // CRUISE's and UP's window also covers the ACK path's delay; DOWN's does
  // not, so that our queue drains whatever bw reads (model_law_ack_path.cc).
  const ByteCount window_bdp = phase_ == Phase::down ? bdp : window_bdp_bytes();
  const ByteCount target = queue_target_bytes();
  if (phase_ == Phase::up) {
    return static_cast<ByteCount>(kUpGain * static_cast<double>(window_bdp)) + target;
  }
  return window_bdp + target;
}

// Linux BBR grows startup's window until the initial window is delivered,
// whatever the model's target: the first samples of a transfer are often a
// request's few bytes, app-limited, and a target of 2 x that BDP stopped a
// 40 KB fetch at its initial window (35 ms slower than NewReno's slow start
// in the simulator). Not while the sender stays app-limited: it grows no
// window it does not use (RFC 7661; one packet per RTT kept 2 IW open).
bool ModelLaw::startup_fills_initial_window() const {
  return !startup_app_limited_ && startup_delivered_ < params_.initial_cwnd_bytes;
}

void ModelLaw::update_cwnd(ByteCount acked_bytes) {
  if (competitive_) {
    take_cubic_window();
    if (state_ == State::probe_bw && phase_ == Phase::down) {
      cwnd_ = std::max(std::min(cwnd_, bdp_bytes()), min_cwnd());
    }
    return;
  }
  const ByteCount target = target_cwnd();
  if (filled_pipe_) {
    cwnd_ = std::min(cwnd_ + acked_bytes, target);
  } else if (!have_model() || cwnd_ < target || startup_fills_initial_window()) {
    cwnd_ += acked_bytes;  // startup: grow by what is delivered (BBR)
  }
  startup_delivered_ += acked_bytes;
  cwnd_ = std::max(std::min(cwnd_, inflight_hi_), min_cwnd());
}

void ModelLaw::on_packets_lost(ByteCount lost_bytes, ByteCount prior_in_flight,
                               ByteCount sent_in_flight, Instant now) {
  round_loss_.lost += lost_bytes;
  lost_total_ += lost_bytes;
  lost_sent_in_[1] = std::max(lost_sent_in_[1], sent_in_flight);
  if (loss_response_round_ != round_ && loss_too_high(prior_in_flight)) {
    loss_response_round_ = round_;
    on_loss_too_high(prior_in_flight, now);
  }
}

bool ModelLaw::loss_too_high(ByteCount prior_in_flight) const {
  // Losses exceed kLossThreshold of the packets by a margin that a random
  // loss rate of up to 1 % practically never reaches: 3 sigma of a Poisson
  // count at the threshold, plus one packet. Checked over the current round
  // (a fast answer to an overflow; early in a round the flight, as BBRv3's
  // tx_in_flight, is its size) and over the last kLossWindowRounds (a slow
  // answer to a steady 2-3 %).
  const auto over = [this](ByteCount lost, ByteCount packets_bytes) {
    const double packets = static_cast<double>(packets_bytes) / mss();
    const double expected = kLossThreshold * packets;
    return static_cast<double>(lost) / mss() > expected + 3.0 * std::sqrt(expected) + 1.0;
  };
  RoundLoss window = round_loss_;
  for (const RoundLoss& r : past_loss_) {
    window.lost += r.lost;
    window.delivered += r.delivered;
  }
  const ByteCount round = std::max(round_loss_.lost + round_loss_.delivered, prior_in_flight);
  return over(round_loss_.lost, round) || over(window.lost, window.lost + window.delivered);
}

void ModelLaw::on_loss_too_high(ByteCount prior_in_flight, Instant now) {
  // BBRv3: the flight that lost too much, times beta, is the ceiling until
  // an UP probe finds room again. In startup not below beta x the model's
  // BDP (BBRv3's max(tx_in_flight, beta x target inflight)), nor below the
  // BDP itself when the losses were sent in a flight above BDP + queue
  // target (the largest of this round and the last): that is startup's own
  // overshoot into a shallow buffer, detected over 2-3 rounds and each
  // round's losses answered anew; the bound went 61 -> 40 -> 27 KB (22
  // packets on a 150-packet BDP) until the first UP. (In UP too, or in every
  // state, it helped the simulator's shallow buffers as much again, but the
  // law's long runs, a route change and the CUBIC shares, turned on it.)
  double floor = 0;
  if (state_ == State::startup && have_model()) {
    const ByteCount bdp = bdp_bytes();
    const ByteCount sent_in = std::max({prior_in_flight, flight_max_[0], flight_max_[1]});
    floor = static_cast<double>(bdp) * (sent_in > bdp + queue_target_bytes() ? 1.0 : kBeta);
  }
  if (state_ != State::startup && !competitive_) {
    // The flight the lost packets were sent into is the one that lost too
    // much. An UP probe's overshoot into a shallow buffer is detected a round
    // later, after DOWN took the flight back: beta times that smaller flight
    // put the bound 25-30 % under BDP until the next UP, 2-3 s away (the
    // simulator's 25-packet buffer at 0.5-1 %: 83-87 % of the link, 88-90 %
    // with this). Startup has its own rule above; competing, CUBIC's window
    // answers loss.
    floor = std::max(floor, kBeta * static_cast<double>(std::max(lost_sent_in_[0], lost_sent_in_[1])));
  }
  const auto bound =
      static_cast<ByteCount>(std::max(kBeta * static_cast<double>(prior_in_flight), floor));
  inflight_hi_ = std::max(bound, min_cwnd());
  // Answered: the next cut needs losses of its own. The 8-round window
  // would otherwise keep an old burst "too high", and every random loss in
  // those rounds would cut the bound again (0.7^k).
  past_loss_.fill(RoundLoss{});
  round_loss_ = RoundLoss{};
  lost_sent_in_ = {};
  cwnd_ = std::max(std::min(cwnd_, inflight_hi_), min_cwnd());
  if (state_ == State::startup) {
    filled_pipe_ = true;
    early_up_pending_ = true;
    state_ = State::drain;
    phase_start_round_ = round_;
  } else if (state_ == State::probe_bw && phase_ == Phase::up) {
    enter_phase(Phase::down, now);
  }
}

}  // namespace egw::congestion
