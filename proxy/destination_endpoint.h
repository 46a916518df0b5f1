// A tunnel Destination (STREAM_OPEN's, FLOW_OPEN's) as an Asio endpoint of
// either protocol: the hub connects TCP streams and UDP flows to it.
#pragma once

#include <utility>  // before Boost 1.74 asio (see tunnel_socket.h)
#include <boost/asio.hpp>

#include <algorithm>

#include "tunnel/frames.h"

namespace egw::proxy {

template <class Protocol>
typename Protocol::endpoint endpoint_of(const tunnel::Destination& d) {
  if (d.family == tunnel::Destination::Family::ipv4) {
    boost::asio::ip::address_v4::bytes_type b;
    std::copy_n(d.address.begin(), b.size(), b.begin());
    return {boost::asio::ip::address_v4(b), d.port};
  }
  boost::asio::ip::address_v6::bytes_type b;
  std::copy_n(d.address.begin(), b.size(), b.begin());
  return {boost::asio::ip::address_v6(b), d.port};
}

}  // namespace egw::proxy
