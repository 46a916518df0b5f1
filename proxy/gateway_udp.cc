// Gateway: its UDP flows (the `udp` section; proxy/udp_hub.h on the hub,
// proxy/udp_branch.h on the branch), wired to the peers' flow events.
#include <spdlog/spdlog.h>

#include "proxy/flow_classifier.h"
#include "proxy/gateway.h"
#include "proxy/gateway_peer.h"

namespace egw::proxy {
namespace {
// Open flows `status` lists; the rest are counted (a call server has
// thousands: the text and JSON stay bounded).
constexpr std::size_t kMaxListedFlows = 200;
}  // namespace

void Gateway::start_udp() {
  if (!config_.udp.enabled) return;
  if (config_.is_hub) {
    udp_hub_ = std::make_unique<UdpHub>(io_, config_.udp, *this);
    return;
  }
  if (!config_.udp.intercepts()) return;
  udp_branch_ = std::make_unique<UdpBranch>(io_, config_.udp, *this, 0);  // the branch's hub is its first peer
  udp_branch_->set_classifier([this](const tunnel::Destination& d, std::span<const std::byte> first) {
    const Classifier::Decision decision = classify_udp_flow(*classifier_, d, first, config_.udp.content_class);
    count_classification(decision);
    return decision.cls;
  });
  udp_branch_->start();
  spdlog::info("UDP flows: ports {} on {} as {}", config_.udp.ports.to_string(), config_.udp.listen,
               egw::to_string(config_.udp.content_class));
}

void Gateway::on_peer_flow_opened(Peer& peer, const tunnel::FlowOpened& opened) {
  if (udp_hub_) {
    if (local_) local_->refresh();  // an address added since is refused too
    const Refusal refusal = peer.policy.check(opened.destination);
    if (refusal != Refusal::none) ++counters_.destinations_refused[std::string(to_string(refusal))];
    return udp_hub_->on_flow_opened(peer.index, opened, refusal);
  }
  // A branch opens flows, never accepts one; a hub without `udp` carries none.
  if (tunnel::Connection* c = connection(peer.index)) {
    c->close_flow(opened.id, tunnel::kErrorDestinationRefused, now());
    service_soon(peer.index);
  }
}

void Gateway::on_peer_flow_closed(Peer& peer, const tunnel::FlowClosed& closed) {
  if (udp_hub_) udp_hub_->on_flow_closed(peer.index, closed);
  if (udp_branch_ && peer.index == 0) udp_branch_->on_flow_closed(closed);
}

void Gateway::on_peer_datagram(Peer& peer, const tunnel::DatagramReceived& datagram) {
  if (udp_hub_) udp_hub_->on_datagram(peer.index, datagram);
  if (udp_branch_ && peer.index == 0) udp_branch_->on_datagram(datagram);
}

void Gateway::on_peer_connection_closed(Peer& peer) {
  if (udp_hub_) udp_hub_->on_connection_closed(peer.index);
  if (udp_branch_ && peer.index == 0) udp_branch_->on_connection_closed();
}

void Gateway::sweep_udp(Instant t) {
  if (udp_hub_) udp_hub_->sweep(t);
  if (udp_branch_) udp_branch_->sweep(t);
}

// The gateway's counts and its live connections' (the tunnel's drops).
void Gateway::snapshot_udp(GatewaySnapshot& s) const {
  UdpStats u;
  if (udp_hub_) u = udp_hub_->stats();
  if (udp_branch_) u = udp_branch_->stats();
  s.udp_flows_open = u.flows_open;
  s.udp_flows_opened = u.flows_opened;
  s.udp_datagrams_sent = u.datagrams_to_tunnel;
  s.udp_datagrams_received = u.datagrams_from_tunnel;
  s.udp_datagrams_dropped = u.dropped;
  s.udp_flows_closed = u.flows_closed;
  if (!udp_hub_ && !udp_branch_) return;
  snapshot_udp_flows(s);
  for (const auto& p : peers_) {
    const tunnel::Connection* c = tunnel_->endpoint().session(p->index).connection();
    if (!c) continue;
    const tunnel::FlowStats f = c->stats().flows;
    s.udp_datagrams_dropped["deadline"] += f.dropped_deadline;
    s.udp_datagrams_dropped["queue"] += f.dropped_queue;
    s.udp_datagrams_dropped["unknown_flow"] += f.dropped_unknown_flow;
    s.udp_datagrams_dropped["too_large"] += f.dropped_too_large;
    s.udp_datagrams_dropped["lost"] += f.datagrams_lost;
  }
}

void Gateway::snapshot_udp_flows(GatewaySnapshot& s) const {
  std::vector<UdpFlowListing> listed;
  const Instant t = now();
  if (udp_hub_) udp_hub_->list_flows(t, kMaxListedFlows, listed, &s.udp_flows_omitted);
  if (udp_branch_) udp_branch_->list_flows(t, kMaxListedFlows, listed, &s.udp_flows_omitted);
  for (const UdpFlowListing& l : listed) {
    tunnel::session::Session& session = tunnel_->endpoint().session(l.peer);
    UdpFlowSnapshot f;
    f.peer = session.peer().name;
    f.flow_id = l.flow_id;
    f.source = l.source;
    f.destination = l.destination;
    f.idle_seconds = std::chrono::duration<double>(l.idle).count();
    if (const tunnel::Connection* c = session.connection()) {
      if (const auto counts = c->flow_counters(l.flow_id)) {
        f.content_class = counts->content_class;
        f.datagrams_sent = counts->datagrams_sent;
        f.bytes_sent = counts->bytes_sent;
        f.datagrams_received = counts->datagrams_received;
        f.bytes_received = counts->bytes_received;
        f.dropped_deadline = counts->dropped_deadline;
        f.dropped_queue = counts->dropped_queue;
      }
    }
    s.udp_flows.push_back(std::move(f));
  }
}

}  // namespace egw::proxy
