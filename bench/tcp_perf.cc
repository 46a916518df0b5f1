// tcp_perf: a small TCP load tool for bench/secure_tunnel (a benchmark, not a
// test). Same command line and JSON output as tunnel_perf, so the harness
// treats kernel TCP (plain, inside wireguard-go's TUN, through kcptun) and our
// tunnel alike.
//
//   tcp_perf serve --listen ADDR:PORT [--cc NAME]
//       Sinks bulk connections and echoes request/response connections, one
//       thread per connection, until SIGTERM or SIGINT.
//   tcp_perf run --connect ADDR:PORT --mode bulk|rr --streams N --seconds S
//                [--request-bytes 64] [--response-bytes 64] [--cc NAME]
//   tcp_perf run --connect ADDR:PORT --mode ttfb --connections N [--seconds S] ...
//       Prints one JSON line on stdout:
//       bulk: {"mode":"bulk","streams":N,"bytes":B,"seconds":T,"mbit_per_s":X}
//       rr:   {"mode":"rr","requests":R,"seconds":T,"p50_us":A,"p99_us":B}
//       ttfb: {"mode":"ttfb","connections":N,"seconds":T,"p50_us":..,"p90_us":..,"p99_us":..,
//              "connect_p50_us":..,"connect_p90_us":..}
//
// Wire protocol (ours alone; it only needs an in-order byte stream, so it does
// not depend on a proxy in the path, such as kcptun, forwarding a half-close):
//   hello, client -> server: 'B' or 'R', request bytes (u32 BE), response bytes (u32 BE)
//   bulk: frames [u32 BE length][length bytes of pattern]; a frame of length 0
//         ends the stream and the server answers with the u64 BE count of payload
//         bytes it read on that connection. B = the sum of those counts (bytes
//         *received by the server*), T = from the first write until the last
//         count arrived (so data still queued at the deadline is timed too).
//   rr:   the client writes request-bytes, the server reads exactly that many and
//         writes response-bytes back; one outstanding request per connection
//         (ping-pong), TCP_NODELAY on both ends. p50/p99 over every request.
//   ttfb: time to first byte of a new connection, N connections one after the
//         other (until N or --seconds): from socket() until the whole response
//         arrived, connect() + one write (hello and request together, as a
//         client-first protocol sends its request) + the response; the rr
//         server answers. connect_* = until connect() returned (the handshake,
//         with whoever answers the SYN).
//
// --cc NAME sets TCP_CONGESTION on every socket (the listener passes it on to
// accepted sockets): in a child network namespace only reno and bbr can be the
// default, so the harness asks for cubic explicitly.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "socket_address.h"

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "tcp_perf: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "tcp_perf: %s\n"
               "usage: tcp_perf serve --listen ADDR:PORT [--cc NAME]\n"
               "       tcp_perf run --connect ADDR:PORT --mode bulk|rr --streams N --seconds S\n"
               "                    [--request-bytes 64] [--response-bytes 64] [--cc NAME]\n"
               "       tcp_perf run --connect ADDR:PORT --mode ttfb --connections N [--seconds S] ...\n",
               msg);
  std::exit(2);
}

sockaddr_storage parse_addr(const std::string& s, socklen_t* len) {
  std::string error;
  const auto addr = egw::bench::parse_socket_address(s, len, &error);
  if (!addr) {
    std::fprintf(stderr, "tcp_perf: %s\n", error.c_str());
    std::exit(2);
  }
  return *addr;
}

void set_cc(int fd, const std::string& cc) {
  if (cc.empty()) return;
  if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc.data(), static_cast<socklen_t>(cc.size())) != 0)
    die(("TCP_CONGESTION " + cc).c_str());
}

void set_nodelay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) die("TCP_NODELAY");
}

// Both return false on EOF or error (errno set; 0 on EOF).
bool read_exact(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = 0;
      return false;
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool write_all(int fd, const void* buf, size_t n) {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void put_u32(unsigned char* p, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<unsigned char>(v);
}
uint32_t get_u32(const unsigned char* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}
void put_u64(unsigned char* p, uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<unsigned char>(v);
}
uint64_t get_u64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
}

constexpr size_t kHello = 9;
constexpr size_t kFrame = 64 * 1024;     // bulk payload per frame
constexpr uint32_t kMaxMessage = 1 << 24;  // rr request/response bound

// ---------------------------------------------------------------- server

void serve_connection(int fd) {
  unsigned char hello[kHello];
  if (!read_exact(fd, hello, sizeof hello)) return (void)::close(fd);
  const uint32_t req = get_u32(hello + 1);
  const uint32_t resp = get_u32(hello + 5);
  if (hello[0] == 'B') {
    std::vector<char> buf(256 * 1024);
    uint64_t count = 0;
    for (;;) {
      unsigned char h[4];
      if (!read_exact(fd, h, 4)) break;
      uint32_t len = get_u32(h);
      if (len == 0) {
        unsigned char c[8];
        put_u64(c, count);
        write_all(fd, c, 8);
        break;
      }
      while (len > 0) {
        ssize_t r = ::read(fd, buf.data(), std::min<size_t>(len, buf.size()));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) goto done;
        len -= static_cast<uint32_t>(r);
        count += static_cast<uint64_t>(r);
      }
    }
  } else if (hello[0] == 'R' && req > 0 && resp > 0 && req <= kMaxMessage && resp <= kMaxMessage) {
    set_nodelay(fd);
    std::vector<char> in(req), out(resp, 'r');
    while (read_exact(fd, in.data(), req) && write_all(fd, out.data(), resp)) {
    }
  }
done:
  ::close(fd);
}

