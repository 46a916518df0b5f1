#include "proxy/gateway.h"

#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>

#include "proxy/app_list.h"
#include "proxy/destination_endpoint.h"
#include "proxy/gateway_peer.h"
#include "proxy/ndpi_detector.h"
#include "proxy/original_destination.h"
#include "proxy/path_cache_file.h"
#include "proxy/timestamp_file.h"
#include "proxy/tunnel_config.h"
#include "tunnel/error_codes.h"

namespace egw::proxy {

namespace asio = boost::asio;
using asio::ip::tcp;
using tunnel::session::Session;

namespace {

constexpr std::size_t kScratchBytes = 64 * 1024;
// The hub sniffs at most this much of a response for its Content-Type.
constexpr std::size_t kMaxSniffBytes = 8 * 1024;
// The branch peeks at most this much of a client's first bytes (a TLS
// ClientHello with its SNI fits).
constexpr std::size_t kMaxPeekBytes = 16 * 1024;
// Clients waiting for the tunnel at most.
constexpr std::size_t kMaxWaitingForTunnel = 4096;
constexpr int kCacheSaveEverySeconds = 60;

}  // namespace

std::string to_string(const tunnel::Destination& d) {
  const std::string ip = config::ip16_to_string(config::ip16_of(d));
  if (d.family == tunnel::Destination::Family::ipv6) return "[" + ip + "]:" + std::to_string(d.port);
  return ip + ":" + std::to_string(d.port);
}

std::string endpoint_text(const asio::ip::address& a, unsigned short port) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {  // a dual-stack socket's IPv4 peer
    return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6()).to_string() + ":" + std::to_string(port);
  }
  return a.is_v6() ? "[" + a.to_string() + "]:" + std::to_string(port) : a.to_string() + ":" + std::to_string(port);
}

namespace {
// The hub classifies by its destination rules and the branch's hint (and
// Content-Type): application detection would cost it nDPI's ~7 MB for nothing.
config::ClassifyConfig classify_config(const config::GatewayConfig& c) {
  config::ClassifyConfig k = c.reloadable.classify;
  if (c.is_hub) k.detect_applications = false;
  return k;
}
}  // namespace

Gateway::Gateway(asio::io_context& io, config::GatewayConfig config)
    : io_(io),
      config_(std::move(config)),
      started_(std::chrono::steady_clock::now()),
      cache_(config_.cache),
      classifier_(std::make_unique<Classifier>(classify_config(config_))),
      scratch_(kScratchBytes),
      tick_(io) {
  if (!config_.cache_file.empty()) {
    const auto loaded = load_path_cache(config_.cache_file, cache_, Instant{}, std::chrono::system_clock::now());
    if (loaded.warning) spdlog::warn("temporal cache {}: {}", config_.cache_file, *loaded.warning);
    else spdlog::info("temporal cache {}: {} entries loaded", config_.cache_file, loaded.entries);
  }
  if (config_.is_hub) local_ = std::make_unique<LocalAddresses>();
}

DestinationPolicy Gateway::policy_of(std::size_t peer) const {
  return DestinationPolicy::following(config_.reloadable.peers[peer].allow,
                                      local_ ? local_->view() : std::make_shared<const HostAddresses>());
}

Gateway::~Gateway() = default;

Instant Gateway::now() const {
  if (tunnel_) return tunnel_->now();
  return Instant(std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - started_));
}

// The hub's replay memory across restarts (item 4 of issue 19).
std::unique_ptr<TimestampFile> Gateway::timestamp_file() const {
  if (!config_.is_hub) return nullptr;
  if (config_.handshake_state_file.empty()) {
    spdlog::warn("handshake_state_file not set: after a restart a captured initiation is answered once");
    return nullptr;
  }
  auto file = std::make_unique<TimestampFile>(config_.handshake_state_file);
  if (file->load_error()) spdlog::warn("handshake state {}: {}", config_.handshake_state_file, *file->load_error());
  return file;
}

