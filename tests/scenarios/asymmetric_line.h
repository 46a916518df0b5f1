// The WAN lab's asymmetric line in the simulator (full-links-asym,
// asym-direct-upload): 1 Mbit/s up (the simulator's forward direction,
// branch -> hub), 4 Mbit/s down, 30 ms one way, 100-packet buffers,
// full-size datagrams. Shared by the scenarios that run on it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tests/sim/scenario.h"

namespace egw::scenarios {

inline sim::PathConfig asymmetric_line(double loss, std::uint64_t seed, std::size_t pairs) {
  sim::PathConfig path;
  path.bottleneck_bits_per_second = 1'000'000;  // forward: branch -> hub, the uplink
  path.reverse_bits_per_second = 4'000'000;     // reverse: hub -> branch, the downlink
  path.one_way_delay = ms(30);
  path.queue_limit_packets = 100;
  path.loss_probability = loss;
  path.packet_bytes = 1472;
  path.max_pairs = pairs;
  path.seed = seed;
  return path;
}

// Receive windows no transfer here reaches (16 MiB): the law alone sets the rate.
inline void wide_receive_windows(tunnel::ConnectionConfig& c) {
  c.stream_receive_window_bytes = 16 << 20;
  c.connection_receive_window_bytes = 16 << 20;
}

}  // namespace egw::scenarios
