// The model law's startup ends (model_law.h): on a plateau of the rate, on
// a queue of ours that lasted a round, or on loss (model_law.cc).
#include <algorithm>

#include "congestion/delivery_rate.h"
#include "congestion/model_law.h"

namespace egw::congestion {

void ModelLaw::check_full_bw(const RateSample& rs) {
  if (filled_pipe_) return;
  const double bw = bw_bytes_per_s();
  const bool grew = bw >= full_bw_ * kFullBwGrowth;
  if (rs.is_app_limited) {
    // Short of data at times (a stream's credit still growing behind the
    // window): no plateau to judge, unless our queue lasted the whole round.
    if (!grew && startup_queue_persisted() && !ack_path_stretched()) fill_pipe();
    return;
  }
  if (grew) {
    full_bw_ = bw;
    full_bw_count_ = 0;
    return;
  }
  if (ack_path_stretched()) {
    full_bw_count_ = 0;  // a plateau is judged on rounds after the stretch
    return;
  }
  if (++full_bw_count_ >= kFullBwRounds) fill_pipe();
}

void ModelLaw::fill_pipe() {
  filled_pipe_ = true;
  early_up_pending_ = true;
}

// Startup's app-limited rounds are not judged for a plateau (the sender was
// short of data), but on the lab's GEO path (10 Mbit/s, 600 ms, a one-BDP
// buffer) the late rounds were app-limited only at times, a stream's credit
// still growing behind the 2 BDP window: startup went on for 3.5 s with the
// buffer full and lost packets (the simulator: ScenarioModelStartup). A
// round in which our flight never fell below 1.75 BDP and the rate did not
// grow kept ~0.75 BDP of our own queue all along: the pipe was full all the
// same (QUIC's BBR2 max_startup_queue_rounds = 1). Not for rounds that were
// not app-limited: there the ACK path's stretch looks the same (the
// asymmetric line's download, 64 -> 31 %), and three rounds judge them.
bool ModelLaw::startup_queue_persisted() const {
  if (!have_model()) return false;
  if (round_min_flight_ == kNoFlight) return false;
  const ByteCount bdp = bdp_bytes();
  const auto target = std::max(static_cast<ByteCount>(kStartupQueueGain * static_cast<double>(bdp)),
                               bdp + 2 * params_.max_datagram_bytes);
  return round_min_flight_ >= target;
}

}  // namespace egw::congestion