int serve(const std::string& listen_addr, const std::string& cc) {
  socklen_t len = 0;
  sockaddr_storage addr = parse_addr(listen_addr, &len);
  int lfd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0) die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  set_cc(lfd, cc);
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&addr), len) != 0) die(("bind " + listen_addr).c_str());
  if (::listen(lfd, 128) != 0) die("listen");

  // SIGTERM/SIGINT: the main thread waits for them; the acceptor is detached and
  // dies with the process (connections in flight are the client's business).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // inherited by every thread below
  std::thread([lfd] {
    for (;;) {
      int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE) continue;
        die("accept");
      }
      std::thread(serve_connection, fd).detach();
    }
  }).detach();
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}

// ---------------------------------------------------------------- client

struct RunOptions {
  std::string connect;
  std::string mode;
  std::string cc;
  int streams = 1;
  int connections = 200;
  double seconds = 10;
  uint32_t request_bytes = 64;
  uint32_t response_bytes = 64;
};

int dial(const RunOptions& o, char kind) {
  socklen_t len = 0;
  sockaddr_storage addr = parse_addr(o.connect, &len);
  int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  set_cc(fd, o.cc);
  if (kind == 'R') set_nodelay(fd);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) die(("connect " + o.connect).c_str());
  unsigned char hello[kHello];
  hello[0] = static_cast<unsigned char>(kind);
  put_u32(hello + 1, o.request_bytes);
  put_u32(hello + 5, o.response_bytes);
  if (!write_all(fd, hello, sizeof hello)) die("write hello");
  return fd;
}

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
Clock::duration run_length(const RunOptions& o) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
}

