// tunnel_perf: the secure tunnel's load tool, stream to stream (no TCP legs),
// with tcp_perf's CLI and JSON so bench/secure_tunnel compares them 1:1.
//
//   tunnel_perf serve --config HUB.yaml [--verify]
//   tunnel_perf run --config BRANCH.yaml --mode bulk|rr --streams N --seconds S
//                   [--request-bytes 64] [--verify]
//
// bulk: the branch writes a pattern on N streams until S seconds passed,
// then FIN; the hub counts (and with --verify checks) every byte, answers
// the count in 8 bytes and FIN. rr: one stream, the branch writes
// request-bytes and waits for as many back (the hub echoes).
// Prints one JSON line (see tcp_perf.cc); exit 1 on any error, with a
// message on stderr (a corrupt byte, a reset, the session going down).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

// <utility> first: Boost 1.74's asio/awaitable.hpp uses std::exchange without it (C++20).
#include <utility>
#include <boost/asio.hpp>

#include "proxy/tunnel_config.h"
#include "proxy/tunnel_socket.h"

namespace {

using namespace egw;
using egw::tunnel::Connection;
using egw::tunnel::session::Session;
using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kBulkPort = 1;
constexpr std::uint16_t kEchoPort = 2;
constexpr std::uint64_t kErrorCorrupt = 99;

// Period 251 (prime, so it never lines up with packet or buffer sizes):
// a lost, duplicated or misplaced run of bytes shows.
std::byte pattern(StreamId id, std::uint64_t offset) {
  return static_cast<std::byte>((offset + id * 7) % 251);
}
// pattern(id, offset...) for `out.size()` bytes, by copying from a table.
void fill_pattern(StreamId id, std::uint64_t offset, std::span<std::byte> out) {
  static const std::array<std::byte, 251 + 65536> table = [] {
    std::array<std::byte, 251 + 65536> t{};
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<std::byte>(i % 251);
    return t;
  }();
  std::memcpy(out.data(), table.data() + (offset + id * 7) % 251, out.size());
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "tunnel_perf: %s\n", what.c_str());
  std::exit(1);
}

struct Options {
  std::string command, config, mode = "bulk";
  int streams = 1;
  double seconds = 10;
  std::size_t request_bytes = 64;
  bool verify = false;
};

// The hub side: sinks bulk streams, echoes rr streams.
class Server final : public proxy::SessionHandler {
 public:
  Server(proxy::TunnelSocket& socket, std::size_t index, bool verify)
      : socket_(socket), index_(index), verify_(verify) {}
  void on_stream_opened(const tunnel::StreamOpened& e, Instant) override {
    State s;
    s.echo = e.destination.port == kEchoPort;
    streams_[e.id] = std::move(s);
  }
  void on_stream_readable(const tunnel::StreamReadable& e, Instant now) override {
    Connection* c = conn();
    auto it = streams_.find(e.id);
    if (!c || it == streams_.end()) return;
    State& s = it->second;
    bool fin = false;
    for (;;) {
      const std::size_t n = c->stream_read(e.id, buffer_, &fin, now);
      if (s.echo && n > 0) {
        s.pending.insert(s.pending.end(), buffer_.begin(), buffer_.begin() + n);
      } else if (verify_) {
        for (std::size_t i = 0; i < n; ++i) {
          if (buffer_[i] != pattern(e.id, s.received + i)) {
            std::fprintf(stderr, "tunnel_perf serve: stream %" PRIu64 " corrupt at %" PRIu64 "\n",
                         e.id, s.received + i);
            c->stream_reset(e.id, kErrorCorrupt, now);
            streams_.erase(it);
            socket_.service(index_);
            return;
          }
        }
      }
      s.received += n;
      if (n == 0 || fin) break;
    }
    if (s.echo) flush_echo(e.id, s, now);
    if (fin && !s.echo) {
      std::array<std::byte, 8> count;
      for (int i = 0; i < 8; ++i) count[i] = static_cast<std::byte>(s.received >> (56 - 8 * i));
      c->stream_write(e.id, count, now);
      c->stream_finish(e.id, now);
    }
    if (fin && s.echo) c->stream_finish(e.id, now);
    socket_.service(index_);
  }
  void on_stream_writable(const tunnel::StreamWritable& e, Instant now) override {
    if (auto it = streams_.find(e.id); it != streams_.end()) flush_echo(e.id, it->second, now);
    socket_.service(index_);
  }
  void on_stream_closed(const tunnel::StreamClosed& e, Instant) override { streams_.erase(e.id); }
  void on_stream_reset(const tunnel::StreamReset& e, Instant) override { streams_.erase(e.id); }
  void on_session_up(Session& s, Instant) override {
    const auto aead = s.aead();
    std::fprintf(stderr, "tunnel_perf serve: session with %s up (%s, %s)\n", s.peer().name.c_str(),
                 s.address().to_string().c_str(),
                 aead ? std::string(tunnel::crypto::aead_name(*aead)).c_str() : "no keys");
  }
  void on_session_down(Session& s, const std::string& reason, Instant) override {
    std::fprintf(stderr, "tunnel_perf serve: session with %s down: %s\n", s.peer().name.c_str(), reason.c_str());
    streams_.clear();
  }

