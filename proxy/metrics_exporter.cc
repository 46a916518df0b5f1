#include "proxy/metrics_exporter.h"

#include <limits>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CivetServer.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "common/build_info.h"

namespace egw::proxy {
namespace {

namespace pm = prometheus;
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
    {"egw_ensemble_timeouts_total",
     "Retransmission timeouts: everything in flight declared lost, the window back to one packet.",
     kCounter, [](const EnsembleSnapshot& e) { return double(e.rtos); }},
    {"egw_ensemble_retransmitted_bytes_total", "Stream bytes sent again after a loss.", kCounter,
     [](const EnsembleSnapshot& e) { return double(e.stream_bytes_retransmitted); }},
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
    {"egw_cache_hits_total", "Ensembles resumed from the temporal cache.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.cache_hits); }},
    {"egw_cache_misses_total", "Ensembles that started from slow start.", kCounter,
     [](const GatewaySnapshot& g) { return double(g.cache_misses); }},
    {"egw_cache_entries", "Paths held in the temporal cache.", kGauge,
     [](const GatewaySnapshot& g) { return double(g.cache_entries); }},
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
    {"egw_destinations_refused_total", "Destinations the hub refused, by reason.",
     &GatewaySnapshot::destinations_refused},
    {"egw_datagrams_dropped_total", "Tunnel datagrams dropped, by reason.",
     &GatewaySnapshot::datagrams_dropped},
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
  for (const auto& m : kEnsembleMetrics) {
    auto& family = add_family(families, m.name, m.help, m.type);
    for (const auto& e : s.ensembles) add_sample(family, m.value(e), {{"peer", e.peer}, {"key", e.key}});
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

// civetweb's listener looks at its stop flag only when its poll() returns,
// at the latest every 2 s (SOCKET_TIMEOUT_QUANTUM, fixed at build time); a
// connection ends that poll at once. So, until `stopped`, one non-blocking
// connection every 10 ms: stopping takes milliseconds instead of up to 2 s
// (a SIGTERM that exits at once, restarts that do not wait).
void knock_until(const ListenAddress& address, const std::atomic<bool>& stopped) {
  sockaddr_storage to{};
  socklen_t length = 0;
  const std::string host = address.v6 ? address.host.substr(1, address.host.size() - 2) : address.host;
  if (address.v6) {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&to);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<std::uint16_t>(address.port));
    inet_pton(AF_INET6, host.c_str(), &a6->sin6_addr);
    length = sizeof *a6;
  } else {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&to);
    a4->sin_family = AF_INET;
    a4->sin_port = htons(static_cast<std::uint16_t>(address.port));
    inet_pton(AF_INET, host.c_str(), &a4->sin_addr);
    length = sizeof *a4;
  }
  while (!stopped.load()) {
    const int fd = ::socket(to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
      (void)::connect(fd, reinterpret_cast<const sockaddr*>(&to), length);
      ::close(fd);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// civetweb reports why it could not start ("cannot bind to 127.0.0.1:9470:
// 98 (Address already in use)") only to its log callback, on the thread that
// starts it; the exception it throws just says "null context". The first
// message wins: the next is the generic "Failed to setup server ports".
thread_local std::string* startup_error = nullptr;

int capture_startup_error(const mg_connection*, const char* message) {
  if (startup_error == nullptr) return 0;  // a worker's message: civetweb's default handling
  if (startup_error->empty()) *startup_error = message;
  return 1;
}

constexpr unsigned kCivetwebFeatureIpv6 = 8;  // mg_check_feature()

}  // namespace

class MetricsExporter::Collector final : public pm::Collectable {
 public:
  std::vector<pm::MetricFamily> Collect() const override {
    std::shared_ptr<const GatewaySnapshot> latest;
    {
      std::lock_guard lock(mutex_);
      latest = latest_;
    }
    if (!latest) return {};
    return metric_families(*latest);
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

MetricsExporter::MetricsExporter(const std::string& listen) : collector_(std::make_shared<Collector>()) {
  const auto address = parse_listen(listen);
  if (!address) {
    throw std::runtime_error("metrics listen address \"" + listen +
                             "\" is not IPv4:PORT or [IPv6]:PORT (e.g. 127.0.0.1:9470, [::1]:9470)");
  }
  if (address->v6 && !mg_check_feature(kCivetwebFeatureIpv6)) {
    throw std::runtime_error("metrics listen address " + listen +
                             ": the installed civetweb (prometheus-cpp's HTTP server) has no IPv6 "
                             "support; use an IPv4 address");
  }
  // Two threads: a stalled client does not hold up a scrape for request_timeout_ms.
  const std::vector<std::string> options = {
      "listening_ports", address->host + ":" + std::to_string(address->port),
      "num_threads", "2",
      "request_timeout_ms", "5000",
  };
  CivetCallbacks callbacks;
  callbacks.log_message = capture_startup_error;
  std::string error;
  startup_error = &error;
  try {
    exposer_ = std::make_unique<pm::Exposer>(options, &callbacks);
  } catch (const std::exception& e) {
    startup_error = nullptr;
    throw std::runtime_error("cannot serve metrics on " + listen + ": " + (error.empty() ? e.what() : error));
  }
  startup_error = nullptr;
  exposer_->RegisterCollectable(collector_);
  const auto ports = exposer_->GetListeningPorts();
  bound_ = *address;
  if (!ports.empty()) bound_.port = ports.front();
}

MetricsExporter::~MetricsExporter() {
  std::atomic<bool> stopped{false};
  std::thread knocker([&] { knock_until(bound_, stopped); });
  exposer_.reset();
  stopped = true;
  knocker.join();
}

void MetricsExporter::publish(GatewaySnapshot snapshot) {
  collector_->publish(std::make_shared<const GatewaySnapshot>(std::move(snapshot)));
}

std::string render_prometheus(const GatewaySnapshot& snapshot) {
  return pm::TextSerializer().Serialize(metric_families(snapshot));
}

}  // namespace egw::proxy