void Gateway::start() {
  if (classify_config(config_).detect_applications) {
    // The chain: the newer nDPI list, the v2fly list, the UT1 list, libndpi.
    const AppListDetector* lists[] = {&AppListDetector::shared(), &AppListDetector::shared_v2fly(),
                                      &AppListDetector::shared_ut1()};
    std::string listed;
    for (const AppListDetector* l : lists) {
      listed += fmt::format("{} {} host patterns ({} KiB), ", l->name(), l->patterns(), l->memory_bytes() / 1024);
    }
    spdlog::info("application detection: {}then nDPI {} (built in {:.0f} ms, once per process)", listed,
                 NdpiDetector::version(), NdpiDetector::shared().init_ms());
  }
  asio::ip::udp::endpoint local;
  if (!config_.tunnel_listen.empty()) {
    auto e = parse_udp_endpoint(config_.tunnel_listen);
    if (auto* err = std::get_if<std::string>(&e)) throw std::runtime_error("listen: " + *err);
    local = std::get<asio::ip::udp::endpoint>(e);
  } else {
    const bool v4 = config_.endpoint.peers.front().endpoint->is_v4();
    local = asio::ip::udp::endpoint(v4 ? asio::ip::udp::v4() : asio::ip::udp::v6(), 0);
  }
  try {
    tunnel_ = std::make_unique<TunnelSocket>(io_, config_.endpoint, local, &cache_, timestamp_file());
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error("cannot bind the tunnel to UDP " + config_.tunnel_listen + ": " + e.code().message());
  }
  for (std::size_t i = 0; i < config_.endpoint.peers.size(); ++i) {
    peers_.push_back(std::make_unique<Peer>(*this, i, policy_of(i)));
    tunnel_->set_handler(i, peers_.back().get());
  }
  if (!config_.is_hub) {
    auto e = parse_udp_endpoint(config_.interception.listen);  // same syntax as a UDP address
    if (auto* err = std::get_if<std::string>(&e)) throw std::runtime_error("interception.listen: " + *err);
    const auto u = std::get<asio::ip::udp::endpoint>(e);
    const tcp::endpoint at(u.address(), u.port());
    try {
      acceptor_ = std::make_unique<tcp::acceptor>(io_);
      acceptor_->open(at.protocol());
      acceptor_->set_option(tcp::acceptor::reuse_address(true));
      if (at.address().is_v6()) acceptor_->set_option(asio::ip::v6_only(false));
      acceptor_->bind(at);
      acceptor_->listen(asio::socket_base::max_listen_connections);
    } catch (const boost::system::system_error& err) {
      throw std::runtime_error("cannot listen on TCP " + config_.interception.listen + ": " + err.code().message());
    }
    accept_next();
  }
  start_udp();
  if (!tunnel_->urgent_lane()) {
    spdlog::warn("urgent lane off ({}): requests and ACKs queue with bulk datagrams in one socket",
                 tunnel_->urgent_lane_error());
  }
  tunnel_->start();
  spdlog::info("{} gateway started: tunnel on UDP {} (urgent lane {}){}", config_.is_hub ? "hub" : "branch",
               [&] { std::ostringstream o; o << tunnel_->local_endpoint(); return o.str(); }(),
               tunnel_->urgent_lane() ? "on" : "off",
               acceptor_ ? ", clients on TCP " + endpoint_text(acceptor_->local_endpoint()) : "");
  every_second();
}

tcp::endpoint Gateway::listener_endpoint() const { return acceptor_ ? acceptor_->local_endpoint() : tcp::endpoint{}; }
asio::ip::udp::endpoint Gateway::tunnel_endpoint() const { return tunnel_->local_endpoint(); }

tunnel::Connection* Gateway::connection(std::size_t session) {
  tunnel::Connection* c = tunnel_->endpoint().session(session).connection();
  return c && !c->is_closed() ? c : nullptr;
}

void Gateway::service_soon(std::size_t session) {
  Peer& p = *peers_[session];
  if (p.service_posted) return;
  p.service_posted = true;
  asio::post(io_, [this, session] {
    peers_[session]->service_posted = false;
    tunnel_->service(session);
  });
}

// At most one immediate service per peer and round of ready handlers: the
// flag clears behind them. A round in which thousands of idle connections
// each send (a gateway's verify burst) posts one coalesced service, as before
// (an immediate one for each: echo p99 +35-80 %, the hub's RSS after the
// burst 3-8x, BENCHMARKS.md session 43).
void Gateway::service_now(std::size_t session) {
  Peer& p = *peers_[session];
  if (p.serviced_now || p.service_posted) return service_soon(session);
  p.serviced_now = true;
  asio::post(io_, [this, session] { peers_[session]->serviced_now = false; });
  tunnel_->service(session);
}

