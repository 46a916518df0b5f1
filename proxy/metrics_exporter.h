// Prometheus metrics of the running gateway, served at http://LISTEN/metrics
// by prometheus-cpp's pull Exposer (civetweb, its own threads).
//
// No registry of live counters: the gateway publishes a GatewaySnapshot (on
// its I/O thread, e.g. every second) and each scrape renders the latest one.
// The snapshot's monotonic values become counters, its current values gauges,
// so there is one source of truth and no double bookkeeping.
#pragma once

#include <memory>
#include <string>

#include "proxy/gateway_snapshot.h"

namespace prometheus {
class Exposer;
}

namespace egw::proxy {

// Where the exporter listens.
struct MetricsListenAddress {
  std::string host;  // as civetweb wants it: "127.0.0.1", "[::1]"
  bool v6 = false;
  int port = 0;
};

class MetricsExporter {
 public:
  // Serves Prometheus text at http://LISTEN/metrics; LISTEN is "IPv4:PORT" or
  // "[IPv6]:PORT", port 0 picks a free one. Throws std::runtime_error (one
  // line, naming the address) if LISTEN is malformed or cannot be bound.
  explicit MetricsExporter(const std::string& listen);
  // Stops civetweb and joins its threads, in milliseconds (it knocks at
  // civetweb's listener, which otherwise notices a stop only when its 2 s
  // poll() ends). Not for the I/O thread mid-run.
  ~MetricsExporter();
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  // Scrapes read the latest snapshot; before the first, /metrics is empty.
  // Cheap on the calling thread: swaps a pointer under a mutex.
  void publish(GatewaySnapshot snapshot);

  // The bound "address:port" (port 0 resolved to the chosen port).
  std::string listen_address() const { return bound_.host + ":" + std::to_string(bound_.port); }

 private:
  class Collector;

  std::shared_ptr<Collector> collector_;
  // After collector_: stopped (its threads joined) before the collector goes.
  std::unique_ptr<prometheus::Exposer> exposer_;
  MetricsListenAddress bound_;  // port 0 resolved
};

// The exporter's metric families as Prometheus text (tests, `status --metrics`).
std::string render_prometheus(const GatewaySnapshot& snapshot);

}  // namespace egw::proxy
