#include "proxy/original_destination.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "config/net_prefix.h"

namespace egw::proxy {
namespace {

// Both families as 16 bytes, IPv4 mapped: the kernel's own form for IPv4 on
// an AF_INET6 socket, and config::Ip16's.
config::Ip16 ip16_of(const sockaddr* a) {
  config::Ip16 ip{};
  if (a->sa_family == AF_INET) {
    ip[10] = ip[11] = 0xff;
    std::memcpy(ip.data() + 12, &reinterpret_cast<const sockaddr_in*>(a)->sin_addr, 4);
  } else if (a->sa_family == AF_INET6) {
    std::memcpy(ip.data(), &reinterpret_cast<const sockaddr_in6*>(a)->sin6_addr, 16);
  }
  return ip;
}

std::uint16_t port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
}

bool is_local_address(const config::Ip16& ip) {
  if (config::is_v4_mapped(ip) && ip[12] == 127) return true;  // all of 127/8 is local
  const config::Ip16 loopback6{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  if (ip == loopback6) return true;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool found = false;
  for (const ifaddrs* i = list; i && !found; i = i->ifa_next) {
    if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6)) continue;
    found = ip16_of(i->ifa_addr) == ip;
  }
  freeifaddrs(list);
  return found;
}

void set_error(std::string* error, const char* what) {
  if (error) *error = std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

std::optional<tunnel::Destination> original_destination(int fd, std::string* error) {
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0) {
    set_error(error, "getsockname");
    return std::nullopt;
  }
  const bool v4 = local.ss_family == AF_INET || config::is_v4_mapped(ip16_of(reinterpret_cast<sockaddr*>(&local)));
  sockaddr_storage original{};
  length = sizeof original;
  if (v4 ? getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &original, &length) != 0
         : getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &original, &length) != 0) {
    set_error(error, v4 ? "SO_ORIGINAL_DST" : "IP6T_SO_ORIGINAL_DST");
    return std::nullopt;
  }
  tunnel::Destination d;
  d.port = port_of(original);
  if (original.ss_family == AF_INET) {
    std::memcpy(d.address.data(), &reinterpret_cast<const sockaddr_in&>(original).sin_addr, 4);
  } else {
    d.family = tunnel::Destination::Family::ipv6;
    std::memcpy(d.address.data(), &reinterpret_cast<const sockaddr_in6&>(original).sin6_addr, 16);
  }
  return d;
}

bool is_listener_itself(const tunnel::Destination& d, int listener_fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (getsockname(listener_fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return false;
  if (d.port != port_of(bound)) return false;
  const config::Ip16 address = ip16_of(reinterpret_cast<sockaddr*>(&bound));
  const config::Ip16 target = config::ip16_of(d);
  const config::Ip16 any4{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0};
  if (address == config::Ip16{}) return is_local_address(target);  // [::]: both families
  if (address == any4) return config::is_v4_mapped(target) && is_local_address(target);
  return address == target;
}

std::string format_destination(const tunnel::Destination& d) {
  const std::string address = config::ip16_to_string(config::ip16_of(d));
  const std::string port = std::to_string(d.port);
  return d.family == tunnel::Destination::Family::ipv4 ? address + ":" + port : "[" + address + "]:" + port;
}

}  // namespace egw::proxy
