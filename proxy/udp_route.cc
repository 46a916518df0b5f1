#include "proxy/udp_route.h"

#include <linux/fib_rules.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace egw::proxy {
namespace {

struct Request {
  nlmsghdr header;
  union {
    fib_rule_hdr rule;
    rtmsg route;
  };
  char attributes[64];
};

void add_u32(Request& r, std::uint16_t type, std::uint32_t value) {
  auto* a = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(&r) + NLMSG_ALIGN(r.header.nlmsg_len));
  a->rta_type = type;
  a->rta_len = RTA_LENGTH(sizeof value);
  std::memcpy(RTA_DATA(a), &value, sizeof value);
  r.header.nlmsg_len = NLMSG_ALIGN(r.header.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

// Sends one request and waits for its ACK: 0 or the kernel's errno.
int transact(Request& r) {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return errno;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  int result = 0;
  if (::sendto(fd, &r, r.header.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    result = errno;
  } else {
    alignas(nlmsghdr) char reply[1024];
    const ssize_t n = ::recv(fd, reply, sizeof reply, 0);
    const auto* h = reinterpret_cast<const nlmsghdr*>(reply);
    if (n < 0) {
      result = errno;
    } else if (NLMSG_OK(h, static_cast<unsigned>(n)) && h->nlmsg_type == NLMSG_ERROR) {
      result = -static_cast<const nlmsgerr*>(NLMSG_DATA(h))->error;
    }
  }
  ::close(fd);
  return result;
}

Request rule_request(std::uint16_t type, std::uint16_t flags) {
  Request r{};
  r.header.nlmsg_len = NLMSG_LENGTH(sizeof(fib_rule_hdr));
  r.header.nlmsg_type = type;
  r.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
  r.rule.family = AF_INET;
  r.rule.action = FR_ACT_TO_TBL;
  add_u32(r, FRA_FWMARK, kUdpFwmark);
  add_u32(r, FRA_TABLE, kUdpRouteTable);
  add_u32(r, FRA_PRIORITY, kUdpRulePriority);
  return r;
}

Request route_request(std::uint16_t type, std::uint16_t flags) {
  Request r{};
  r.header.nlmsg_len = NLMSG_LENGTH(sizeof(rtmsg));
  r.header.nlmsg_type = type;
  r.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
  r.route.rtm_family = AF_INET;
  r.route.rtm_table = RT_TABLE_UNSPEC;
  r.route.rtm_protocol = RTPROT_BOOT;
  r.route.rtm_scope = RT_SCOPE_HOST;
  r.route.rtm_type = RTN_LOCAL;
  add_u32(r, RTA_TABLE, kUdpRouteTable);
  add_u32(r, RTA_OIF, ::if_nametoindex("lo"));
  return r;
}

std::string failure(const char* what, int error) {
  return std::string("UDP policy route: ") + what + ": " + std::strerror(error) +
         (error == EPERM ? " (need CAP_NET_ADMIN)" : "");
}

}  // namespace

std::optional<std::string> install_udp_route() {
  Request route = route_request(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE);
  if (const int e = transact(route)) return failure("route local 0.0.0.0/0 dev lo", e);
  Request rule = rule_request(RTM_NEWRULE, NLM_F_CREATE | NLM_F_EXCL);
  if (const int e = transact(rule); e != 0 && e != EEXIST) return failure("rule fwmark", e);
  return std::nullopt;
}

std::optional<std::string> remove_udp_route() {
  Request rule = rule_request(RTM_DELRULE, 0);
  if (const int e = transact(rule); e != 0 && e != ENOENT) return failure("delete rule fwmark", e);
  Request route = route_request(RTM_DELROUTE, 0);
  if (const int e = transact(route); e != 0 && e != ESRCH && e != ENOENT) return failure("delete route", e);
  return std::nullopt;
}

}  // namespace egw::proxy
