// HyStart++ (RFC 9406): leave slow start when the RTT starts to grow, before
// the window overshoots the path and a drop-tail queue drops a burst.
//
// Model (RFC 9406 4.2), per congestion domain, in rounds of about one RTT:
//  - a round starts when the previous one ends; the first packet sent after
//    that is its "windowEnd", and the round ends when an ACK covers it (as
//    in Linux's HyStart, that ACK's RTT sample is the next round's first);
//  - at a round's start: lastRoundMinRTT = currentRoundMinRTT,
//    currentRoundMinRTT = infinity, rttSampleCount = 0;
//  - every ACK with an RTT sample: currentRoundMinRTT = min(.., sample),
//    rttSampleCount += 1;
//  - slow start: cwnd += min(N, L * SMSS) per ACK. Once rttSampleCount >=
//    N_RTT_SAMPLE (8) and both minima are known:
//      RttThresh = clamp(lastRoundMinRTT / MIN_RTT_DIVISOR (8), 4 ms, 16 ms)
//      currentRoundMinRTT >= lastRoundMinRTT + RttThresh  ->  CSS,
//        cssBaselineMinRtt = currentRoundMinRTT;
//  - Conservative Slow Start (CSS): cwnd += min(N, L * SMSS) / 4 per ACK;
//    once rttSampleCount >= 8 and currentRoundMinRTT < cssBaselineMinRtt the
//    exit was spurious: back to slow start. After CSS_ROUNDS (5) round ends
//    in CSS (the round CSS began in counts): congestion avoidance with
//    ssthresh = cwnd (phase `done`, the caller sets ssthresh);
//  - loss or RTO in slow start or CSS: congestion avoidance as usual
//    (on_congestion, phase `done`).
// L = infinity for a paced sender, 8 otherwise (4.2): an ACK that covers a
// large hole may not turn into a burst of more than 8 segments.
// Only the initial slow start uses HyStart++ (4.3: later slow starts stop at
// the ssthresh a loss found); the caller stops calling once ssthresh is set.
//
// This class only does the arithmetic above; it does not own cwnd. The caller
// passes each ACK's growable bytes through on_ack and adds what comes back.
#pragma once

#include <cstdint>
#include <optional>

#include "common/units.h"

namespace egw::congestion {

class HyStart {
 public:
  // RFC 9406 4.3 recommended constants.
  static constexpr std::uint32_t kRttSamples = 8;  // N_RTT_SAMPLE
  static constexpr Duration kMinRttThresh = ms(4);
  static constexpr Duration kMaxRttThresh = ms(16);
  static constexpr std::int64_t kMinRttDivisor = 8;
  static constexpr ByteCount kCssGrowthDivisor = 4;
  static constexpr std::uint32_t kCssRounds = 5;
  static constexpr ByteCount kUnpacedLimitSegments = 8;  // L without pacing

  enum class Phase { slow_start, css, done };

  // `paced`: the sender paces its slow start (L = infinity), else L = 8.
  explicit HyStart(bool paced);

  Phase phase() const { return phase_; }
  // A packet left (any ack-eliciting packet of the domain, in send order).
  void on_packet_sent(PacketNumber number);
  // One ACK in slow start or CSS: `growable_bytes` newly acknowledged bytes
  // (N), `largest_acked` the largest packet number it newly acknowledged,
  // `rtt_sample` its RTT sample (RFC 9002 5.1), if it gave one. Returns the
  // bytes to add to cwnd. May move to CSS, back to slow start, or to `done`
  // (the caller then sets ssthresh = cwnd).
  ByteCount on_ack(ByteCount growable_bytes, PacketNumber largest_acked,
                   std::optional<Duration> rtt_sample, ByteCount mss_bytes);
  // Loss or RTO: the window law takes over (ordinary congestion avoidance).
  void on_congestion() { phase_ = Phase::done; }

  // Diagnostics for tests.
  std::uint32_t rounds_ended() const { return rounds_ended_; }
  std::uint32_t css_rounds() const { return css_rounds_; }
  std::optional<Duration> last_round_min_rtt() const { return last_round_min_rtt_; }
  std::optional<Duration> current_round_min_rtt() const { return current_round_min_rtt_; }
  // RttThresh for the current lastRoundMinRTT (zero while it is unknown).
  Duration rtt_thresh() const;

 private:
  void start_round();

  ByteCount limit_segments_;  // L; 0 = infinity
  Phase phase_ = Phase::slow_start;
  std::optional<PacketNumber> window_end_;  // nullopt: the next packet sent sets it
  std::optional<Duration> last_round_min_rtt_;     // nullopt = infinity
  std::optional<Duration> current_round_min_rtt_;  // nullopt = infinity
  std::uint32_t rtt_sample_count_ = 0;
  std::optional<Duration> css_baseline_min_rtt_;
  std::uint32_t css_rounds_ = 0;
  std::uint32_t rounds_ended_ = 0;
};

}  // namespace egw::congestion
