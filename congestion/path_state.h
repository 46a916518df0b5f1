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

}  // namespace egw::congestion
