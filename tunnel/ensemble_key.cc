#include "tunnel/ensemble_key.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace egw::tunnel {
namespace {

// The address with every bit past `bits` cleared.
std::array<std::uint8_t, 16> masked(const std::array<std::uint8_t, 16>& address,
                                    std::size_t width_bytes, unsigned bits) {
  std::array<std::uint8_t, 16> out{};
  for (std::size_t i = 0; i < width_bytes; ++i) {
    const unsigned first_bit = static_cast<unsigned>(i) * 8;
    if (bits >= first_bit + 8) {
      out[i] = address[i];
    } else if (bits > first_bit) {
      out[i] = static_cast<std::uint8_t>(address[i] & (0xFFu << (8 - (bits - first_bit))));
    }
  }
  return out;
}

}  // namespace

std::string ensemble_key(std::string_view peer, const Destination& destination,
                         const EnsembleKeying& keying) {
  std::string key(peer);
  if (!keying.by_destination_prefix) return key;
  char text[64];
  if (destination.family == Destination::Family::ipv4) {
    const unsigned bits = std::min<unsigned>(keying.ipv4_prefix_bits, 32);
    const auto a = masked(destination.address, 4, bits);
    std::snprintf(text, sizeof text, "|%u.%u.%u.%u/%u", a[0], a[1], a[2], a[3], bits);
  } else {
    const unsigned bits = std::min<unsigned>(keying.ipv6_prefix_bits, 128);
    const auto a = masked(destination.address, 16, bits);
    int n = std::snprintf(text, sizeof text, "|");
    for (std::size_t i = 0; i < 16; i += 2) {
      n += std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "%x%s",
                         (a[i] << 8) | a[i + 1], i + 2 < 16 ? ":" : "");
    }
    std::snprintf(text + n, sizeof text - static_cast<std::size_t>(n), "/%u", bits);
  }
  key += text;
  return key;
}

}  // namespace egw::tunnel
