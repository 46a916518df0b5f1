// RequestFlow: the WAN lab's request/response flow (bench/lab/webload.py
// `requests`: one HTTP/1.1 connection, a small request every 100 ms) as a
// simulator app. One stream stays open; the client writes request_bytes at
// start + k * interval (at once if the previous answer came later), the
// server answers each complete request with response_bytes; the latency is
// written -> the whole answer read. Content is stream_content.h's, checked
// on both ends. One object plays both ends (both hosts live in one process).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tests/sim/event_loop.h"
#include "tests/sim/tunnel_host.h"

namespace egw::sim {

struct RequestFlowConfig {
  ByteCount request_bytes = 60;    // the lab's GET line and Host header
  ByteCount response_bytes = 300;  // 200 bytes of JSON and the response head
  Duration interval = ms(100);
  ContentClass content_class = ContentClass::script;  // application/json's class
  std::uint16_t port = 5003;
};

class RequestFlow {
 public:
  RequestFlow(const RequestFlowConfig& config, TunnelHost& client, TunnelHost& server);
  RequestFlow(const RequestFlow&) = delete;
  RequestFlow& operator=(const RequestFlow&) = delete;

  // Opens the stream and sends requests from `start` until `stop`.
  void run(EventLoop& loop, Instant start, Instant stop);
  // (written at, latency) per answered request, in order.
  const std::vector<std::pair<Instant, Duration>>& latencies() const { return done_; }
  // Latencies of the requests written in [from, to), sorted.
  std::vector<Duration> latencies_between(Instant from, Instant to) const;
  std::uint64_t mismatches() const { return mismatches_; }

 private:
  struct End : StreamHandler {
    End(RequestFlow& f, bool is_server) : flow(f), server(is_server) {}
    void on_opened(TunnelHost& h, const tunnel::StreamOpened&) override { flow.on_readable(h, server); }
    void on_readable(TunnelHost& h, StreamId) override { flow.on_readable(h, server); }
    RequestFlow& flow;
    bool server;
  };
  void on_readable(TunnelHost& host, bool server);
  void send_request();
  void schedule_next();
  // Writes `bytes` content bytes of the stream's next offset on one side.
  void write(TunnelHost& host, std::uint64_t& offset, ByteCount bytes);

  RequestFlowConfig config_;
  TunnelHost& client_;
  TunnelHost& server_;
  End client_end_{*this, false};
  End server_end_{*this, true};
  EventLoop* loop_ = nullptr;
  std::optional<StreamId> id_;
  Instant start_{};
  Instant stop_{};
  std::uint64_t sent_requests_ = 0;
  std::optional<Instant> outstanding_;  // the request in flight, written at
  std::uint64_t client_written_ = 0, client_read_ = 0, server_written_ = 0, server_read_ = 0;
  std::vector<std::pair<Instant, Duration>> done_;
  std::vector<std::byte> scratch_ = std::vector<std::byte>(16 * 1024);
  std::uint64_t mismatches_ = 0;
};

}  // namespace egw::sim