void Gateway::relay_finished(Relay& relay) {
  Peer& p = *peers_[relay.session()];
  auto it = p.relays.find(&relay);
  if (it == p.relays.end()) return;
  // Keep it alive until this call stack unwinds: the relay is still running.
  asio::post(io_, [keep = std::move(it->second)] {});
  p.relays.erase(it);
  if (auto s = p.streams.find(relay.stream_id()); s != p.streams.end() && s->second == &relay) {
    p.streams.erase(s);
  }
  if (auto s = p.sniffing.find(&relay); s != p.sniffing.end()) {
    sniff_bytes_ -= s->second.capacity();
    p.sniffing.erase(s);
    // A branch's stream that ended before its first bytes said more: the
    // open's `default`, counted now (on_late_client_bytes counts the others).
    if (!config_.is_hub) ++counters_.classified_by_stage[std::string(to_string(Stage::fallback))];
  }
  const auto bytes = relay.bytes_by_class();
  for (std::size_t c = 0; c < bytes.size(); ++c) p.bytes_by_class_closed[c] += bytes[c];
  if (relay.side() == Relay::Side::branch) {
    if (auto c = clients_.find(relay.client_address()); c != clients_.end() && --c->second.connections == 0) {
      clients_.erase(c);
    }
  }
  if (draining_ && drained_) drain_tick();
}

// ------------------------------------------------------------ admission

std::uint64_t Gateway::memory_in_use() const {
  std::uint64_t bytes = 0;
  for (const auto& p : peers_) {
    if (const tunnel::Connection* c = tunnel_->endpoint().session(p->index).connection()) {
      const tunnel::ConnectionStats cs = c->stats();
      bytes += cs.send_buffered_bytes + cs.recv_buffered_bytes;
    }
  }
  return bytes + sniff_bytes_;
}

// The connection's windows held, typically by bytes nobody reads (clients or
// servers that stopped reading): seven eighths of our receive window not
// yet read out, or of our send buffer not yet acknowledged. A new stream
// would wait behind every stream blocked on them (seconds with hundreds),
// so it is refused with a reset; the eighth left is for the streams already
// running. (At the defaults that takes 224 streams with full buffers: 200
// clients that stopped reading do not shut out the others.)
bool Gateway::windows_held(const Peer& peer) const {
  const tunnel::Connection* c = tunnel_->endpoint().session(peer.index).connection();
  if (!c) return false;
  const tunnel::ConnectionStats s = c->stats();
  const tunnel::ConnectionConfig& w = config_.endpoint.connection;
  return s.recv_buffered_bytes >= s.recv_window_bytes / 8 * 7 ||  // as auto-tuned, if it is
         s.send_buffered_bytes >= w.connection_send_buffer_bytes / 8 * 7;
}

std::string Gateway::admission_refusal(const Peer& peer) const {
  const config::Limits& l = config_.reloadable.limits;
  if (draining_) return "draining";
  if (peer.relays.size() >= l.connections_per_peer) return "limit_connections";
  if (memory_in_use() >= l.memory_bytes || windows_held(peer)) return "limit_memory";
  return "";
}

void Gateway::refuse(const std::string& reason) { ++counters_.refused[reason]; }

// Branch admission: the client's own limits first (they refuse only the
// client over them), then the gateway's; when the gateway is full of
// connections, the heaviest client's longest-idle ones make room for a
// lighter client. (Idle connections hold no memory: reclaiming them would
// not help against limit_memory.)
std::string Gateway::admit_client(Peer& peer, const config::Ip16& client) {
  const config::Limits& l = config_.reloadable.limits;
  if (draining_) return "draining";
  if (const auto it = clients_.find(client); it != clients_.end()) {
    if (it->second.connections >= l.connections_per_client) return "limit_client_connections";
    if (it->second.memory_bytes >= l.memory_per_client_bytes) return "limit_client_memory";
  }
  if (peer.relays.size() >= l.connections_per_peer && reclaim_for(peer.relays, client) == 0) return "limit_connections";
  if (memory_in_use() >= l.memory_bytes || windows_held(peer)) return "limit_memory";
  return "";
}

