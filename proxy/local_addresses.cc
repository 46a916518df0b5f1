#include "proxy/local_addresses.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace egw::proxy {

LocalAddresses::LocalAddresses() {
  // Subscribe before the first read: a change between the two is then seen.
  netlink_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (netlink_ >= 0) {
    sockaddr_nl local{};
    local.nl_family = AF_NETLINK;
    local.nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR;
    if (::bind(netlink_, reinterpret_cast<const sockaddr*>(&local), sizeof local) != 0) {
      ::close(netlink_);
      netlink_ = -1;
    }
  }
  if (netlink_ < 0) {
    spdlog::warn("no netlink address events ({}): the hub re-reads its addresses for every new stream",
                 std::strerror(errno));
  }
  host_ = std::make_shared<HostAddresses>(read_host_addresses());
}

LocalAddresses::~LocalAddresses() {
  if (netlink_ >= 0) ::close(netlink_);
}

bool LocalAddresses::changes_pending() {
  if (netlink_ < 0) return true;
  bool pending = false;
  std::array<char, 8192> buffer;
  for (;;) {
    const ssize_t n = ::recv(netlink_, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n > 0) {
      pending = true;  // any address event: the content does not matter, we re-read everything
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOBUFS) {  // events were lost: assume a change
      pending = true;
      continue;
    }
    return pending;  // EAGAIN: drained
  }
}

bool LocalAddresses::refresh() {
  if (!changes_pending()) return false;
  HostAddresses now;
  try {
    now = read_host_addresses();
  } catch (const std::system_error& e) {
    // Keep what we knew (and try again next time): refusing on stale
    // addresses beats not refusing at all.
    spdlog::warn("re-reading the hub's addresses: {}", e.what());
    if (netlink_ >= 0) {  // make the next check try again
      ::close(netlink_);
      netlink_ = -1;
    }
    return false;
  }
  ++rereads_;
  if (now == *host_) return false;
  spdlog::info("the hub's own addresses changed: now {} addresses, {} on-link IPv6 prefixes", now.addresses.size(),
               now.on_link.size());
  *host_ = std::move(now);
  return true;
}

}  // namespace egw::proxy
