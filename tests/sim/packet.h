// What the simulated network carries: a UDP datagram between two hosts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/units.h"

namespace egw::sim {

// A host's address in the simulated network (see network.h for the scheme).
using Address = std::uint32_t;

struct Packet {
  Address src = 0;
  Address dst = 0;
  std::vector<std::byte> payload;  // the UDP payload: a tunnel datagram
  // DSCP LE (RFC 8622): routers with priority drop discard these first.
  bool low_priority = false;

  ByteCount payload_bytes() const { return payload.size(); }
};

}  // namespace egw::sim
