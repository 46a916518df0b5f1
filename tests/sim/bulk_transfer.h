// BulkTransfer: one stream that moves N bytes, the E-TCP "FTP" flow and the
// long/short flows of the ACK-clocked-join experiment.
//
// Protocol on the stream (client = the host that opens it):
//   server_to_client: client sends an 8-byte big-endian N and FIN; the server
//                     answers with N content bytes and FIN.
//   client_to_server: client sends N content bytes and FIN; the server
//                     answers with FIN.
// Content bytes follow stream_content.h; the receiver checks every one.
//
// One BulkTransfer object plays both ends (both hosts live in one process):
// it registers itself with the server host via expect_stream().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "tests/sim/stream_content.h"
#include "tests/sim/tunnel_host.h"

namespace egw::sim {

struct BulkConfig {
  enum class Direction { server_to_client, client_to_server };
  ByteCount bytes = 1 << 20;
  Direction direction = Direction::server_to_client;
  ContentClass content_class = ContentClass::bulk;
  std::uint16_t port = 5001;
};

class BulkTransfer {
 public:
  BulkTransfer(const BulkConfig& config, TunnelHost& client, TunnelHost& server);
  BulkTransfer(const BulkTransfer&) = delete;
  BulkTransfer& operator=(const BulkTransfer&) = delete;

  // Opens the stream now (the client host's current time). Returns false if
  // the connection refused the stream.
  bool start();
  // Schedules start() at `when` on `loop`.
  void start_at(EventLoop& loop, Instant when);

  bool started() const { return started_at_.has_value(); }
  // Every byte and the FIN arrived at the receiver.
  bool complete() const { return completed_at_.has_value(); }
  // Both ends saw StreamClosed (all data acknowledged in both directions).
  bool closed() const { return client_closed_ && server_closed_; }
  bool reset() const { return reset_; }
  std::optional<Instant> started_at() const { return started_at_; }
  std::optional<Instant> completed_at() const { return completed_at_; }
  std::optional<Duration> completion_time() const;
  ByteCount bytes_delivered() const { return reader_ ? reader_->bytes() : 0; }
  // Content bytes the receiver had read by `t` (inclusive).
  ByteCount bytes_delivered_by(Instant t) const;
  // Content bytes that differ from what was sent, plus protocol errors
  // (a malformed request, a length other than N).
  std::uint64_t mismatches() const { return (reader_ ? reader_->mismatches() : 0) + request_errors_; }
  std::optional<StreamId> stream_id() const { return id_; }
  const BulkConfig& config() const { return config_; }

 private:
  // The two ends forward to the transfer with their host.
  struct End : StreamHandler {
    End(BulkTransfer& t, bool is_server) : transfer(t), server(is_server) {}
    void on_opened(TunnelHost& h, const tunnel::StreamOpened&) override { transfer.on_readable(h, server); }
    void on_readable(TunnelHost& h, StreamId) override { transfer.on_readable(h, server); }
    void on_writable(TunnelHost& h, StreamId) override { transfer.on_writable(h, server); }
    void on_reset(TunnelHost&, StreamId, std::uint64_t) override { transfer.reset_ = true; }
    void on_closed(TunnelHost&, StreamId) override {
      (server ? transfer.server_closed_ : transfer.client_closed_) = true;
    }
    BulkTransfer& transfer;
    bool server;
  };

  bool sends_from_server() const { return config_.direction == BulkConfig::Direction::server_to_client; }
  void on_readable(TunnelHost& host, bool server);
  void on_writable(TunnelHost& host, bool server);
  void read_request(TunnelHost& host);
  void read_content(TunnelHost& host);
  void record_delivery(Instant now);

  BulkConfig config_;
  TunnelHost& client_;
  TunnelHost& server_;
  End client_end_{*this, false};
  End server_end_{*this, true};
  std::optional<StreamId> id_;
  std::optional<ContentWriter> writer_;
  std::optional<ContentReader> reader_;
  std::array<std::byte, 8> request_{};  // server_to_client: N, big-endian
  std::size_t request_read_ = 0;
  bool request_done_ = false;
  std::uint64_t request_errors_ = 0;
  bool server_fin_sent_ = false;  // client_to_server: the server's empty answer
  std::optional<Instant> started_at_;
  std::optional<Instant> completed_at_;
  // (time, cumulative bytes) at each read that delivered data: one entry per
  // delivery burst, bounded by the packets of the transfer.
  std::vector<std::pair<Instant, ByteCount>> deliveries_;
  std::vector<std::byte> scratch_ = std::vector<std::byte>(64 * 1024);
  bool client_closed_ = false;
  bool server_closed_ = false;
  bool reset_ = false;
};

}  // namespace egw::sim
