// Test helper: a cached PathState of a 100 ms path with 1200-byte datagrams.
#pragma once

#include "congestion/path_state.h"

namespace egw::congestion::testing {

inline PathState path_state(ByteCount cwnd_bytes, ByteCount ssthresh_bytes) {
  PathState s;
  s.cwnd_bytes = cwnd_bytes;
  s.ssthresh_bytes = ssthresh_bytes;
  s.srtt = ms(100);
  s.rttvar = ms(10);
  s.min_rtt = ms(90);
  s.max_datagram_bytes = 1200;
  return s;
}

}  // namespace egw::congestion::testing
