#include "proxy/udp_branch.h"

#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "proxy/endpoint_text.h"
#include "proxy/tunnel_config.h"
#include "tunnel/error_codes.h"

namespace egw::proxy {

namespace asio = boost::asio;
using asio::ip::udp;

namespace {
constexpr int kMaxReadsPerWakeup = 64;

udp::endpoint endpoint_of(const sockaddr_storage& sa, socklen_t length) {
  udp::endpoint e;
  std::memcpy(e.data(), &sa, std::min<std::size_t>(length, sizeof sa));
  e.resize(length);
  return e;
}

tunnel::Destination destination_of(const udp::endpoint& e) {
  tunnel::Destination d;
  d.port = e.port();
  if (e.address().is_v4()) {
    const auto b = e.address().to_v4().to_bytes();
    std::copy(b.begin(), b.end(), d.address.begin());
  } else {
    d.family = tunnel::Destination::Family::ipv6;
    const auto b = e.address().to_v6().to_bytes();
    std::copy(b.begin(), b.end(), d.address.begin());
  }
  return d;
}

void set_transparent(udp::socket& s, bool v6) {
  const int on = 1;
  const int level = v6 ? SOL_IPV6 : SOL_IP;
  const int option = v6 ? IPV6_TRANSPARENT : IP_TRANSPARENT;
  if (::setsockopt(s.native_handle(), level, option, &on, sizeof on) != 0) {
    throw std::runtime_error(std::string("IP_TRANSPARENT: ") + std::strerror(errno) + " (needs CAP_NET_ADMIN)");
  }
}
}  // namespace

struct UdpBranch::Flow {
  explicit Flow(asio::io_context& io) : reply(io) {}
  tunnel::FlowId id = 0;
  udp::endpoint client;
  udp::endpoint destination;
  udp::socket reply;  // bound to the destination: replies come from it
  Duration idle_timeout{0};
  Instant last_activity{};
};

UdpBranch::UdpBranch(asio::io_context& io, const config::UdpConfig& config, RelayOwner& owner, std::size_t peer)
    : io_(io), config_(config), owner_(owner), peer_(peer), socket_(io) {}

UdpBranch::~UdpBranch() = default;

void UdpBranch::start() {
  auto parsed = parse_udp_endpoint(config_.listen);
  if (auto* err = std::get_if<std::string>(&parsed)) throw std::runtime_error("udp.listen: " + *err);
  const udp::endpoint at = std::get<udp::endpoint>(parsed);
  const bool v6 = at.address().is_v6();
  try {
    socket_.open(at.protocol());
    set_transparent(socket_, v6);
    const int on = 1;
    ::setsockopt(socket_.native_handle(), v6 ? SOL_IPV6 : SOL_IP, v6 ? IPV6_RECVORIGDSTADDR : IP_RECVORIGDSTADDR,
                 &on, sizeof on);
    socket_.set_option(asio::socket_base::reuse_address(true));
    socket_.non_blocking(true);
    socket_.bind(at);
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error("cannot bind udp.listen " + config_.listen + ": " + e.code().message());
  }
  receive_next();
}

udp::endpoint UdpBranch::local_endpoint() const { return socket_.local_endpoint(); }

void UdpBranch::receive_next() {
  socket_.async_wait(udp::socket::wait_read, [this](const boost::system::error_code& ec) {
    if (ec) return;
    on_readable();
    receive_next();
  });
}

// recvmsg: the payload, the client (source) and the original destination
// (IP_ORIGDSTADDR: TPROXY left the packet's destination as it was).
void UdpBranch::on_readable() {
  const std::span<std::byte> buffer = owner_.scratch();
  for (int i = 0; i < kMaxReadsPerWakeup; ++i) {
    sockaddr_storage from{};
    iovec iov{buffer.data(), buffer.size()};
    alignas(cmsghdr) char control[256];
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(socket_.native_handle(), &msg, MSG_DONTWAIT);
    if (n < 0) break;
    std::optional<udp::endpoint> to;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_ORIGDSTADDR) ||
          (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_ORIGDSTADDR)) {
        sockaddr_storage dst{};
        const std::size_t length = std::min<std::size_t>(c->cmsg_len - CMSG_LEN(0), sizeof dst);
        std::memcpy(&dst, CMSG_DATA(c), length);
        to = endpoint_of(dst, static_cast<socklen_t>(length));
      }
    }
    if (!to) continue;
    on_lan_datagram(endpoint_of(from, msg.msg_namelen), *to, buffer.first(static_cast<std::size_t>(n)));
  }
}

void UdpBranch::on_lan_datagram(const udp::endpoint& client, const udp::endpoint& to,
                                std::span<const std::byte> payload) {
  std::shared_ptr<Flow> flow;
  if (auto it = by_tuple_.find({client, to}); it != by_tuple_.end()) {
    flow = it->second;
  } else {
    flow = open(client, to, payload);
    if (!flow) return;
  }
  tunnel::Connection* c = owner_.connection(peer_);
  if (!c || !c->flow_exists(flow->id)) {
    close(flow->id, "peer_closed", false);
    ++stats_.dropped["tunnel_down"];
    return;
  }
  flow->last_activity = owner_.now();
  if (!c->send_datagram(flow->id, payload, owner_.now())) {
    ++stats_.dropped["too_large"];
    return;
  }
  ++stats_.datagrams_to_tunnel;
  owner_.service_soon(peer_);
}

