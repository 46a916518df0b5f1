// UdpBranch: the branch's end of the LAN's UDP flows. The nftables table
// (proxy/nft_table.h) sends the selected UDP (udp.ports) from the LAN to
// one transparent socket with TPROXY and a policy route (fwmark -> a
// table whose default route is local), so the datagrams keep their
// original destination, which IP_RECVORIGDSTADDR tells us. Each (client,
// destination) pair becomes a tunnel flow (open_flow, the class from the
// flow classifier on its first datagram, proxy/flow_classifier.h; udp.class
// without one); datagrams ride it as DATAGRAM frames. Replies leave from the
// original destination's address and port (a transparent socket bound to
// it, IP_TRANSPARENT), so the client sees the server answer.
//
// Bounds: udp.flows_per_client per LAN client address (a flood from one
// host cannot take the table from the others) and udp.flows_per_peer in
// all; beyond them a new flow's datagrams are dropped and counted. A flow
// idle (no datagram either way) past udp.idle_timeout_s (port 53:
// dns_idle_timeout_s) is closed, as a NAT entry would expire.
#pragma once

#include <utility>  // before Boost 1.74 asio (see tunnel_socket.h)
#include <boost/asio.hpp>

#include <functional>
#include <map>
#include <memory>
#include <unordered_map>

#include "config/udp_config.h"
#include "proxy/relay.h"
#include "proxy/udp_stats.h"
#include "tunnel/connection.h"

namespace egw::proxy {

class UdpBranch {
 public:
  // Carries the flows over tunnel session `peer`.
  UdpBranch(boost::asio::io_context& io, const config::UdpConfig& config, RelayOwner& owner, std::size_t peer);
  ~UdpBranch();
  UdpBranch(const UdpBranch&) = delete;
  UdpBranch& operator=(const UdpBranch&) = delete;

  // Binds the transparent socket (needs CAP_NET_ADMIN). Throws
  // std::runtime_error with a one-line reason.
  void start();
  boost::asio::ip::udp::endpoint local_endpoint() const;

  // The class of a new flow from its destination and first datagram.
  using FlowClassifier = std::function<ContentClass(const tunnel::Destination&, std::span<const std::byte>)>;
  void set_classifier(FlowClassifier classify) { classify_ = std::move(classify); }

  void on_datagram(const tunnel::DatagramReceived& e);
  void on_flow_closed(const tunnel::FlowClosed& e);
  void on_connection_closed();
  void sweep(Instant now);
  UdpStats stats() const;
  // The open flows (at most `max`, the rest counted in *omitted).
  void list_flows(Instant now, std::size_t max, std::vector<UdpFlowListing>& out, std::uint64_t* omitted) const;

 private:
  struct Flow;
  using Tuple = std::pair<boost::asio::ip::udp::endpoint, boost::asio::ip::udp::endpoint>;  // client, destination
  void receive_next();
  void on_readable();
  void on_lan_datagram(const boost::asio::ip::udp::endpoint& client, const boost::asio::ip::udp::endpoint& to,
                       std::span<const std::byte> payload);
  std::shared_ptr<Flow> open(const boost::asio::ip::udp::endpoint& client, const boost::asio::ip::udp::endpoint& to,
                             std::span<const std::byte> first_datagram);
  void close(tunnel::FlowId id, const std::string& reason, bool tell_peer);

  boost::asio::io_context& io_;
  config::UdpConfig config_;
  RelayOwner& owner_;
  std::size_t peer_;
  boost::asio::ip::udp::socket socket_;
  std::map<Tuple, std::shared_ptr<Flow>> by_tuple_;
  std::unordered_map<tunnel::FlowId, std::shared_ptr<Flow>> by_id_;
  std::map<boost::asio::ip::address, std::uint32_t> per_client_;
  UdpStats stats_;
  FlowClassifier classify_;
};

}  // namespace egw::proxy
