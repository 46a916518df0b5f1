// The hub's own addresses as they are now, not as they were at start: an
// address added later (`ip addr add`, DHCP, a new interface) must be refused
// from the first connection after it exists.
//
// A NETLINK_ROUTE socket subscribed to address events (RTMGRP_IPV4_IFADDR,
// RTMGRP_IPV6_IFADDR) tells us something changed; the kernel queues that
// message before `ip addr add` returns. Each check first drains the socket
// without blocking (one recv, EAGAIN when nothing changed, ~1 us) and only
// then re-reads the addresses (getifaddrs, a netlink dump). So there is no
// window in which a new address is unknown: no race with the I/O loop
// reading the event later. If the socket overflows (ENOBUFS) or cannot be
// opened at all, the addresses are re-read on every check instead.
#pragma once

#include <memory>

#include "proxy/destination_policy.h"

namespace egw::proxy {

class LocalAddresses {
 public:
  // Reads the addresses once; throws std::system_error if it cannot.
  LocalAddresses();
  ~LocalAddresses();
  LocalAddresses(const LocalAddresses&) = delete;
  LocalAddresses& operator=(const LocalAddresses&) = delete;

  // Re-reads the addresses if the kernel announced a change since the last
  // call. The view() object is updated in place. Returns true if it changed.
  bool refresh();
  // What DestinationPolicy reads: always the same object.
  std::shared_ptr<const HostAddresses> view() const { return host_; }
  std::uint64_t rereads() const { return rereads_; }

 private:
  bool changes_pending();

  std::shared_ptr<HostAddresses> host_;
  int netlink_ = -1;  // -1: no event socket, re-read on every refresh()
  std::uint64_t rereads_ = 0;
};

}  // namespace egw::proxy
