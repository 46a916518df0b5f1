#include "proxy/udp_hub.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "proxy/destination_endpoint.h"
#include "proxy/endpoint_text.h"
#include "proxy/gateway_peer.h"
#include "tunnel/error_codes.h"

namespace egw::proxy {

namespace asio = boost::asio;
using asio::ip::udp;

namespace {
// Datagrams read from one flow's socket per wake-up: a busy flow must not
// keep the I/O thread from the others.
constexpr int kMaxReadsPerWakeup = 64;
}  // namespace

struct UdpHub::Flow {
  Flow(asio::io_context& io, std::size_t p, tunnel::FlowId i) : socket(io), peer(p), id(i) {}
  udp::socket socket;
  std::size_t peer;
  tunnel::FlowId id;
  Duration idle_timeout{0};
  Instant last_activity{};
  bool closed = false;
};

UdpHub::UdpHub(asio::io_context& io, const config::UdpConfig& config, RelayOwner& owner)
    : io_(io), config_(config), owner_(owner) {}

UdpHub::~UdpHub() = default;

void UdpHub::on_flow_opened(std::size_t peer, const tunnel::FlowOpened& e, Refusal refusal) {
  tunnel::Connection* c = owner_.connection(peer);
  if (!c) return;
  const auto refuse = [&](const char* reason, std::uint64_t code) {
    ++stats_.dropped[reason];
    c->close_flow(e.id, code, owner_.now());
    owner_.service_soon(peer);
  };
  if (!config_.enabled) return refuse("refused", tunnel::kErrorDestinationRefused);
  if (refusal != Refusal::none) {
    spdlog::info("refused UDP flow to {}: {}", to_string(e.destination), to_string(refusal));
    return refuse("refused", tunnel::kErrorDestinationRefused);
  }
  if (per_peer_[peer] >= config_.flows_per_peer) return refuse("flow_limit", tunnel::kErrorGatewayLimit);
  auto flow = std::make_shared<Flow>(io_, peer, e.id);
  boost::system::error_code ec;
  const udp::endpoint to = endpoint_of<udp>(e.destination);
  flow->socket.open(to.protocol(), ec);
  if (!ec) flow->socket.non_blocking(true, ec);
  if (!ec) flow->socket.connect(to, ec);
  if (ec) {
    spdlog::info("UDP flow to {}: {}", to_string(e.destination), ec.message());
    return refuse("send_error", tunnel::kErrorConnectFailed);
  }
  const std::uint32_t idle_s = e.destination.port == 53 ? config_.dns_idle_timeout_s : config_.idle_timeout_s;
  flow->idle_timeout = std::chrono::seconds(idle_s);
  flow->last_activity = owner_.now();
  flows_[{peer, e.id}] = flow;
  ++per_peer_[peer];
  ++stats_.flows_opened;
  spdlog::debug("UDP flow {} of peer {} to {}", e.id, peer, to_string(e.destination));
  receive_next(flow);
}

void UdpHub::on_datagram(std::size_t peer, const tunnel::DatagramReceived& e) {
  auto it = flows_.find({peer, e.flow});
  if (it == flows_.end()) return;  // refused or closed: the tunnel counts none of it
  Flow& f = *it->second;
  const ssize_t n = ::send(f.socket.native_handle(), e.data.data(), e.data.size(), MSG_DONTWAIT);
  if (n < 0) {
    // A full buffer or an ICMP error of an earlier datagram: UDP loses it.
    ++stats_.dropped["send_error"];
    return;
  }
  f.last_activity = owner_.now();
  ++stats_.datagrams_from_tunnel;
}

void UdpHub::on_flow_closed(std::size_t peer, const tunnel::FlowClosed& e) {
  close({peer, e.id}, "peer_closed", false);  // the tunnel already forgot it
}

void UdpHub::receive_next(const std::shared_ptr<Flow>& flow) {
  flow->socket.async_wait(udp::socket::wait_read, [this, flow](const boost::system::error_code& ec) {
    if (ec || flow->closed) return;
    on_readable(flow);
  });
}

void UdpHub::on_readable(const std::shared_ptr<Flow>& flow) {
  tunnel::Connection* c = owner_.connection(flow->peer);
  const std::span<std::byte> buffer = owner_.scratch();
  bool queued = false;
  for (int i = 0; i < kMaxReadsPerWakeup; ++i) {
    const ssize_t n = ::recv(flow->socket.native_handle(), buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      continue;  // an ICMP error (ECONNREFUSED): the next datagram may still come
    }
    flow->last_activity = owner_.now();
    if (!c) {
      ++stats_.dropped["tunnel_down"];
      continue;
    }
    if (c->send_datagram(flow->id, buffer.first(static_cast<std::size_t>(n)), owner_.now())) {
      ++stats_.datagrams_to_tunnel;
      queued = true;
    } else if (!c->flow_exists(flow->id)) {
      return close({flow->peer, flow->id}, "peer_closed", false);
    } else {
      ++stats_.dropped["too_large"];
    }
  }
  if (queued) owner_.service_soon(flow->peer);
  receive_next(flow);
}

void UdpHub::close(const Key& key, const std::string& reason, bool tell_peer) {
  auto it = flows_.find(key);
  if (it == flows_.end()) return;
  std::shared_ptr<Flow> flow = it->second;
  flows_.erase(it);
  --per_peer_[key.first];
  flow->closed = true;
  boost::system::error_code ignored;
  flow->socket.close(ignored);
  ++stats_.flows_closed[reason];
  if (tell_peer) {
    if (tunnel::Connection* c = owner_.connection(key.first)) {
      c->close_flow(key.second, 0, owner_.now());
      owner_.service_soon(key.first);
    }
  }
}

void UdpHub::on_connection_closed(std::size_t peer) {
  std::vector<Key> gone;
  for (const auto& [key, flow] : flows_) {
    if (key.first == peer) gone.push_back(key);
  }
  for (const Key& key : gone) close(key, "tunnel_closed", false);
}

void UdpHub::sweep(Instant now) {
  std::vector<Key> idle;
  std::vector<Key> forgotten;
  for (const auto& [key, flow] : flows_) {
    tunnel::Connection* c = owner_.connection(key.first);
    if (!c || !c->flow_exists(key.second)) {
      forgotten.push_back(key);  // the peer closed it (FlowClosed), or the tunnel went
    } else if (now - flow->last_activity > flow->idle_timeout) {
      idle.push_back(key);
    }
  }
  for (const Key& key : forgotten) close(key, "peer_closed", false);
  for (const Key& key : idle) close(key, "idle", true);
}

void UdpHub::list_flows(Instant now, std::size_t max, std::vector<UdpFlowListing>& out,
                        std::uint64_t* omitted) const {
  for (const auto& [key, flow] : flows_) {
    if (out.size() >= max) {
      ++*omitted;
      continue;
    }
    boost::system::error_code ec;
    const udp::endpoint local = flow->socket.local_endpoint(ec);
    const udp::endpoint remote = flow->socket.remote_endpoint(ec);
    out.push_back({key.first, key.second, endpoint_text(local), endpoint_text(remote), now - flow->last_activity});
  }
}

UdpStats UdpHub::stats() const {
  UdpStats s = stats_;
  s.flows_open = flows_.size();
  return s;
}

}  // namespace egw::proxy
