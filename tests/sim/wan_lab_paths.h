// The WAN lab's links (bench/lab/experiments.py) as simulator paths, so a
// simulator test and the lab figure it explains describe the same link.
#pragma once

#include <cstdint>

#include "tests/sim/scenario.h"

namespace egw::sim {

// full-links-lossy: 20 Mbit/s each way, 30 ms one way, 600-packet drop-tail
// buffers, 0.2 % random loss each way; one pair.
inline PathConfig lossy_full_link(std::uint64_t seed) {
  PathConfig path;
  path.bottleneck_bits_per_second = 20'000'000;
  path.reverse_bits_per_second = 20'000'000;
  path.one_way_delay = ms(30);
  path.queue_limit_packets = 600;
  path.loss_probability = 0.002;
  path.seed = seed;
  path.max_pairs = 1;
  return path;
}

// bulk-shallow-loss*: the same link with 25-packet buffers (~1/4 BDP) and
// `loss` random loss each way.
inline PathConfig shallow_lossy_link(std::uint64_t seed, double loss) {
  PathConfig path = lossy_full_link(seed);
  path.queue_limit_packets = 25;
  path.loss_probability = loss;
  return path;
}

}  // namespace egw::sim
