#include "proxy/metrics_exporter.h"

#include <limits>

#include <arpa/inet.h>
#include <netinet/in.h>

// <utility> first: Boost 1.74's asio uses std::exchange without it (C++20).
#include <utility>
#include <boost/asio.hpp>

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <charconv>
#include <chrono>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/build_info.h"

namespace egw::proxy {
namespace {

namespace pm = prometheus;
namespace asio = boost::asio;
using Labels = std::vector<pm::ClientMetric::Label>;

void add_sample(pm::MetricFamily& family, double value, Labels labels = {}) {
  pm::ClientMetric& m = family.metric.emplace_back();
  m.label = std::move(labels);
  if (family.type == pm::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
}

pm::MetricFamily& add_family(std::vector<pm::MetricFamily>& families, const char* name,
                             const char* help, pm::MetricType type) {
  return families.emplace_back(pm::MetricFamily{name, help, type, {}});
}

constexpr auto kGauge = pm::MetricType::Gauge;
constexpr auto kCounter = pm::MetricType::Counter;

// One sample per ensemble, labelled {peer, key}.
struct EnsembleMetric {
  const char* name;
  const char* help;
  pm::MetricType type;
  double (*value)(const EnsembleSnapshot&);
};
constexpr EnsembleMetric kEnsembleMetrics[] = {
    {"egw_ensemble_up", "1 while a keyed connection to the peer is live, else 0.", kGauge,
     [](const EnsembleSnapshot& e) { return e.up ? 1.0 : 0.0; }},
    {"egw_ensemble_cwnd_bytes", "Congestion window of the ensemble.", kGauge,
     [](const EnsembleSnapshot& e) { return double(e.cwnd_bytes); }},
    {"egw_ensemble_ssthresh_bytes", "Slow-start threshold of the ensemble.", kGauge,
     [](const EnsembleSnapshot& e) {
       // +Inf while no loss set one (Prometheus has no 'unset').
       return e.ssthresh_bytes >= kNoSsthresh ? std::numeric_limits<double>::infinity() : double(e.ssthresh_bytes);
     }},
    {"egw_ensemble_bytes_in_flight", "Bytes sent and not yet acknowledged or declared lost.", kGauge,
     [](const EnsembleSnapshot& e) { return double(e.bytes_in_flight); }},
    {"egw_ensemble_srtt_seconds", "Smoothed round-trip time.", kGauge,
     [](const EnsembleSnapshot& e) { return e.srtt_seconds; }},
    {"egw_ensemble_min_rtt_seconds", "Minimum round-trip time seen.", kGauge,
     [](const EnsembleSnapshot& e) { return e.min_rtt_seconds; }},
    {"egw_ensemble_pacing_rate_bytes_per_second", "Rate the ensemble's pacer releases packets at; 0: unpaced.",
     kGauge, [](const EnsembleSnapshot& e) { return e.pacing_rate_bytes_per_s; }},
    {"egw_ensemble_bottleneck_bytes_per_second",
     "The model law's estimate of the bottleneck rate (window_law: model); 0 for loss-based laws.", kGauge,
     [](const EnsembleSnapshot& e) { return e.bottleneck_bytes_per_s; }},
    {"egw_ensemble_ack_path_delay_seconds",
     "How long the peer's ACKs wait in a queue on their way back (an upload on a slow uplink), which the model "
     "law's window covers: measured from ACK timestamps, or inferred (ack_path_window); 0 for loss-based laws.",
     kGauge, [](const EnsembleSnapshot& e) { return e.ack_path_delay_seconds; }},
    {"egw_ensemble_packets_sent_total", "Packets sent to the peer.", kCounter,
     [](const EnsembleSnapshot& e) { return double(e.packets_sent); }},
    {"egw_ensemble_packets_lost_total", "Packets declared lost.", kCounter,
     [](const EnsembleSnapshot& e) { return double(e.packets_lost); }},
    {"egw_ensemble_loss_rounds_total", "Loss events that reduced the congestion window.", kCounter,
     [](const EnsembleSnapshot& e) { return double(e.loss_rounds); }},
    {"egw_ensemble_random_loss_rounds_total",
     "Of the loss events, those taken as random (a queue under 3 packets; random_loss: veno): the lighter cut.",
     kCounter, [](const EnsembleSnapshot& e) { return double(e.random_loss_rounds); }},
    {"egw_ensemble_tail_probes_total",
     "Silent tails probed: a packet sent beyond the window after a PTO without any ack, nothing declared lost.",
     kCounter, [](const EnsembleSnapshot& e) { return double(e.tail_probes); }},
    {"egw_ensemble_ack_decimating",
     "1 while this gateway decimates its ACKs to the peer (ensemble.ack_decimation: on, or auto where "
     "max_rate.up is set or its ACKs take a measured share of its busy uplink), else 0.",
     kGauge, [](const EnsembleSnapshot& e) { return e.ack_decimating ? 1.0 : 0.0; }},
    {"egw_ensemble_small_packets_total",
     "Packets of stream data built smaller than the path allows because a call (a realtime member) was "
     "sending on a slow path.",
     kCounter, [](const EnsembleSnapshot& e) { return double(e.small_packets_sent); }},
    {"egw_ensemble_urgent_packets_sent_total",
     "Packets sent on the tunnel's urgent lane (requests on idle streams, ACKs, credit, calls), which the "
     "peer takes ahead of the bulk datagrams queued in its socket.",
     kCounter, [](const EnsembleSnapshot& e) { return double(e.urgent_packets_sent); }},
    {"egw_ensemble_timeouts_total",
     "Retransmission timeouts: everything in flight declared lost, the window back to one packet.",
     kCounter, [](const EnsembleSnapshot& e) { return double(e.rtos); }},
    {"egw_ensemble_retransmitted_bytes_total", "Stream bytes sent again after a loss.", kCounter,
     [](const EnsembleSnapshot& e) { return double(e.stream_bytes_retransmitted); }},
    {"egw_ensemble_thin_stream_copies_total",
     "A thin stream's tail (a request, a response) sent twice on a lossy path (ensemble.thin_stream_copies).",
     kCounter, [](const EnsembleSnapshot& e) { return double(e.thin_stream_copies); }},
    {"egw_ensemble_handshakes_total", "Handshakes completed with the peer.", kCounter,
     [](const EnsembleSnapshot& e) { return double(e.handshakes); }},
    {"egw_ensemble_started_total", "Ensembles started for the key.", kCounter,
     [](const EnsembleSnapshot& e) { return double(e.ensembles_started); }},
    {"egw_ensemble_resumed_total", "Ensembles started from the temporal cache.", kCounter,
     [](const EnsembleSnapshot& e) { return double(e.ensembles_resumed); }},
};

// One unlabelled sample per gateway.
struct GatewayMetric {
  const char* name;
  const char* help;
  pm::MetricType type;
  double (*value)(const GatewaySnapshot&);
};
constexpr GatewayMetric kGatewayMetrics[] = {
    {"egw_connections_open", "Relayed TCP connections open now.", kGauge,
     [](const GatewaySnapshot& g) { return double(g.connections_open); }},
    {"egw_connections_accepted_total",
     "TCP connections accepted from clients (branch) or opened to servers (hub).", kCounter,
     [](const GatewaySnapshot& g) { return double(g.connections_accepted); }},
    {"egw_handshake_initiations_processed_total", "Handshake initiations that cost Diffie-Hellman.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.initiations_processed); }},
    {"egw_cookie_replies_total", "Handshake initiations answered with a cookie instead (under load).", kCounter,
     [](const GatewaySnapshot& g) { return double(g.cookie_replies_sent); }},
    {"egw_handshake_aead_mismatches_total",
     "Handshakes dropped because the two sides' `cipher` settings have no AEAD in common.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.handshake_aead_mismatches); }},
    {"egw_tunnel_send_blocked_total",
     "Times the tunnel socket's send buffer was full: the unsent datagrams waited for room, in order.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.tunnel_send_blocked); }},
    {"egw_cache_hits_total", "Ensembles resumed from the temporal cache.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.cache_hits); }},
    {"egw_cache_misses_total", "Ensembles that started from slow start.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.cache_misses); }},
    {"egw_cache_entries", "Paths held in the temporal cache.", kGauge,
     [](const GatewaySnapshot& g) { return double(g.cache_entries); }},
    {"egw_clients", "Branch: LAN client addresses with a connection open.", kGauge,
     [](const GatewaySnapshot& g) { return double(g.clients); }},
    {"egw_client_connections_max", "Branch: the most connections one LAN client address has open.", kGauge,
     [](const GatewaySnapshot& g) { return double(g.client_connections_max); }},
    {"egw_memory_in_use_bytes", "Relay and tunnel stream buffers in use.", kGauge,
     [](const GatewaySnapshot& g) { return double(g.memory_in_use_bytes); }},
    {"egw_memory_limit_bytes", "The configured limit on those buffers (limits.memory_bytes).", kGauge,
     [](const GatewaySnapshot& g) { return double(g.memory_limit_bytes); }},
    {"egw_config_reloads_total", "Configuration reloads applied.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.config_reloads); }},
    {"egw_config_reload_failures_total", "Configuration reloads rejected (the old one stays).",
     kCounter, [](const GatewaySnapshot& g) { return double(g.config_reload_failures); }},
    {"egw_uptime_seconds", "Time since the gateway started.", kGauge,
     [](const GatewaySnapshot& g) { return g.uptime_seconds; }},
    {"egw_udp_flows_open", "UDP flows carried as tunnel datagrams, open now.", kGauge,
     [](const GatewaySnapshot& g) { return double(g.udp_flows_open); }},
    {"egw_udp_flows_opened_total", "UDP flows opened.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.udp_flows_opened); }},
    {"egw_udp_datagrams_sent_total", "UDP datagrams read from a socket and queued in the tunnel.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.udp_datagrams_sent); }},
    {"egw_udp_datagrams_received_total", "UDP datagrams from the tunnel sent on a socket.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.udp_datagrams_received); }},
};

// Counters by {reason}.
struct ReasonMetric {
  const char* name;
  const char* help;
  std::map<std::string, std::uint64_t> GatewaySnapshot::*counts;
};
constexpr ReasonMetric kReasonMetrics[] = {
    {"egw_connections_refused_total", "Connections reset before any byte moved, by reason.",
     &GatewaySnapshot::connections_refused},
    {"egw_connections_closed_total",
     "Open connections the gateway closed itself, by reason (idle_timeout, half_closed_timeout: nothing in "
     "flight; reclaimed: reset to make room for a lighter client).",
     &GatewaySnapshot::connections_closed},
    {"egw_destinations_refused_total", "Destinations the hub refused, by reason.",
     &GatewaySnapshot::destinations_refused},
    {"egw_datagrams_dropped_total", "Tunnel datagrams dropped, by reason.",
     &GatewaySnapshot::datagrams_dropped},
    {"egw_udp_datagrams_dropped_total",
     "UDP datagrams dropped, by reason (deadline, queue, unknown_flow, too_large, lost, refused, flow_limit, "
     "client_limit, tunnel_down, send_error).",
     &GatewaySnapshot::udp_datagrams_dropped},
    {"egw_udp_flows_closed_total", "UDP flows closed, by reason (idle, peer_closed, refused, tunnel_closed).",
     &GatewaySnapshot::udp_flows_closed},
};

// The stream metrics are per peer: summed over that peer's ensembles, so a
// peer with two keys still yields one series per label set.
struct PeerStreams {
  PerClass<std::uint64_t> open{};
  PerClass<std::uint64_t> bytes{};
  std::uint64_t opened = 0;
};

void add_stream_families(std::vector<pm::MetricFamily>& families, const GatewaySnapshot& s) {
  std::map<std::string, PeerStreams> peers;
  for (const auto& e : s.ensembles) {
    auto& p = peers[e.peer];
    for (int c = 0; c < kContentClassCount; ++c) {
      p.open[c] += e.streams_by_class[c];
      p.bytes[c] += e.bytes_by_class[c];
    }
    p.opened += e.streams_total;
  }
  // References only once all three are in: add_family may reallocate `families`.
  const std::size_t first = families.size();
  add_family(families, "egw_streams_open", "Streams open now, by content class.", kGauge);
  add_family(families, "egw_stream_bytes_total", "Stream bytes carried (both directions), by content class.",
             kCounter);
  add_family(families, "egw_streams_opened_total", "Streams opened.", kCounter);
  auto& open = families[first];
  auto& bytes = families[first + 1];
  auto& opened = families[first + 2];
  for (const auto& [peer, p] : peers) {
    for (int c = 0; c < kContentClassCount; ++c) {
      const std::string cls{to_string(static_cast<ContentClass>(c))};
      add_sample(open, double(p.open[c]), {{"peer", peer}, {"class", cls}});
      add_sample(bytes, double(p.bytes[c]), {{"peer", peer}, {"class", cls}});
    }
    add_sample(opened, double(p.opened), {{"peer", peer}});
  }
}

// Issue 21's classifier: bounded label sets (8 stages; 32 applications and
// "other"; categories are the class label of the stream metrics).
void add_classification_families(std::vector<pm::MetricFamily>& families, const GatewaySnapshot& s) {
  auto& stages = add_family(families, "egw_streams_classified_total",
                            "Streams classified at the branch, by the stage that decided (destination_rule, sni_rule, "
                            "sni_detector, sni_tokens, address_detector, learned, unknown_host, default).",
                            kCounter);
  for (const auto& [stage, count] : s.streams_classified) add_sample(stages, double(count), {{"stage", stage}});
  auto& apps = add_family(families, "egw_streams_by_application_total",
                          "Streams by the application detected (the first 32 names, then other).", kCounter);
  for (const auto& [app, count] : s.streams_by_application) add_sample(apps, double(count), {{"application", app}});
  add_sample(add_family(families, "egw_streams_decayed_total",
                        "Streams that fell to bulk past classify.bulk_after_bytes.", kCounter),
             double(s.streams_decayed_to_bulk));
}

std::vector<pm::MetricFamily> metric_families(const GatewaySnapshot& s) {
  std::vector<pm::MetricFamily> families;
  add_sample(add_family(families, "egw_info", "Always 1; the gateway's role as a label.", kGauge), 1,
             {{"role", s.role}});
  add_sample(add_family(families, "egw_build_info", "Always 1; the version and git commit as labels.", kGauge), 1,
             {{"version", std::string(build_version())}, {"commit", std::string(build_commit())}});
  for (const auto& m : kGatewayMetrics) add_sample(add_family(families, m.name, m.help, m.type), m.value(s));
  for (const auto& m : kReasonMetrics) {
    auto& family = add_family(families, m.name, m.help, kCounter);
    for (const auto& [reason, count] : s.*m.counts) add_sample(family, double(count), {{"reason", reason}});
  }
  add_classification_families(families, s);
  for (const auto& m : kEnsembleMetrics) {
    auto& family = add_family(families, m.name, m.help, m.type);
    for (const auto& e : s.ensembles) add_sample(family, m.value(e), {{"peer", e.peer}, {"key", e.key}});
  }
  auto& cipher = add_family(families, "egw_tunnel_cipher",
                            "Always 1; the data AEAD the peer's current keys use as a label.", kGauge);
  for (const auto& e : s.ensembles) {
    if (!e.cipher.empty()) add_sample(cipher, 1, {{"peer", e.peer}, {"key", e.key}, {"cipher", e.cipher}});
  }
  add_stream_families(families, s);
  return families;
}

using ListenAddress = MetricsListenAddress;

std::optional<ListenAddress> parse_listen(const std::string& listen) {
  ListenAddress a;
  std::string host;
  std::string port;
  if (listen.starts_with('[')) {
    const auto close = listen.find("]:");
    if (close == std::string::npos) return std::nullopt;
    host = listen.substr(1, close - 1);
    port = listen.substr(close + 2);
    a.v6 = true;
  } else {
    const auto colon = listen.find(':');
    if (colon == std::string::npos) return std::nullopt;
    host = listen.substr(0, colon);
    port = listen.substr(colon + 1);
  }
  unsigned char binary[16];
  if (inet_pton(a.v6 ? AF_INET6 : AF_INET, host.c_str(), binary) != 1) return std::nullopt;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
  if (port.empty() || ec != std::errc{} || end != port.data() + port.size() || a.port < 0 ||
      a.port > 65535) {
    return std::nullopt;
  }
  a.host = a.v6 ? "[" + host + "]" : host;
  return a;
}

// The /metrics server's bounds. Every client is asynchronous on the
// exporter's one thread: an idle or slow one holds a socket and a timer,
// never a worker, so N idle connections cannot stall a scrape. Beyond
// kMaxClients the oldest is dropped for the newcomer (a scraper reconnects;
// clients that hold connections open to starve it are what gets dropped).
constexpr std::size_t kMaxClients = 32;
constexpr auto kRequestTimeout = std::chrono::seconds(2);   // the request head, from accept
constexpr auto kResponseTimeout = std::chrono::seconds(5);  // the response taken by the client
constexpr std::size_t kMaxRequestBytes = 8 * 1024;

std::string http_response(const std::string& status, const std::string& type, const std::string& body,
                          bool head_only) {
  std::string out = "HTTP/1.1 " + status + "\r\nContent-Type: " + type +
                    "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

}  // namespace

class MetricsExporter::Collector {
 public:
  std::string render() const {
    std::shared_ptr<const GatewaySnapshot> latest;
    {
      std::lock_guard lock(mutex_);
      latest = latest_;
    }
    return latest ? render_prometheus(*latest) : std::string();
  }

  void publish(std::shared_ptr<const GatewaySnapshot> snapshot) {
    std::lock_guard lock(mutex_);
    latest_.swap(snapshot);
    // The previous snapshot is freed after the unlock, unless a scrape still holds it.
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const GatewaySnapshot> latest_;
};

// A minimal HTTP/1.1 server: one request per connection, answered and closed.
class MetricsExporter::Server {
 public:
  Server(const asio::ip::tcp::endpoint& at, std::shared_ptr<Collector> collector)
      : collector_(std::move(collector)), acceptor_(io_), retry_(io_) {
    acceptor_.open(at.protocol());
    acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    if (at.address().is_v6()) acceptor_.set_option(asio::ip::v6_only(false));  // [::]: both families
    acceptor_.bind(at);
    acceptor_.listen();
    accept_next();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Server() {
    asio::post(io_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      retry_.cancel();
      while (!clients_.empty()) close(clients_.front());
      io_.stop();
    });
    thread_.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  struct Client {
    explicit Client(asio::io_context& io) : socket(io), deadline(io) {}
    asio::ip::tcp::socket socket;
    asio::steady_timer deadline;
    std::string in;
    std::string out;
    std::list<std::shared_ptr<Client>>::iterator at;  // in clients_, oldest first
    bool closed = false;
  };
  using ClientPtr = std::shared_ptr<Client>;

  void accept_next() {
    auto c = std::make_shared<Client>(io_);
    acceptor_.async_accept(c->socket, [this, c](const boost::system::error_code& ec) {
      if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
      if (!ec) {
        serve(c);
        return accept_next();
      }
      // EMFILE and friends: try again shortly, not in a busy loop.
      retry_.expires_after(std::chrono::milliseconds(100));
      retry_.async_wait([this](const boost::system::error_code& e) {
        if (!e && acceptor_.is_open()) accept_next();
      });
    });
  }

  void serve(const ClientPtr& c) {
    if (clients_.size() >= kMaxClients) close(clients_.front());
    c->at = clients_.insert(clients_.end(), c);
    arm(c, kRequestTimeout);
    asio::async_read_until(c->socket, asio::dynamic_buffer(c->in, kMaxRequestBytes), "\r\n\r\n",
                           [this, c](const boost::system::error_code& ec, std::size_t) {
                             if (c->closed) return;
                             if (ec) return close(c);  // EOF, reset, or a head beyond kMaxRequestBytes
                             respond(c);
                           });
  }

  void respond(const ClientPtr& c) {
    const std::string line = c->in.substr(0, c->in.find("\r\n"));
    const auto sp1 = line.find(' ');
    const auto sp2 = line.find(' ', sp1 == std::string::npos ? sp1 : sp1 + 1);
    const std::string method = line.substr(0, sp1);
    const std::string target =
        sp1 == std::string::npos ? "" : line.substr(sp1 + 1, sp2 == std::string::npos ? sp2 : sp2 - sp1 - 1);
    const std::string path = target.substr(0, target.find('?'));
    const bool head = method == "HEAD";
    if (method != "GET" && !head) {
      c->out = http_response("405 Method Not Allowed", "text/plain", "GET /metrics\n", false);
    } else if (path != "/metrics") {
      c->out = http_response("404 Not Found", "text/plain", "GET /metrics\n", head);
    } else {
      c->out = http_response("200 OK", "text/plain; version=0.0.4; charset=utf-8", collector_->render(), head);
    }
    arm(c, kResponseTimeout);
    asio::async_write(c->socket, asio::buffer(c->out), [this, c](const boost::system::error_code& ec, std::size_t) {
      if (c->closed) return;
      if (ec) return close(c);
      // FIN, then wait for the client's: closing with its bytes unread would
      // reset the connection and could discard the response in flight.
      boost::system::error_code ignored;
      c->socket.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
      drain(c);
    });
  }

  void drain(const ClientPtr& c) {
    c->in.resize(512);
    c->socket.async_read_some(asio::buffer(c->in), [this, c](const boost::system::error_code& ec, std::size_t) {
      if (c->closed) return;
      if (ec) return close(c);
      drain(c);
    });
  }

  void arm(const ClientPtr& c, std::chrono::steady_clock::duration timeout) {
    c->deadline.expires_after(timeout);
    c->deadline.async_wait([this, c](const boost::system::error_code& ec) {
      if (!ec && !c->closed) close(c);
    });
  }

  void close(const ClientPtr& c) {
    if (c->closed) return;
    c->closed = true;
    boost::system::error_code ignored;
    c->socket.close(ignored);
    c->deadline.cancel();
    clients_.erase(c->at);
  }

  std::shared_ptr<Collector> collector_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer retry_;
  std::list<ClientPtr> clients_;
  std::thread thread_;
};

MetricsExporter::MetricsExporter(const std::string& listen) : collector_(std::make_shared<Collector>()) {
  const auto address = parse_listen(listen);
  if (!address) {
    throw std::runtime_error("metrics listen address \"" + listen +
                             "\" is not IPv4:PORT or [IPv6]:PORT (e.g. 127.0.0.1:9470, [::1]:9470)");
  }
  const std::string host = address->v6 ? address->host.substr(1, address->host.size() - 2) : address->host;
  const asio::ip::tcp::endpoint at(asio::ip::make_address(host), static_cast<std::uint16_t>(address->port));
  try {
    server_ = std::make_unique<Server>(at, collector_);
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error("cannot serve metrics on " + listen + ": " + e.code().message());
  }
  bound_ = *address;
  bound_.port = server_->port();
}

MetricsExporter::~MetricsExporter() = default;

void MetricsExporter::publish(GatewaySnapshot snapshot) {
  collector_->publish(std::make_shared<const GatewaySnapshot>(std::move(snapshot)));
}

std::string render_prometheus(const GatewaySnapshot& snapshot) {
  return pm::TextSerializer().Serialize(metric_families(snapshot));
}

}  // namespace egw::proxy
