// The model law across an idle period (model_law.h, "Idle"): the law
// keeps its window while the sender has nothing to send, so the domain's
// restart and careful resume see the window the path last carried (as a
// loss-based law's cwnd, which nothing moves while idle); a restart goes back
// to startup without the old rate.
#include "congestion/model_law.h"

namespace egw::congestion {

// The domain restarts the window next: set_state with the restart window
// (RFC 5681 4.1, RFC 7661: at least the initial window), or a careful
// resume from the window saved before the idle (reconnaissance at the
// initial window, the RTT check, half the saved window paced and marked,
// fallback on a loss). The law keeps no licence of its own beyond that:
// the old rate goes (paced at it, or as startup's plateau, an estimate of a
// path that changed meanwhile would overrun the new one before any check),
// startup measures afresh from the window the domain grants and paces at
// no less than 2.77 x the initial window over min_rtt, as slow start would
// send it. min_rtt stays (a lower bound).
// Competing, the other flows' evidence is as old as the idle: the model
// looks again. Without this the window stayed at the model's target, which
// the keep-alive PINGs' app-limited samples had decayed to 4 packets after
// an hour (below the initial window): the second 10 MB took 10.0 s against
// NewReno's 8.8 s (ScenarioIdleRestart).
void ModelLaw::on_idle_restart() {
  state_ = State::startup;
  phase_ = Phase::cruise;
  bw_hi_ = {};
  full_bw_ = 0;
  full_bw_count_ = 0;
  stretched_rounds_ = 0;
  filled_pipe_ = false;
  startup_delivered_ = 0;
  early_up_pending_ = false;
  up_start_bw_ = 0;
  inflight_hi_ = kInfiniteSsthresh;
  inflight_hi_growth_ = 0;
  round_loss_ = RoundLoss{};
  past_loss_.fill(RoundLoss{});
  loss_response_round_ = ~std::uint64_t{0};
  probe_rtt_done_.reset();
  probe_rtt_min_.reset();
  ack_path_delay_ = Duration{0};
  measured_sum_ = Duration{0};
  measured_samples_ = 0;
  last_round_delay_ = Duration{0};
  competitive_ = false;
  cycle_busy_ = false;
}

}  // namespace egw::congestion
