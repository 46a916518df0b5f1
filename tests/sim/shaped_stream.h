// ShapedStream: one client-to-server stream whose writer and reader follow a
// schedule, for the real-traffic scenarios (application-limited senders,
// slow readers, idle and keep-alive streams).
//
//   client (writer)  --- stream, content bytes (stream_content.h) --->  server (reader)
//
//  - writer: `write_chunk_bytes` every `write_period` until `total_bytes`
//    (write_chunk_bytes 0: everything at once, as fast as the stream takes
//    it); total_bytes 0: an idle stream, opened and never written (a
//    keep-alive connection, an idle HTTP/2 client); `finish` sends FIN after
//    the last byte;
//  - reader: `read_chunk_bytes` every `read_period` (0: everything as soon as
//    it is readable). A slow reader fills the receive window and so limits
//    the sender by flow control.
// The reader checks every byte against the stream's content.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tests/sim/stream_content.h"
#include "tests/sim/tunnel_host.h"

namespace egw::sim {

struct ShapedStreamConfig {
  ByteCount total_bytes = 0;
  ByteCount write_chunk_bytes = 0;
  Duration write_period = ms(100);
  ByteCount read_chunk_bytes = 0;
  Duration read_period = ms(10);
  bool finish = true;
  std::uint16_t port = 7001;
  ContentClass content_class = ContentClass::bulk;
};

class ShapedStream {
 public:
  ShapedStream(EventLoop& loop, const ShapedStreamConfig& config, TunnelHost& client,
               TunnelHost& server);
  ~ShapedStream();
  ShapedStream(const ShapedStream&) = delete;
  ShapedStream& operator=(const ShapedStream&) = delete;

  bool start();
  void start_at(Instant when);

  std::optional<StreamId> stream_id() const { return id_; }
  std::optional<Instant> started_at() const { return started_at_; }
  std::optional<Instant> completed_at() const { return completed_at_; }  // FIN read
  bool complete() const { return completed_at_.has_value(); }
  ByteCount bytes_written() const { return written_; }
  ByteCount bytes_read() const { return read_; }
  std::uint64_t mismatches() const { return mismatches_; }
  bool reset() const { return reset_; }

 private:
  struct End : StreamHandler {
    End(ShapedStream& s, bool is_server) : stream(s), server(is_server) {}
    void on_opened(TunnelHost&, const tunnel::StreamOpened&) override { if (server) stream.on_readable(); }
    void on_readable(TunnelHost&, StreamId) override { if (server) stream.on_readable(); }
    void on_writable(TunnelHost&, StreamId) override { if (!server) stream.pump_writer(); }
    void on_reset(TunnelHost&, StreamId, std::uint64_t) override { stream.reset_ = true; }
    ShapedStream& stream;
    bool server;
  };

  void on_write_tick();
  void on_read_tick();
  void on_readable();
  void pump_writer();                 // writes up to allowance_
  void read(ByteCount budget);        // reads up to budget (0 = all)

  EventLoop& loop_;
  ShapedStreamConfig config_;
  TunnelHost& client_;
  TunnelHost& server_;
  End client_end_{*this, false};
  End server_end_{*this, true};
  std::optional<StreamId> id_;
  std::optional<Instant> started_at_;
  std::optional<Instant> completed_at_;
  ByteCount allowance_ = 0;  // bytes the schedule has released so far
  ByteCount written_ = 0;
  bool fin_sent_ = false;
  ByteCount read_ = 0;
  bool fin_read_ = false;
  std::uint64_t mismatches_ = 0;
  bool reset_ = false;
  std::vector<std::byte> buffer_ = std::vector<std::byte>(64 * 1024);
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace egw::sim