// ------------------------------------------------------------ branch

void Gateway::accept_next() {
  acceptor_->async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_ || !acceptor_->is_open()) return;
    if (!ec) on_accepted(std::move(socket));
    else spdlog::warn("accept: {}", ec.message());  // EMFILE and friends: keep serving the others
    accept_next();
  });
}

void Gateway::on_accepted(tcp::socket socket) {
  Peer& peer = *peers_.front();  // a branch has one hub
  boost::system::error_code ec;
  const auto client = socket.remote_endpoint(ec);
  auto rst = [&](const std::string& reason) {
    refuse(reason);
    if (log_allowed("refused client: " + reason)) spdlog::info("refused client {}: {}", endpoint_text(client), reason);
    socket.set_option(asio::socket_base::linger(true, 0), ec);
    socket.close(ec);
  };
  const config::Ip16 address = ip16_of(client.address());
  if (const std::string why = admit_client(peer, address); !why.empty()) return rst(why);
  std::string error;
  const auto destination = resolve_destination_ ? resolve_destination_(socket.native_handle())
                                                : original_destination(socket.native_handle(), &error);
  if (!destination) return rst("no_original_destination");
  if (!resolve_destination_ && is_listener_itself(*destination, acceptor_->native_handle())) return rst("loop");
  ++counters_.accepted;
  set_keepalive(socket);
  auto relay = std::make_shared<Relay>(*this, std::move(socket), peer.index, Relay::Side::branch, *destination, now());
  peer.relays.emplace(relay.get(), relay);
  ++clients_[address].connections;
  await_first_bytes(relay);
}

// Up to first_bytes_wait_ms for the client's first bytes, so they leave with
// the STREAM_OPEN and classify it; server-first protocols wait that long once.
void Gateway::await_first_bytes(const std::shared_ptr<Relay>& relay) {
  const auto wait = std::chrono::milliseconds(config_.interception.first_bytes_wait_ms);
  if (wait.count() == 0) return open_stream(relay);
  auto timer = std::make_shared<asio::steady_timer>(io_, wait);
  auto opened = std::make_shared<bool>(false);
  relay->socket().async_wait(tcp::socket::wait_read, [this, relay, timer, opened](const boost::system::error_code&) {
    if (*opened) return;
    *opened = true;
    timer->cancel();
    open_stream(relay);
  });
  timer->async_wait([this, relay, opened](const boost::system::error_code& ec) {
    if (ec || *opened) return;
    *opened = true;
    boost::system::error_code ignored;
    relay->socket().cancel(ignored);
    open_stream(relay);
  });
}

void Gateway::open_stream(const std::shared_ptr<Relay>& relay) {
  if (relay->finished()) return;
  Peer& peer = *peers_[relay->session()];
  tunnel::Connection* c = connection(peer.index);
  if (!c) {  // the tunnel is down: wait for it (bounded), see every_second()
    if (peer.waiting_for_tunnel.size() >= kMaxWaitingForTunnel) {
      refuse("tunnel_down");
      return relay->abort(tunnel::kErrorGatewayLimit);
    }
    peer.waiting_for_tunnel.push_back(relay);
    tunnel_->connect(peer.index);
    return;
  }
  const std::span<std::byte> peek = scratch().first(kMaxPeekBytes);
  const ssize_t n = ::recv(relay->socket().native_handle(), peek.data(), peek.size(), MSG_PEEK | MSG_DONTWAIT);
  const auto first = peek.first(n > 0 ? static_cast<std::size_t>(n) : 0);
  const Classifier::Decision d = classifier_->classify_open(relay->destination(), first);
  relay->class_final = d.from_destination;
  // No ClientHello yet, or part of one, and nothing else answered: the
  // client was slower than the wait (a loaded machine). Its bytes still
  // classify the stream as they come (on_late_client_bytes), so a late SNI
  // is not taken for `default`; the stage is counted once decided.
  const bool late = d.need_more && d.stage == Stage::fallback;
  if (!late) count_classification(d);
  const auto id = c->open_stream(relay->destination(), d.cls, now());
  if (!id) {
    refuse("tunnel_down");
    return relay->abort(tunnel::kErrorGatewayLimit);
  }
  ++peer.streams_total;
  peer.streams.emplace(*id, relay.get());
  spdlog::debug("stream {}: {} -> {} ({})", *id, endpoint_text(relay->client()),
                to_string(relay->destination()), egw::to_string(d.cls));
  if (late) {
    relay->sniffing_response = true;
    peer.sniffing[relay.get()].clear();
  }
  relay->start(*id, d.cls);  // reads the first bytes into the stream: one packet with the open
  service_soon(peer.index);
}