std::shared_ptr<UdpBranch::Flow> UdpBranch::open(const udp::endpoint& client, const udp::endpoint& to,
                                                 std::span<const std::byte> first_datagram) {
  tunnel::Connection* c = owner_.connection(peer_);
  if (!c) {
    ++stats_.dropped["tunnel_down"];
    return nullptr;
  }
  if (by_id_.size() >= config_.flows_per_peer) {
    ++stats_.dropped["flow_limit"];
    return nullptr;
  }
  std::uint32_t& of_client = per_client_[client.address()];
  if (of_client >= config_.flows_per_client) {
    ++stats_.dropped["client_limit"];
    return nullptr;
  }
  auto flow = std::make_shared<Flow>(io_);
  try {
    flow->reply.open(to.protocol());
    set_transparent(flow->reply, to.address().is_v6());
    flow->reply.set_option(asio::socket_base::reuse_address(true));
    flow->reply.non_blocking(true);
    flow->reply.bind(to);
  } catch (const std::exception& e) {
    spdlog::warn("UDP flow {} -> {}: reply socket: {}", client.address().to_string(), to.address().to_string(),
                 e.what());
    ++stats_.dropped["send_error"];
    return nullptr;
  }
  const tunnel::Destination destination = destination_of(to);
  const ContentClass cls = classify_ ? classify_(destination, first_datagram) : config_.content_class;
  const auto id = c->open_flow(destination, cls, owner_.now());
  if (!id) {
    ++stats_.dropped["tunnel_down"];
    return nullptr;
  }
  flow->id = *id;
  flow->client = client;
  flow->destination = to;
  flow->idle_timeout = std::chrono::seconds(to.port() == 53 ? config_.dns_idle_timeout_s : config_.idle_timeout_s);
  ++of_client;
  by_tuple_[{client, to}] = flow;
  by_id_[*id] = flow;
  ++stats_.flows_opened;
  spdlog::debug("UDP flow {}: {}:{} -> {}:{} as {}", *id, client.address().to_string(), client.port(),
                to.address().to_string(), to.port(), egw::to_string(cls));
  return flow;
}

void UdpBranch::on_datagram(const tunnel::DatagramReceived& e) {
  auto it = by_id_.find(e.flow);
  if (it == by_id_.end()) return;
  Flow& f = *it->second;
  const ssize_t n = ::sendto(f.reply.native_handle(), e.data.data(), e.data.size(), MSG_DONTWAIT, f.client.data(),
                             static_cast<socklen_t>(f.client.size()));
  if (n < 0) {
    ++stats_.dropped["send_error"];
    return;
  }
  f.last_activity = owner_.now();
  ++stats_.datagrams_from_tunnel;
}

void UdpBranch::on_flow_closed(const tunnel::FlowClosed& e) {
  if (e.error_code == tunnel::kErrorDestinationRefused) ++stats_.dropped["refused"];
  close(e.id, e.error_code == 0 ? "peer_closed" : "refused", false);
}

void UdpBranch::close(tunnel::FlowId id, const std::string& reason, bool tell_peer) {
  auto it = by_id_.find(id);
  if (it == by_id_.end()) return;
  const std::shared_ptr<Flow> flow = it->second;
  by_id_.erase(it);
  by_tuple_.erase({flow->client, flow->destination});
  if (auto c = per_client_.find(flow->client.address()); c != per_client_.end() && --c->second == 0) {
    per_client_.erase(c);
  }
  boost::system::error_code ignored;
  flow->reply.close(ignored);
  ++stats_.flows_closed[reason];
  if (tell_peer) {
    if (tunnel::Connection* c = owner_.connection(peer_)) {
      c->close_flow(id, 0, owner_.now());
      owner_.service_soon(peer_);
    }
  }
}

void UdpBranch::on_connection_closed() {
  std::vector<tunnel::FlowId> all;
  for (const auto& [id, flow] : by_id_) all.push_back(id);
  for (tunnel::FlowId id : all) close(id, "tunnel_closed", false);
}

void UdpBranch::sweep(Instant now) {
  std::vector<tunnel::FlowId> idle;
  for (const auto& [id, flow] : by_id_) {
    if (now - flow->last_activity > flow->idle_timeout) idle.push_back(id);
  }
  for (tunnel::FlowId id : idle) close(id, "idle", true);
}

void UdpBranch::list_flows(Instant now, std::size_t max, std::vector<UdpFlowListing>& out,
                           std::uint64_t* omitted) const {
  for (const auto& [id, flow] : by_id_) {
    if (out.size() >= max) {
      ++*omitted;
      continue;
    }
    out.push_back({peer_, id, endpoint_text(flow->client), endpoint_text(flow->destination), now - flow->last_activity});
  }
}

UdpStats UdpBranch::stats() const {
  UdpStats s = stats_;
  s.flows_open = by_id_.size();
  return s;
}

}  // namespace egw::proxy
