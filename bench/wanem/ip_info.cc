#include "bench/wanem/ip_info.h"

namespace egw::wanem {

IpInfo parse_ip(std::span<const std::uint8_t> p) {
  IpInfo info;
  std::size_t l4 = 0;
  if (p.size() >= 20 && p[0] >> 4 == 4) {
    info.version = 4;
    info.dscp = p[1] >> 2;
    info.protocol = p[9];
    l4 = std::size_t{p[0] & 0x0fu} * 4;
    const bool first_fragment = ((p[6] & 0x1f) | p[7]) == 0;  // ports only in offset 0
    if (!first_fragment) return info;
  } else if (p.size() >= 40 && p[0] >> 4 == 6) {
    info.version = 6;
    info.dscp = static_cast<std::uint8_t>(((p[0] & 0x0f) << 4 | p[1] >> 4) >> 2);
    info.protocol = p[6];
    l4 = 40;
  } else {
    return info;
  }
  if ((info.protocol == 6 || info.protocol == 17) && l4 >= 20 && p.size() >= l4 + 4) {
    info.has_ports = true;
    info.src_port = static_cast<std::uint16_t>(p[l4] << 8 | p[l4 + 1]);
    info.dst_port = static_cast<std::uint16_t>(p[l4 + 2] << 8 | p[l4 + 3]);
  }
  return info;
}

}  // namespace egw::wanem
