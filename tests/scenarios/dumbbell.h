// The bottleneck of the simulator's dumbbell (tests/sim/scenario.h) as the
// experiments' parameters give it: one struct embedded in their params, so
// each experiment states only its own values and builds its PathConfig the
// same way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/units.h"

namespace egw::sim {
struct PathConfig;
}

namespace egw::scenarios {

struct DumbbellParams {
  std::uint64_t bottleneck_bits_per_second = 10'000'000;
  Duration one_way_delay = ms(50);
  std::size_t queue_limit_packets = 0;  // 0 = unlimited
  ByteCount packet_bytes = 1200;        // the tunnel's datagram (the "MSS" unit)

  // These four; everything else (overheads, loss, jitter) PathConfig's defaults.
  sim::PathConfig path_config(std::size_t max_pairs = 1, std::uint64_t seed = 1) const;
};

}  // namespace egw::scenarios
