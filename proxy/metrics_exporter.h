// Prometheus metrics of the running gateway, served at http://LISTEN/metrics
// by a small Boost.Asio HTTP server on the exporter's own thread: one
// request per connection, every client asynchronous and bounded (a request
// timeout, at most 32 connections: the oldest makes room), so idle
// connections hold no worker and cannot stall a scrape.
//
// No registry of live counters: the gateway publishes a GatewaySnapshot (on
// its I/O thread, e.g. every second) and each scrape renders the latest one.
// The snapshot's monotonic values become counters, its current values gauges,
// so there is one source of truth and no double bookkeeping.
#pragma once

#include <memory>
#include <string>

#include "proxy/gateway_snapshot.h"

namespace egw::proxy {

// Where the exporter listens.
struct MetricsListenAddress {
  std::string host;  // "127.0.0.1", "[::1]"
  bool v6 = false;
  int port = 0;
};

class MetricsExporter {
 public:
  // Serves Prometheus text at http://LISTEN/metrics; LISTEN is "IPv4:PORT" or
  // "[IPv6]:PORT", port 0 picks a free one. Throws std::runtime_error (one
  // line, naming the address) if LISTEN is malformed or cannot be bound.
  explicit MetricsExporter(const std::string& listen);
  // Closes every connection and joins the server's thread (milliseconds).
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
  class Server;

  std::shared_ptr<Collector> collector_;
  // After collector_: stopped (its thread joined) before the collector goes.
  std::unique_ptr<Server> server_;
  MetricsListenAddress bound_;  // port 0 resolved
};

// The exporter's metric families as Prometheus text (tests, `status --metrics`).
std::string render_prometheus(const GatewaySnapshot& snapshot);

}  // namespace egw::proxy
