#include "proxy/udp_stats.h"

namespace egw::proxy {

std::string udp_endpoint_text(const std::string& address, bool v6, unsigned short port) {
  return (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

}  // namespace egw::proxy
