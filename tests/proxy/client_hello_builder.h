// Building ClientHellos for tests: a handshake message with chosen
// extensions, cut into TLS records of a chosen size.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace egw::proxy::test_data {

using Bytes = std::vector<std::byte>;

inline void put(Bytes& out, std::uint64_t value, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<std::byte>(value >> (8 * i)));
}
inline void put(Bytes& out, const Bytes& more) { out.insert(out.end(), more.begin(), more.end()); }
inline void put(Bytes& out, const std::string& text) {
  for (const char c : text) out.push_back(static_cast<std::byte>(c));
}

inline Bytes extension(std::uint16_t type, const Bytes& body) {
  Bytes e;
  put(e, type, 2);
  put(e, body.size(), 2);
  put(e, body);
  return e;
}

// server_name (RFC 6066 3) with one name of `name_type` (0: host_name).
inline Bytes sni_extension(const std::string& host, std::uint8_t name_type = 0) {
  Bytes list;
  put(list, name_type, 1);
  put(list, host.size(), 2);
  put(list, host);
  Bytes body;
  put(body, list.size(), 2);
  put(body, list);
  return extension(0, body);
}

// The handshake message (type 1, u24 length) of a TLS 1.3-style ClientHello.
inline Bytes client_hello(const std::vector<Bytes>& extensions, bool with_extensions_block = true) {
  Bytes body;
  put(body, 0x0303, 2);
  put(body, Bytes(32, std::byte{0x5a}));  // random
  put(body, 32, 1);
  put(body, Bytes(32, std::byte{0x11}));  // legacy_session_id
  put(body, 4, 2);
  put(body, 0x13011302, 4);  // two cipher suites
  put(body, 1, 1);
  put(body, 0, 1);  // null compression
  if (with_extensions_block) {
    Bytes all;
    for (const auto& e : extensions) put(all, e);
    put(body, all.size(), 2);
    put(body, all);
  }
  Bytes message;
  put(message, 1, 1);
  put(message, body.size(), 3);
  put(message, body);
  return message;
}

// The handshake bytes in records of at most `fragment` bytes each.
inline Bytes records(const Bytes& handshake, std::size_t fragment = 16384) {
  Bytes out;
  for (std::size_t at = 0; at < handshake.size(); at += fragment) {
    const std::size_t n = std::min(fragment, handshake.size() - at);
    put(out, 0x160301, 3);
    put(out, n, 2);
    out.insert(out.end(), handshake.begin() + static_cast<std::ptrdiff_t>(at),
               handshake.begin() + static_cast<std::ptrdiff_t>(at + n));
  }
  return out;
}

inline Bytes client_hello_records(const std::string& host) { return records(client_hello({sni_extension(host)})); }

}  // namespace egw::proxy::test_data
