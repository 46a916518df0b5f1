// What an ensemble knows about its path, in one value: what the temporal
// cache keeps between ensembles and what a new ensemble may resume from.
#pragma once

#include "common/units.h"

namespace egw::congestion {

struct PathState {
  ByteCount cwnd_bytes = 0;
  ByteCount ssthresh_bytes = 0;
  Duration srtt{0};
  Duration rttvar{0};
  Duration min_rtt{0};
  ByteCount max_datagram_bytes = 0;
  Instant saved_at{};
};

// What an ensemble measured when it ends, with how far to trust each part
// (TemporalCache::learn blends it into what the cache knew, like Linux
// tcp_update_metrics).
struct PathObservation {
  PathState state;
  // The initial slow start never ended (no loss, ssthresh unset): the window
  // is a lower bound of the path's, not a measurement.
  bool in_initial_slow_start = false;
  // Ended in loss recovery or with an unvalidated (careful-resume) window:
  // cwnd says nothing reliable.
  bool window_unreliable = false;
  // The retransmission timer was backed off (RTO with no ack since): the
  // RTT estimate failed, and the whole path is in doubt.
  bool backed_off = false;
};

}  // namespace egw::congestion
