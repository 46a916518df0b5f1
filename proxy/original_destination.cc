// PLACEHOLDER until the nft branch lands.
#include "proxy/original_destination.h"
#include <cstring>
#include <netinet/in.h>
#include <linux/netfilter_ipv4.h>
#include <sys/socket.h>
namespace egw::proxy {
std::optional<tunnel::Destination> original_destination(int fd, std::string* error) {
  sockaddr_in in{};
  socklen_t len = sizeof in;
  if (getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &in, &len) != 0) {
    if (error) *error = std::strerror(errno);
    return std::nullopt;
  }
  tunnel::Destination d;
  std::memcpy(d.address.data(), &in.sin_addr, 4);
  d.port = ntohs(in.sin_port);
  return d;
}
bool is_listener_itself(const tunnel::Destination&, int) { return false; }
}  // namespace egw::proxy