 private:
  struct State {
    bool echo = false;
    std::uint64_t received = 0;
    std::vector<std::byte> pending;
  };
  Connection* conn() { return socket_.endpoint().session(index_).connection(); }
  void flush_echo(StreamId id, State& s, Instant now) {
    if (s.pending.empty()) return;
    const std::size_t w = conn()->stream_write(id, s.pending, now);
    s.pending.erase(s.pending.begin(), s.pending.begin() + static_cast<std::ptrdiff_t>(w));
  }

  proxy::TunnelSocket& socket_;
  std::size_t index_;
  bool verify_;
  std::map<StreamId, State> streams_;
  std::array<std::byte, 65536> buffer_;
};

// The branch side: one run of bulk or rr, then prints the JSON line.
class Client final : public proxy::SessionHandler {
 public:
  Client(boost::asio::io_context& io, proxy::TunnelSocket& socket, const Options& o)
      : io_(io), socket_(socket), o_(o), stop_timer_(io) {}

  void on_session_up(Session& session, Instant now) override {
    if (started_) die("the session restarted during the run");
    started_ = true;
    start_ = Clock::now();
    deadline_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.seconds));
    Connection* c = session.connection();
    const int n = o_.mode == "rr" ? 1 : o_.streams;
    for (int i = 0; i < n; ++i) {
      tunnel::Destination d;
      d.port = o_.mode == "rr" ? kEchoPort : kBulkPort;
      const StreamId id = *c->open_stream(d, ContentClass::bulk, now);
      streams_[id] = State{};
      if (o_.mode == "rr") send_request(id, now);
      else fill(id, now);
    }
    stop_timer_.expires_at(deadline_);
    stop_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) on_deadline();
    });
    socket_.service(0);
  }
  void on_session_down(Session&, const std::string& reason, Instant) override {
    die("session down: " + reason);
  }
  void on_stream_writable(const tunnel::StreamWritable& e, Instant now) override {
    if (o_.mode == "bulk") fill(e.id, now);
    socket_.service(0);
  }
  void on_stream_readable(const tunnel::StreamReadable& e, Instant now) override {
    Connection* c = conn();
    auto it = streams_.find(e.id);
    if (it == streams_.end()) return;
    State& s = it->second;
    bool fin = false;
    for (;;) {
      const std::size_t n = c->stream_read(e.id, buffer_, &fin, now);
      if (o_.mode == "bulk") {
        for (std::size_t i = 0; i < n && s.count_bytes < 8; ++i) {
          s.count = (s.count << 8) | std::to_integer<std::uint64_t>(buffer_[i]);
          ++s.count_bytes;
        }
      } else {
        s.response_received += n;
      }
      if (n == 0 || fin) break;
    }
    if (o_.mode == "rr" && s.response_received >= o_.request_bytes) {
      latencies_us_.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s.sent_at).count());
      s.response_received -= o_.request_bytes;
      if (Clock::now() < deadline_) send_request(e.id, now);
      else finish_rr();
    }
    if (fin && o_.mode == "bulk") {
      if (s.count_bytes < 8) die("stream ended without the server's count");
      total_ += s.count;
      if (++done_ == streams_.size()) finish_bulk();
    }
    socket_.service(0);
  }
  void on_stream_reset(const tunnel::StreamReset& e, Instant) override {
    die("stream " + std::to_string(e.id) + " reset by the hub (code " + std::to_string(e.error_code) +
        (e.error_code == kErrorCorrupt ? ": corrupt data" : "") + ")");
  }

 private:
  struct State {
    std::uint64_t written = 0;
    bool finished = false;
    std::uint64_t count = 0;
    int count_bytes = 0;
    std::size_t response_received = 0;
    Clock::time_point sent_at;
  };
  Connection* conn() { return socket_.endpoint().session(0).connection(); }
  std::string cipher() {
    const auto aead = socket_.endpoint().session(0).aead();
    return aead ? std::string(tunnel::crypto::aead_name(*aead)) : "no keys";
  }
  void fill(StreamId id, Instant now) {
    State& s = streams_[id];
    while (!s.finished && Clock::now() < deadline_) {
      fill_pattern(id, s.written, buffer_);
      const std::size_t w = conn()->stream_write(id, buffer_, now);
      s.written += w;
      if (w < buffer_.size()) return;
    }
  }
  void send_request(StreamId id, Instant now) {
    State& s = streams_[id];
    s.sent_at = Clock::now();
    std::vector<std::byte> request(o_.request_bytes, std::byte{0x5a});
    conn()->stream_write(id, request, now);
  }
  void on_deadline() {
    if (o_.mode == "bulk") {
      for (auto& [id, s] : streams_) {
        if (!s.finished) conn()->stream_finish(id, socket_.now());
        s.finished = true;
      }
      socket_.service(0);
    }
  }
  void print_stats() {
    const auto& t = socket_.stats();
    const auto c = conn()->stats();
    std::fprintf(stderr,
                 "tunnel_perf: sent %" PRIu64 " datagrams (%" PRIu64 " send errors), received %" PRIu64
                 "; lost %" PRIu64 " packets in %" PRIu64 " loss rounds; cwnd %" PRIu64 " B, srtt %lld us; datagram %" PRIu64 " B; %s\n",
                 t.datagrams_sent, t.send_errors, t.datagrams_received, c.ensemble.packets_lost,
                 c.ensemble.loss_rounds, c.ensemble.cwnd_bytes, static_cast<long long>(c.ensemble.srtt.count()), c.pmtu_bytes,
                 cipher().c_str());
  }
  void finish_bulk() {
    print_stats();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    std::printf("{\"mode\":\"bulk\",\"streams\":%d,\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"mbit_per_s\":%.3f}\n",
                o_.streams, total_, elapsed, static_cast<double>(total_) * 8 / elapsed / 1e6);
    std::fflush(stdout);
    io_.stop();
  }
  void finish_rr() {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    std::sort(latencies_us_.begin(), latencies_us_.end());
    auto pct = [&](double p) {
      return latencies_us_.empty() ? 0.0 : latencies_us_[std::min(latencies_us_.size() - 1, static_cast<std::size_t>(p * latencies_us_.size()))];
    };
    std::printf("{\"mode\":\"rr\",\"requests\":%zu,\"seconds\":%.6f,\"p50_us\":%.1f,\"p99_us\":%.1f}\n",
                latencies_us_.size(), elapsed, pct(0.5), pct(0.99));
    std::fflush(stdout);
    io_.stop();
  }

  boost::asio::io_context& io_;
  proxy::TunnelSocket& socket_;
  Options o_;
  boost::asio::steady_timer stop_timer_;
  bool started_ = false;
  Clock::time_point start_, deadline_;
  std::map<StreamId, State> streams_;
  std::size_t done_ = 0;
  std::uint64_t total_ = 0;
  std::vector<double> latencies_us_;
  std::array<std::byte, 16384> buffer_;
};

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) die("usage: tunnel_perf serve|run --config FILE [--mode bulk|rr --streams N --seconds S --request-bytes B --verify]");
  o.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value for " + a);
      return argv[++i];
    };
    if (a == "--config") o.config = value();
    else if (a == "--mode") o.mode = value();
    else if (a == "--streams") o.streams = std::stoi(value());
    else if (a == "--seconds") o.seconds = std::stod(value());
    else if (a == "--request-bytes" || a == "--response-bytes") o.request_bytes = std::stoul(value());
    else if (a == "--verify") o.verify = true;
    else die("unknown option " + a);
  }
  if (o.config.empty()) die("--config is required");
  if (o.mode != "bulk" && o.mode != "rr") die("--mode is bulk or rr");
  if (o.streams < 1 || o.seconds <= 0 || o.request_bytes == 0) die("bad --streams/--seconds/--request-bytes");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  auto loaded = proxy::load_tunnel_config(o.config);
  if (auto* err = std::get_if<std::string>(&loaded)) die(*err);
  auto& config = std::get<proxy::TunnelConfig>(loaded);
  boost::asio::io_context io;
  proxy::TunnelSocket socket(io, config.endpoint, config.listen, nullptr);
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code&, int) { io.stop(); });
  std::vector<std::unique_ptr<proxy::SessionHandler>> handlers;
  if (o.command == "serve") {
    for (std::size_t i = 0; i < socket.endpoint().session_count(); ++i) {
      handlers.push_back(std::make_unique<Server>(socket, i, o.verify));
      socket.set_handler(i, handlers.back().get());
    }
  } else if (o.command == "run") {
    if (config.is_hub) die("run needs a branch config");
    handlers.push_back(std::make_unique<Client>(io, socket, o));
    socket.set_handler(0, handlers.back().get());
  } else {
    die("unknown command " + o.command);
  }
  socket.start();
  io.run();
  return 0;
}