// ------------------------------------------------------------ hub

void Gateway::on_peer_stream(Peer& peer, const tunnel::StreamOpened& opened) {
  tunnel::Connection* c = connection(peer.index);
  if (!c) return;
  ++peer.streams_total;
  const auto reset = [&](std::uint64_t code) {
    c->stream_reset(opened.id, code, now());
    service_soon(peer.index);
  };
  if (!config_.is_hub) {  // a hub never opens streams towards a branch
    spdlog::warn("peer {} opened stream {}: refused (a branch accepts none)", peer.session().peer().name, opened.id);
    return reset(tunnel::kErrorDestinationRefused);
  }
  if (local_) local_->refresh();  // an address added since the last stream is refused too
  const Refusal refusal = peer.policy.check(opened.destination);
  if (refusal != Refusal::none) {
    ++counters_.destinations_refused[std::string(to_string(refusal))];
    spdlog::info("refused {} -> {}: {}", peer.session().peer().name, to_string(opened.destination), to_string(refusal));
    return reset(tunnel::kErrorDestinationRefused);
  }
  if (const std::string why = admission_refusal(peer); !why.empty()) {
    refuse(why);
    if (log_allowed("refused stream: " + why)) {
      spdlog::info("refused {} -> {}: {}", peer.session().peer().name, to_string(opened.destination), why);
    }
    return reset(tunnel::kErrorGatewayLimit);
  }
  connect_to_server(peer, opened.id, opened);
}

void Gateway::connect_to_server(Peer& peer, StreamId id, const tunnel::StreamOpened& opened) {
  auto relay = std::make_shared<Relay>(*this, tcp::socket(io_), peer.index, Relay::Side::hub, opened.destination, now());
  relay->set_content_class(opened.content_class);
  relay->assign_stream(id);
  peer.relays.emplace(relay.get(), relay);
  peer.streams.emplace(id, relay.get());
  auto timer = std::make_shared<asio::steady_timer>(
      io_, std::chrono::milliseconds(config_.reloadable.limits.connect_timeout_ms));
  auto timed_out = std::make_shared<bool>(false);
  timer->async_wait([relay, timed_out](const boost::system::error_code& ec) {
    if (ec) return;
    *timed_out = true;
    boost::system::error_code ignored;
    relay->socket().cancel(ignored);
  });
  const ContentClass hinted = opened.content_class;
  relay->socket().async_connect(
      endpoint_of<tcp>(opened.destination),
      [this, relay, timer, timed_out, hinted](const boost::system::error_code& ec) {
        timer->cancel();
        if (relay->finished()) return;  // the branch reset the stream meanwhile
        Peer& p = *peers_[relay->session()];
        if (ec) {
          const bool timeout = *timed_out;
          refuse(timeout ? "connect_timeout" : "connect_failed");
          spdlog::info("connect to {} for {}: {}", to_string(relay->destination()), p.session().peer().name,
                       timeout ? "timed out" : ec.message());
          return relay->abort(timeout ? tunnel::kErrorConnectTimeout : tunnel::kErrorConnectFailed);
        }
        ++counters_.accepted;
        set_keepalive(relay->socket());
        // The hub's own destination rules win; otherwise the branch's hint,
        // corrected by the response's Content-Type.
        const Classifier::Decision d = classifier_->classify_open(relay->destination(), {});
        const ContentClass cls = d.from_destination ? d.cls : hinted;
        relay->class_final = d.from_destination;
        if (!d.from_destination) {
          relay->sniffing_response = true;
          p.sniffing[relay.get()];
        }
        if (tunnel::Connection* c = connection(p.index); c && d.from_destination) {
          c->set_stream_class(relay->stream_id(), cls, now());
        }
        relay->start(relay->stream_id(), cls);
        service_soon(p.index);
      });
}

