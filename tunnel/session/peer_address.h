// A UDP address as the sans-IO core sees it: IPv6 bytes (IPv4 as
// ::ffff:a.b.c.d) and a port. Drivers convert to and from sockaddr; the core
// only compares, hashes and MACs it (cookies are bound to it).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace egw::tunnel::session {

struct PeerAddress {
  std::array<std::uint8_t, 16> ip{};
  std::uint16_t port = 0;

  static PeerAddress v4(std::uint32_t host_order_ip, std::uint16_t port) {
    PeerAddress a;
    a.ip[10] = a.ip[11] = 0xff;
    for (int i = 0; i < 4; ++i) a.ip[12 + i] = static_cast<std::uint8_t>(host_order_ip >> (24 - 8 * i));
    a.port = port;
    return a;
  }
  bool is_v4() const {
    for (int i = 0; i < 10; ++i) if (ip[i] != 0) return false;
    return ip[10] == 0xff && ip[11] == 0xff;
  }
  // The 18 bytes a cookie is bound to: ip then port (big-endian).
  std::array<std::uint8_t, 18> bytes() const {
    std::array<std::uint8_t, 18> b{};
    for (int i = 0; i < 16; ++i) b[i] = ip[i];
    b[16] = static_cast<std::uint8_t>(port >> 8);
    b[17] = static_cast<std::uint8_t>(port);
    return b;
  }
  std::string to_string() const;
  bool operator==(const PeerAddress&) const = default;
};

struct PeerAddressHash {
  std::size_t operator()(const PeerAddress& a) const {
    std::size_t h = a.port;
    for (auto b : a.ip) h = h * 131 + b;
    return h;
  }
};

}  // namespace egw::tunnel::session
