// The tunnel part of the gateway's YAML config: identity, listen address and
// peers. (The gateway issue adds interception, classes and limits.)
//
//   role: branch | hub
//   private_key_file: /etc/ensemble-gw/private.key   # wg genkey > private.key
//   listen: 0.0.0.0:51900          # hub: required; branch: optional (any port)
//   max_datagram_bytes: 1472       # optional: UDP payload we accept and probe up to
//                                  # (DPLPMTUD from 1200; 1200..2000, default 1472)
//   cipher: auto                   # optional: data AEAD (auto | chacha20-poly1305 | aes-256-gcm)
//   peers:
//     - name: hub                  # optional, for logs
//       public_key: <wg pubkey output>
//       endpoint: 203.0.113.7:51900  # branch: required; hub: not used
//       preshared_key_file: /etc/ensemble-gw/hub.psk   # optional (wg genpsk)
//
// Errors name the file, the line and the key; unknown keys are errors.
#pragma once

#include <utility>  // before Boost 1.74 asio (see tunnel_socket.h)
#include <boost/asio/ip/udp.hpp>

#include <string>
#include <variant>

#include "tunnel/session/endpoint.h"

namespace egw::proxy {

struct TunnelConfig {
  bool is_hub = false;
  boost::asio::ip::udp::endpoint listen;
  tunnel::session::EndpointConfig endpoint;
};

// The config, or an error "FILE:LINE: KEY: what is wrong".
std::variant<TunnelConfig, std::string> load_tunnel_config(const std::string& path);

// "host:port" or "[v6]:port".
std::variant<boost::asio::ip::udp::endpoint, std::string> parse_udp_endpoint(const std::string& text);

}  // namespace egw::proxy
