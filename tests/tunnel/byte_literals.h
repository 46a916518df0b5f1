// Test helper: a byte vector from integer literals, e.g. bytes({0x40, 0x25}).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <vector>

namespace egw::tunnel {

inline std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

}  // namespace egw::tunnel
