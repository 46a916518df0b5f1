// The model law's window over the ACK path's delay (model_law.h, "The ACK
// path"): the RTT above min_rtt that our own DOWN does not drain is not our
// queue; the window covers it, or the law is window-limited below its rate.
#include <algorithm>

#include "congestion/delivery_rate.h"
#include "congestion/model_law.h"

namespace egw::congestion {

// DOWN paces at 0.9 bw, its window BDP + target (no allowance): after its
// first round our own queue is gone. What the RTT still shows above min_rtt is
// somebody else's queue, most often the reverse path's: on the asymmetric
// line (4 / 1 Mbit/s) the upload's queue of 40-50 ms on the uplink, which
// every ACK of the download crosses. Averaged, not the minimum: the window
// must cover the ACKs that wait, not the one that found the queue empty.
void ModelLaw::sample_ack_path(const RateSample& rs) {
  if (!ack_path_inferred() || state_ != State::probe_bw || phase_ != Phase::down || competitive_) return;
  if (!rs.rtt) return;
  if (round_ == phase_start_round_) {
    first_rtt_sum_ += *rs.rtt;
    ++first_rtt_samples_;
    return;
  }
  down_rtt_sum_ += *rs.rtt;
  ++down_rtt_samples_;
}

// DOWN's first round acks packets sent before it, with whatever queue of
// ours CRUISE or UP left; only the rounds after it are clean. If the first
// round shows an excess, DOWN waits for one more round to judge it.
Duration ModelLaw::first_round_excess() const {
  if (first_rtt_samples_ == 0 || !min_rtt_) return Duration{0};
  const Duration mean = first_rtt_sum_ / static_cast<std::int64_t>(first_rtt_samples_);
  return std::max(mean - *min_rtt_ - own_target_delay(), Duration{0});
}

bool ModelLaw::down_measures_ack_path() const {
  return ack_path_inferred() && !competitive_ && round_ == phase_start_round_ &&
         first_round_excess() > ack_path_threshold();
}

// Below a quarter of min_rtt the ACK path is left to the queue target and
// UP's gain, as before: a symmetric line's other direction (its own few
// milliseconds of target), a busy host's jitter.
Duration ModelLaw::ack_path_threshold() const {
  return std::max<Duration>(ms(1), min_rtt_.value_or(Duration{0}) / 4);
}

// At DOWN's end. A DOWN that ended in its first round saw no excess worth a
// round (down_measures_ack_path). Bounded by one min_rtt: the standing
// threshold above which the law takes the excess for a competitor's queue
// (BBR's 2 BDP window covers the same; its extra_acked is capped too).
void ModelLaw::end_ack_path_sample() {
  Duration delay{0};
  if (down_rtt_samples_ > 0 && min_rtt_) {
    const Duration mean = down_rtt_sum_ / static_cast<std::int64_t>(down_rtt_samples_);
    delay = std::clamp(mean - *min_rtt_ - own_target_delay(), Duration{0}, *min_rtt_);
    if (delay <= ack_path_threshold()) delay = Duration{0};
  }
  // The smaller of two DOWNs': a queue that one DOWN saw (the peer's
  // startup or drain) is no ACK path to cover. With the last one alone, a
  // startup that read bw 18 % above the link (compressed acks) left a queue
  // on the downlink that the branch's DOWN took for its ACK path, and each
  // side's wider window kept the other's queue: both buffers full.
  ack_path_delay_ = std::min(delay, last_down_delay_);
  last_down_delay_ = delay;
  down_rtt_sum_ = Duration{0};
  down_rtt_samples_ = 0;
  first_rtt_sum_ = Duration{0};
  first_rtt_samples_ = 0;
}

// Measured (the peer stamps its ACKs): each ACK's wait on the way back, the
// mean over a round; the window covers the smaller of the last two rounds'
// means (one round's burst, the peer's startup queue, is no path to cover),
// at most one min_rtt as the inferred delay. Measured in every phase (the
// ACKs wait in DOWN as in CRUISE); DOWN's window still leaves it out, so
// that our own queue drains whatever bw reads.
void ModelLaw::measure_ack_path(const RateSample& rs) {
  if (!ack_path_measured_) {
    ack_path_measured_ = true;
    ack_path_delay_ = Duration{0};  // nothing inferred carries over
    last_down_delay_ = Duration{0};
  }
  if (rs.round_start && measured_samples_ > 0) {
    const Duration mean = measured_sum_ / static_cast<std::int64_t>(measured_samples_);
    const Duration cap = min_rtt_.value_or(Duration{0});
    ack_path_delay_ = std::clamp(std::min(mean, last_round_delay_), Duration{0}, cap);
    last_round_delay_ = mean;
    measured_sum_ = Duration{0};
    measured_samples_ = 0;
  }
  measured_sum_ += *rs.ack_path_delay;
  ++measured_samples_;
}

// A rate sample spans one packet's round trip. Over an ACK path that
// queues, acks that waited come in a burst, and a sample whose interval is
// shorter than the round trip the ACK path gives (min_rtt + its delay)
// reads the burst, up to the sending rate: in UP 1.25 bw, which the probe
// then takes for room (the simulator's 4 / 1 line: bw 5 Mbit/s on a 4
// Mbit/s downlink, and a queue of 90 ms that the wider window let in).
bool ModelLaw::ack_compressed(const RateSample& rs) const {
  if (ack_path_delay_ <= Duration{0} || !min_rtt_) return false;
  return rs.interval < *min_rtt_ + ack_path_delay_;
}

// A peer that decimates its ACKs (tunnel/ack_tracker.h) holds up to a
// quarter RTT of packets before it acknowledges them: they have left the
// path but not our flight, and a window of BDP + target stalls until the
// ACK comes (the WAN lab's 4 / 1 line with decimation: download 86 -> 82 %).
// BBR's extra_acked covers the same by time (bytes acked in an epoch over
// bw x its length); counted per ACK here, a batch of ACK datagrams that
// we read at once (recvmmsg, GRO: 44 at a time on the data-plane bench)
// does not look like a stretch and widen the window there. The mean over a round, the
// smaller of the last two rounds' (an ACK after a silence is no stride).
void ModelLaw::measure_ack_stretch(const RateSample& rs) {
  if (rs.acked_bytes == 0) return;
  if (rs.round_start && stretch_acks_ > 0) {
    const ByteCount mean = stretch_sum_ / stretch_acks_;
    ack_stretch_bytes_ = std::min(mean, last_round_stretch_);
    last_round_stretch_ = mean;
    stretch_sum_ = 0;
    stretch_acks_ = 0;
  }
  stretch_sum_ += rs.acked_bytes;
  ++stretch_acks_;
}

// Beyond the ACK clock's two packets, which the queue target's floor
// already holds; at most a quarter of the BDP, the decimating peer's timer.
ByteCount ModelLaw::ack_stretch_allowance() const {
  const ByteCount clock = kAckClockPackets * params_.max_datagram_bytes;
  if (ack_stretch_bytes_ <= clock) return 0;
  return std::min(ack_stretch_bytes_ - clock, bdp_bytes() / 4);
}

ByteCount ModelLaw::window_bdp_bytes() const {
  const double bw = bw_bytes_per_s();
  if (bw <= 0 || !min_rtt_) return bdp_bytes();
  return bdp_bytes() + static_cast<ByteCount>(bw * to_seconds(ack_path_delay_)) + ack_stretch_allowance();
}

// Startup's plateau, when it is not ours: a window-limited sender's own
// queue is at most cwnd - bw x min_rtt, so its RTT at most cwnd / bw (bw at
// or below the link's rate). An RTT well above that is someone else's
// queue, most often the ACK path's: on the asymmetric line the upload's
// startup queue (150-170 ms on the uplink) held the download's startup at
// 2 x IW over srtt 230 ms, and startup ended on that plateau at 1.4 of
// 4 Mbit/s; with the upload's standing queue after it (40-60 ms) no UP
// recovered (download 29-33 %). Such a round does not count towards the
// plateau, for at most kStretchedRoundsMax rounds, and only while the
// model's BDP is below the initial window (the window is then what the
// first IW of deliveries gave it, ~2 x IW): a competitor's
// growing queue in the forward path looks the same, and a model that joins
// a CUBIC flow's full buffer and stays in startup took 0.22-0.29x its share
// instead of 0.82x (ScenarioModelLawCompete). Loss still ends startup.
bool ModelLaw::ack_path_stretched() {
  const double bw = bw_bytes_per_s();
  if (bw <= 0 || !srtt_ || stretched_rounds_ >= kStretchedRoundsMax) return false;
  if (bdp_bytes() >= params_.initial_cwnd_bytes) return false;
  const double own_rtt_s = static_cast<double>(cwnd_) / bw;
  if (to_seconds(*srtt_) <= kStretchedRttGain * own_rtt_s) return false;
  ++stretched_rounds_;
  return true;
}

}  // namespace egw::congestion