// Hub: the response head so far; true once decided (or past the cap).
bool Gateway::on_response_head(Relay& relay, const std::vector<std::byte>& head) {
  const Classifier::ResponseDecision d = classifier_->classify_response(head);
  if (d.verdict == Classifier::ResponseVerdict::need_more && head.size() < kMaxSniffBytes) return false;
  if (d.verdict == Classifier::ResponseVerdict::matched && d.cls != relay.content_class()) {
    if (tunnel::Connection* c = connection(relay.session())) {
      c->set_stream_class(relay.stream_id(), d.cls, now());
      spdlog::debug("stream {} to {} is {} (Content-Type)", relay.stream_id(), to_string(relay.destination()),
                    egw::to_string(d.cls));
    }
    relay.set_content_class(d.cls);
  }
  return true;
}

// Branch: the client's first bytes so far, the stream already open as
// `default`; true once decided. A late SNI's class replaces it; the stage
// that decided is counted (the open counted nothing).
bool Gateway::on_late_client_bytes(Relay& relay, const std::vector<std::byte>& head) {
  const Classifier::Decision d = classifier_->classify_open(relay.destination(), head);
  if (d.need_more && head.size() < kMaxSniffBytes) return false;
  count_classification(d);
  if (d.cls == relay.content_class()) return true;
  if (tunnel::Connection* c = connection(relay.session())) {
    c->set_stream_class(relay.stream_id(), d.cls, now());
    spdlog::debug("stream {} to {} is {} (a late ClientHello)", relay.stream_id(), to_string(relay.destination()),
                  egw::to_string(d.cls));
  }
  relay.set_content_class(d.cls);
  return true;
}

void Gateway::on_response_bytes(Relay& relay, std::span<const std::byte> bytes) {
  Peer& p = *peers_[relay.session()];
  auto it = p.sniffing.find(&relay);
  if (it == p.sniffing.end()) {
    relay.sniffing_response = false;
    return;
  }
  std::vector<std::byte>& head = it->second;
  const std::size_t capacity_before = head.capacity();
  head.insert(head.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(
                                                            std::min(bytes.size(), kMaxSniffBytes - head.size())));
  sniff_bytes_ += head.capacity() - capacity_before;
  if (!(config_.is_hub ? on_response_head(relay, head) : on_late_client_bytes(relay, head))) return;
  relay.sniffing_response = false;
  sniff_bytes_ -= head.capacity();
  p.sniffing.erase(it);
}

// ------------------------------------------------------------ operation

void Gateway::every_second() {
  const Instant t = now();
  const auto wait = std::chrono::milliseconds(config_.reloadable.limits.connect_timeout_ms);
  for (auto& p : peers_) {  // clients that waited too long for the tunnel
    while (!p->waiting_for_tunnel.empty() && t - p->waiting_for_tunnel.front()->created() > wait) {
      refuse("tunnel_down");
      p->waiting_for_tunnel.front()->abort(tunnel::kErrorGatewayLimit);
      p->waiting_for_tunnel.pop_front();
    }
  }
  for (auto& p : peers_) {  // the session follows a peer's new address (NAT rebinding): say so, once a second at most
    const std::uint64_t changes = p->session().stats().address_changes;
    if (changes != p->address_changes_logged) {
      spdlog::info("tunnel to {}: now at {} (its address changed {} time{}: NAT rebinding or roaming)",
                   p->session().peer().name, Peer::address_text(p->session()), changes - p->address_changes_logged,
                   changes - p->address_changes_logged == 1 ? "" : "s");
      p->address_changes_logged = changes;
    }
  }
  for (auto& [address, usage] : clients_) usage.memory_bytes = 0;
  for (auto& p : peers_) sweep_relays(p->relays, connection(p->index));
  sweep_udp(t);
  if (classifier_->bulk_after_bytes() > 0) {
    for (auto& p : peers_) decay_to_bulk(*p);
  }
  log_held_back();
  if (++ticks_ % kCacheSaveEverySeconds == 0) {
    if (auto err = save_cache()) spdlog::warn("temporal cache {}: {}", config_.cache_file, *err);
  }
  if (on_tick_) on_tick_();
  if (draining_) drain_tick();
  tick_.expires_after(std::chrono::seconds(1));
  tick_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) every_second();
  });
}

