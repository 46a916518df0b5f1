#include "tunnel/session/peer_address.h"

#include <arpa/inet.h>

namespace egw::tunnel::session {

std::string PeerAddress::to_string() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (is_v4()) {
    inet_ntop(AF_INET, ip.data() + 12, text, sizeof text);
    return std::string(text) + ":" + std::to_string(port);
  }
  inet_ntop(AF_INET6, ip.data(), text, sizeof text);
  return "[" + std::string(text) + "]:" + std::to_string(port);
}

}  // namespace egw::tunnel::session
