#include "tests/scenarios/dumbbell.h"

#include "tests/sim/scenario.h"

namespace egw::scenarios {

sim::PathConfig DumbbellParams::path_config(std::size_t max_pairs, std::uint64_t seed) const {
  sim::PathConfig path;
  path.bottleneck_bits_per_second = bottleneck_bits_per_second;
  path.one_way_delay = one_way_delay;
  path.queue_limit_packets = queue_limit_packets;
  path.packet_bytes = packet_bytes;
  path.max_pairs = max_pairs;
  path.seed = seed;
  return path;
}

}  // namespace egw::scenarios