void Gateway::count_classification(const Classifier::Decision& d) {
  ++counters_.classified_by_stage[std::string(to_string(d.stage))];
  if (d.application.empty()) return;
  auto it = counters_.by_application.find(std::string(d.application));
  if (it == counters_.by_application.end() && counters_.by_application.size() >= kMaxApplicationLabels) {
    it = counters_.by_application.try_emplace("other").first;
  } else if (it == counters_.by_application.end()) {
    it = counters_.by_application.try_emplace(std::string(d.application)).first;
  }
  ++it->second;
}

// Once a second, not per packet: a stream may pass the threshold by a
// second's worth of data before it falls.
void Gateway::decay_to_bulk(Peer& peer) {
  tunnel::Connection* c = connection(peer.index);
  for (auto& [id, relay] : peer.streams) {  // relays with a stream (not those waiting for the tunnel)
    if (relay->class_final || relay->content_class() == ContentClass::bulk) continue;
    const RelayCounters& n = relay->counters();
    if (n.bytes_to_server + n.bytes_to_client < classifier_->bulk_after_bytes()) continue;
    if (c) c->set_stream_class(id, ContentClass::bulk, now());
    spdlog::debug("stream {} to {} is bulk after {} bytes (was {})", id, to_string(relay->destination()),
                  n.bytes_to_server + n.bytes_to_client, egw::to_string(relay->content_class()));
    relay->set_content_class(ContentClass::bulk);
    ++counters_.decayed_to_bulk;
  }
}

std::optional<std::string> Gateway::save_cache() {
  if (config_.cache_file.empty()) return std::nullopt;
  return save_path_cache(config_.cache_file, cache_, now(), std::chrono::system_clock::now());
}

void Gateway::reload(const config::ReloadPlan& plan) {
  for (const auto& w : plan.applied.warnings) spdlog::warn("{}", w);
  if (!plan.restart_needed.empty()) {
    std::string keys;
    for (const auto& k : plan.restart_needed) keys += (keys.empty() ? "" : ", ") + k;
    spdlog::warn("reload {}: restart needed for: {}; applied the rest", config_.path, keys);
  }
  // plan.applied keeps the running peers' order: index i is still peers_[i].
  config_ = plan.applied;
  // The learned cache survives a reload unless its size changed.
  auto learned = classifier_->cache();
  if (learned->capacity() != config_.reloadable.classify.learned_cache_entries) learned = nullptr;
  classifier_ = std::make_unique<Classifier>(classify_config(config_), nullptr, learned);
  for (auto& p : peers_) {
    p->policy = policy_of(p->index);
    p->session().set_scheduler_config(config_.reloadable.scheduler);
  }
  spdlog::set_level(spdlog::level::from_str(config_.reloadable.log_level));
  ++counters_.reloads;
  spdlog::info("reloaded {}", config_.path);
}

void Gateway::count_reload_failure() { ++counters_.reload_failures; }

void Gateway::drain(std::function<void()> done) {
  draining_ = true;
  drained_ = std::move(done);
  drain_deadline_ = now() + ms(config_.reloadable.limits.drain_timeout_ms);
  if (acceptor_) {
    boost::system::error_code ec;
    acceptor_->close(ec);
  }
  std::size_t open = 0;
  for (auto& p : peers_) open += p->relays.size();
  spdlog::info("draining: {} connections open, up to {} ms", open, config_.reloadable.limits.drain_timeout_ms);
  drain_tick();
}

void Gateway::drain_tick() {
  if (!drained_) return;
  std::size_t open = 0;
  for (auto& p : peers_) open += p->relays.size();
  if (open > 0 && now() < *drain_deadline_) return;
  if (open > 0) {
    spdlog::warn("drain timeout: resetting {} connections", open);
    for (auto& p : peers_) {
      std::vector<std::shared_ptr<Relay>> all;
      for (auto& [r, relay] : p->relays) all.push_back(relay);
      for (auto& relay : all) relay->abort(tunnel::kErrorGatewayShutdown);
    }
  }
  auto done = std::move(drained_);
  drained_ = nullptr;
  // Let the last resets and FINs leave before the owner stops the loop.
  auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(200));
  timer->async_wait([timer, done](const boost::system::error_code&) { done(); });
}

// ------------------------------------------------------------ reporting

}  // namespace egw::proxy
