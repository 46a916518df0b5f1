// UdpHub: the hub's end of the branch's UDP flows. Each flow a peer opens
// (FLOW_OPEN) is re-originated from a UDP socket of its own, connected to
// the destination, once the peer's allow list allowed it: the hub is no
// open proxy for UDP either (a refused flow is closed at once with
// kErrorDestinationRefused). Datagrams from the peer go out on that socket;
// what the server answers comes back as datagrams on the flow. Like a NAT
// entry, a flow without a datagram either way for idle_timeout_s
// (dns_idle_timeout_s for port 53) is closed, and a peer has at most
// flows_per_peer flows (the tunnel refuses more before they get here).
//
// One connected socket per flow, not one shared socket: the kernel then
// filters what comes back to the 4-tuple (nothing but the server reaches
// the flow), ICMP errors reach the right flow, and each flow has its own
// source port, as NAT gives it.
#pragma once

#include <utility>  // before Boost 1.74 asio (see tunnel_socket.h)
#include <boost/asio.hpp>

#include <map>
#include <memory>
#include <vector>

#include "config/udp_config.h"
#include "proxy/destination_policy.h"
#include "proxy/relay.h"
#include "proxy/udp_stats.h"
#include "tunnel/connection.h"

namespace egw::proxy {

class UdpHub {
 public:
  UdpHub(boost::asio::io_context& io, const config::UdpConfig& config, RelayOwner& owner);
  ~UdpHub();
  UdpHub(const UdpHub&) = delete;
  UdpHub& operator=(const UdpHub&) = delete;

  // A peer opened a flow; `refusal` is its allow list's verdict.
  void on_flow_opened(std::size_t peer, const tunnel::FlowOpened& e, Refusal refusal);
  void on_datagram(std::size_t peer, const tunnel::DatagramReceived& e);
  void on_flow_closed(std::size_t peer, const tunnel::FlowClosed& e);
  // The peer's tunnel connection ended: every flow of it goes.
  void on_connection_closed(std::size_t peer);
  // Idle timeouts (once a second).
  void sweep(Instant now);
  UdpStats stats() const;
  // The open flows (at most `max` listed in all, the rest counted in *omitted).
  void list_flows(Instant now, std::size_t max, std::vector<UdpFlowListing>& out, std::uint64_t* omitted) const;

 private:
  struct Flow;
  using Key = std::pair<std::size_t, tunnel::FlowId>;
  void receive_next(const std::shared_ptr<Flow>& flow);
  void on_readable(const std::shared_ptr<Flow>& flow);
  void close(const Key& key, const std::string& reason, bool tell_peer);

  boost::asio::io_context& io_;
  config::UdpConfig config_;
  RelayOwner& owner_;
  std::map<Key, std::shared_ptr<Flow>> flows_;
  std::map<std::size_t, std::size_t> per_peer_;
  UdpStats stats_;
};

}  // namespace egw::proxy
