// An endpoint as logs and `status` print it: "a.b.c.d:port" or "[v6]:port",
// a dual-stack socket's IPv4 peer (v4-mapped) as plain IPv4. TCP and UDP.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/basic_endpoint.hpp>
#include <string>

namespace egw::proxy {

std::string endpoint_text(const boost::asio::ip::address& address, unsigned short port);

template <class Protocol>
std::string endpoint_text(const boost::asio::ip::basic_endpoint<Protocol>& e) {
  return endpoint_text(e.address(), e.port());
}

}  // namespace egw::proxy
