// Which ensemble a proxied connection joins. An ensemble is the set of streams
// that share a path; by default that is everything to one peer gateway. A hub
// that reaches servers over different paths (several uplinks, distant data
// centres) can split ensembles per destination prefix instead.
//
// The gateway keeps one tunnel Connection per ensemble key (each Connection
// owns one Ensemble, told apart on the wire by the receiver index), and the
// key is also the Connection's cache_key, so temporal sharing follows paths.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tunnel/frames.h"

namespace egw::tunnel {

struct EnsembleKeying {
  bool by_destination_prefix = false;
  std::uint8_t ipv4_prefix_bits = 24;  // a typical site subnet
  std::uint8_t ipv6_prefix_bits = 48;  // a typical site allocation
};

// "peer" or "peer|10.1.2.0/24" / "peer|2001:db8:1::/48" (address in hex
// groups for IPv6). Prefix lengths above the family's width are clamped.
std::string ensemble_key(std::string_view peer, const Destination& destination,
                         const EnsembleKeying& keying);

}  // namespace egw::tunnel