int run_bulk(const RunOptions& o) {
  std::vector<int> fds;
  for (int i = 0; i < o.streams; ++i) fds.push_back(dial(o, 'B'));
  std::atomic<uint64_t> total{0};
  std::atomic<bool> failed{false};
  const auto start = Clock::now();
  const auto deadline = start + run_length(o);
  std::vector<std::thread> threads;
  for (int fd : fds) {
    threads.emplace_back([&, fd] {
      std::vector<unsigned char> frame(4 + kFrame);
      put_u32(frame.data(), kFrame);
      for (size_t i = 4; i < frame.size(); ++i) frame[i] = static_cast<unsigned char>(i * 131 + 7);
      // The deadline is checked between frames; a blocked send() only waits for
      // the window to open, so this overshoots by at most one frame's drain.
      while (Clock::now() < deadline) {
        if (!write_all(fd, frame.data(), frame.size())) {
          std::fprintf(stderr, "tcp_perf: bulk write: %s\n", std::strerror(errno));
          failed = true;
          return;
        }
      }
      unsigned char end[4] = {0, 0, 0, 0};
      unsigned char count[8];
      if (!write_all(fd, end, 4) || !read_exact(fd, count, 8)) {
        std::fprintf(stderr, "tcp_perf: bulk end: %s\n", errno ? std::strerror(errno) : "EOF before the count");
        failed = true;
        return;
      }
      total += get_u64(count);
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = secs(Clock::now() - start);
  for (int fd : fds) ::close(fd);
  if (failed) return 1;
  const uint64_t bytes = total.load();
  std::printf("{\"mode\":\"bulk\",\"streams\":%d,\"bytes\":%" PRIu64 ",\"seconds\":%.6f,\"mbit_per_s\":%.3f}\n",
              o.streams, bytes, elapsed, static_cast<double>(bytes) * 8 / elapsed / 1e6);
  return 0;
}

int run_rr(const RunOptions& o) {
  std::vector<int> fds;
  for (int i = 0; i < o.streams; ++i) fds.push_back(dial(o, 'R'));
  std::mutex mu;
  std::vector<double> all_us;
  std::atomic<bool> failed{false};
  const auto start = Clock::now();
  const auto deadline = start + run_length(o);
  std::vector<std::thread> threads;
  for (int fd : fds) {
    threads.emplace_back([&, fd] {
      std::vector<char> req(o.request_bytes, 'q'), resp(o.response_bytes);
      std::vector<double> us;
      us.reserve(1 << 20);
      for (auto now = Clock::now(); now < deadline;) {
        if (!write_all(fd, req.data(), req.size()) || !read_exact(fd, resp.data(), resp.size())) {
          std::fprintf(stderr, "tcp_perf: rr: %s\n", errno ? std::strerror(errno) : "EOF");
          failed = true;
          return;
        }
        const auto after = Clock::now();
        us.push_back(std::chrono::duration<double, std::micro>(after - now).count());
        now = after;
      }
      std::lock_guard lock(mu);
      all_us.insert(all_us.end(), us.begin(), us.end());
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = secs(Clock::now() - start);
  for (int fd : fds) ::close(fd);
  if (failed || all_us.empty()) return 1;
  auto pct = [&](double q) {
    size_t i = std::min(all_us.size() - 1, static_cast<size_t>(q * static_cast<double>(all_us.size())));
    std::nth_element(all_us.begin(), all_us.begin() + static_cast<std::ptrdiff_t>(i), all_us.end());
    return all_us[i];
  };
  const double p50 = pct(0.50);
  const double p99 = pct(0.99);
  std::printf("{\"mode\":\"rr\",\"requests\":%zu,\"seconds\":%.6f,\"p50_us\":%.1f,\"p99_us\":%.1f}\n", all_us.size(),
              elapsed, p50, p99);
  return 0;
}

int run_ttfb(const RunOptions& o) {
  socklen_t len = 0;
  const sockaddr_storage addr = parse_addr(o.connect, &len);
  std::vector<unsigned char> req(kHello + o.request_bytes, 'q');
  req[0] = 'R';
  put_u32(req.data() + 1, o.request_bytes);
  put_u32(req.data() + 5, o.response_bytes);
  std::vector<char> resp(o.response_bytes);
  std::vector<double> ttfb_us, connect_us;
  const auto start = Clock::now();
  const auto deadline = start + run_length(o);
  for (int i = 0; i < o.connections && Clock::now() < deadline; ++i) {
    const auto t0 = Clock::now();
    int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) die("socket");
    set_cc(fd, o.cc);
    set_nodelay(fd);
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0) die(("connect " + o.connect).c_str());
    const auto t1 = Clock::now();
    if (!write_all(fd, req.data(), req.size()) || !read_exact(fd, resp.data(), resp.size())) {
      std::fprintf(stderr, "tcp_perf: ttfb: %s\n", errno ? std::strerror(errno) : "EOF");
      return 1;
    }
    const auto t2 = Clock::now();
    ::close(fd);
    connect_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    ttfb_us.push_back(std::chrono::duration<double, std::micro>(t2 - t0).count());
  }
  const double elapsed = secs(Clock::now() - start);
  if (ttfb_us.empty()) return 1;
  auto pct = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  };
  std::printf("{\"mode\":\"ttfb\",\"connections\":%zu,\"seconds\":%.6f,\"p50_us\":%.1f,\"p90_us\":%.1f,"
              "\"p99_us\":%.1f,\"connect_p50_us\":%.1f,\"connect_p90_us\":%.1f}\n",
              ttfb_us.size(), elapsed, pct(ttfb_us, 0.5), pct(ttfb_us, 0.9), pct(ttfb_us, 0.99),
              pct(connect_us, 0.5), pct(connect_us, 0.9));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("missing command");
  const std::string_view cmd = argv[1];
  std::string listen;
  RunOptions o;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc) usage(("missing value for " + std::string(a)).c_str());
    const char* v = argv[++i];
    auto number = [&](long lo, long hi) {
      char* end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (*v == '\0' || *end != '\0' || n < lo || n > hi) usage(("bad value for " + std::string(a)).c_str());
      return n;
    };
    if (a == "--listen") listen = v;
    else if (a == "--connect") o.connect = v;
    else if (a == "--mode") o.mode = v;
    else if (a == "--cc") o.cc = v;
    else if (a == "--streams") o.streams = static_cast<int>(number(1, 1024));
    else if (a == "--connections") o.connections = static_cast<int>(number(1, 10'000'000));
    else if (a == "--request-bytes") o.request_bytes = static_cast<uint32_t>(number(1, kMaxMessage));
    else if (a == "--response-bytes") o.response_bytes = static_cast<uint32_t>(number(1, kMaxMessage));
    else if (a == "--seconds") {
      char* end = nullptr;
      o.seconds = std::strtod(v, &end);
      if (*end != '\0' || !(o.seconds > 0)) usage("bad value for --seconds");
    } else usage(("unknown option " + std::string(a)).c_str());
  }
  if (cmd == "serve") {
    if (listen.empty()) usage("serve needs --listen ADDR:PORT");
    return serve(listen, o.cc);
  }
  if (cmd == "run") {
    if (o.connect.empty()) usage("run needs --connect ADDR:PORT");
    if (o.mode == "bulk") return run_bulk(o);
    if (o.mode == "rr") return run_rr(o);
    if (o.mode == "ttfb") return run_ttfb(o);
    usage("--mode must be bulk, rr or ttfb");
  }
  usage("command must be serve or run");
}
