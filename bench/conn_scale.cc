// conn_scale: many concurrent, mostly idle TCP connections for bench/gateway
// (a benchmark, not a test). One thread, epoll, non-blocking sockets.
//
//   conn_scale serve --listen ADDR:PORT
//       Accepts everything and echoes every byte back, until SIGTERM/SIGINT.
//   conn_scale run --connect ADDR:PORT --targets 1000,5000,10000
//                  [--rate 1000] [--in-flight 256] [--interval-min 10] [--interval-max 30]
//                  [--message-bytes 16] [--cc NAME] [--seed N]
//       Opens connections, at most --rate per second and --in-flight
//       handshakes at once, until the first target is reached; prints
//         {"event":"reached","target":T,"open":N,"failed":F,"seconds":S}
//       and waits for a command on stdin (one per line):
//         next     go on to the next target (after the last: reached again)
//         stats    {"event":"stats","open":N,"dead":D,"messages":M,"echoed":E,"bytes_outstanding":B}
//         verify   send one message on every open connection and wait (up to
//                  --verify-timeout s, default 60) for all of them to come back:
//                  {"event":"verified","open":N,"alive":A,"dead":D,"missing":M,"seconds":S}
//         close    close every connection: {"event":"closed","closed":N}
//         burst N  open N more connections within --burst-seconds (default 1),
//                  whatever --rate and --in-flight say; each sends one message
//                  at once and waits for its echo. After --burst-timeout s
//                  (default 10) or when all ended:
//                  {"event":"burst","new":N,"served":S,"refused":R,"eof":E,"hung":H,
//                   "connect_ms":{"p50":..,"p90":..,"p99":..,"max":..},"echo_ms":{...}}
//                  served: echoed right; refused: a reset (or connection refused);
//                  eof: closed without the echo; hung: none of these in time.
//                  connect_ms: connect() to writable; echo_ms: connect() to the echo.
//         quit     (or EOF) exit
//       Meanwhile every open connection sends --message-bytes bytes every
//       uniform(--interval-min, --interval-max) seconds (the first one at a
//       random point of the first interval) and expects them echoed.
//       A connection that sees EOF, an error or a wrong echo is dead (counted,
//       closed). --idle-fraction F: that share of the connections (spread
//       evenly) never sends on its own, only for `verify` (idle for minutes). Raises RLIMIT_NOFILE to its hard limit (root: 1,048,576).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "socket_address.h"

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "conn_scale: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

[[noreturn]] void usage(const char* msg) {
  std::fprintf(stderr,
               "conn_scale: %s\n"
               "usage: conn_scale serve --listen ADDR:PORT\n"
               "       conn_scale run --connect ADDR:PORT --targets N[,N...] [--rate 1000] [--in-flight 256]\n"
               "                      [--interval-min 10] [--interval-max 30] [--message-bytes 16]\n"
               "                      [--verify-timeout 60] [--cc NAME] [--seed N] [--idle-fraction F]\n"
               "                      [--burst-seconds 1] [--burst-timeout 10]\n",
               msg);
  std::exit(2);
}

sockaddr_storage parse_addr(const std::string& s, socklen_t* len) {
  std::string error;
  const auto addr = egw::bench::parse_socket_address(s, len, &error);
  if (!addr) {
    std::fprintf(stderr, "conn_scale: %s\n", error.c_str());
    std::exit(2);
  }
  return *addr;
}

void raise_nofile() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

void emit(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void emit(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vprintf(fmt, ap);
  va_end(ap);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

// ---------------------------------------------------------------- server

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

int serve(const std::string& listen_addr) {
  raise_nofile();
  signal(SIGTERM, on_stop);
  signal(SIGINT, on_stop);
  signal(SIGPIPE, SIG_IGN);
  socklen_t len = 0;
  sockaddr_storage addr = parse_addr(listen_addr, &len);
  int lfd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (lfd < 0) die("socket");
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&addr), len) != 0) die(("bind " + listen_addr).c_str());
  if (::listen(lfd, 4096) != 0) die("listen");
  int ep = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = lfd;
  epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
  // Echo: messages are small and the client waits for each, so a partial
  // write is rare; what the socket does not take is kept per descriptor.
  std::vector<std::string> backlog;
  std::vector<epoll_event> events(1024);
  char buf[16384];
  while (!g_stop) {
    int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 500);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die("epoll_wait");
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == lfd) {
        for (;;) {
          int c = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
          if (c < 0) break;  // EAGAIN, or EMFILE: try again on the next wakeup
          setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          epoll_event cev{};
          cev.events = EPOLLIN;
          cev.data.fd = c;
          epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
        }
        continue;
      }
      if (static_cast<size_t>(fd) >= backlog.size()) backlog.resize(static_cast<size_t>(fd) + 1);
      std::string& out = backlog[static_cast<size_t>(fd)];
      bool dead = false;
      if (events[i].events & EPOLLIN) {
        for (;;) {
          ssize_t r = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
          if (r > 0) {
            out.append(buf, static_cast<size_t>(r));
            continue;
          }
          if (r == 0 || (errno != EAGAIN && errno != EINTR)) dead = true;
          if (r < 0 && errno == EINTR) continue;
          break;
        }
      }
      while (!dead && !out.empty()) {
        ssize_t w = ::send(fd, out.data(), out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w > 0) {
          out.erase(0, static_cast<size_t>(w));
          continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) break;
        dead = true;
      }
      if (dead) {
        ::close(fd);  // also leaves the epoll set
        std::string().swap(out);
        continue;
      }
      epoll_event cev{};
      cev.events = EPOLLIN | (out.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT));
      cev.data.fd = fd;
      epoll_ctl(ep, EPOLL_CTL_MOD, fd, &cev);
    }
  }
  return 0;
}

// ---------------------------------------------------------------- client

struct RunOptions {
  std::string connect;
  std::string cc;
  std::vector<long> targets;
  double rate = 1000;
  int in_flight = 256;
  double interval_min = 10;
  double interval_max = 30;
  int message_bytes = 16;
  double verify_timeout = 60;
  double idle_fraction = 0;
  double burst_seconds = 1;
  double burst_timeout = 10;
  unsigned seed = 1;
};

// What became of a connection opened by `burst`.
enum class Outcome : uint8_t { pending, served, refused, eof };

enum class State : uint8_t { connecting, open, dead };

struct Conn {
  int fd = -1;
  State state = State::connecting;
  bool verify_pending = false;
  uint32_t outstanding = 0;  // bytes sent, not yet echoed
  uint64_t sent_seq = 0;     // bytes ever sent (the echo must match the pattern)
  uint64_t echo_seq = 0;
  bool idle = false;   // sends only for verify
  bool burst = false;  // opened by `burst`: outcome and latencies recorded
  Outcome outcome = Outcome::pending;
  Clock::time_point started{};
  double connect_ms = -1;
  double echo_ms = -1;
};

// "p50":..,"p90":..,"p99":..,"max":.. of the non-negative values.
std::string percentiles(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return x < 0; }), v.end());
  if (v.empty()) return "{}";
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))]; };
  char buf[160];
  std::snprintf(buf, sizeof buf, "{\"p50\":%.2f,\"p90\":%.2f,\"p99\":%.2f,\"max\":%.2f,\"n\":%zu}", at(0.5), at(0.9),
                at(0.99), v.back(), v.size());
  return buf;
}

unsigned char pattern_byte(size_t conn, uint64_t seq) { return static_cast<unsigned char>((conn * 31 + seq * 7) & 0xff); }

class Client {
 public:
  explicit Client(RunOptions o) : o_(std::move(o)), rng_(o_.seed) {
    addr_ = parse_addr(o_.connect, &addr_len_);
    ep_ = epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) die("epoll_create1");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kStdin;
    epoll_ctl(ep_, EPOLL_CTL_ADD, 0, &ev);
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
  }

  int run() {
    start_ = Clock::now();
    size_t target_i = 0;
    long target = o_.targets[0];
    bool announced = false;
    double open_credit = 0;
    auto last_credit = Clock::now();
    std::vector<epoll_event> events(1024);
    while (!quit_) {
      const auto now = Clock::now();
      // Open more while under the target, paced by --rate and --in-flight.
      open_credit = std::min<double>(open_credit + secs(now - last_credit) * o_.rate, o_.rate / 10 + 1);
      last_credit = now;
      while (static_cast<long>(conns_.size()) < target && connecting_ < o_.in_flight && open_credit >= 1) {
        open_one();
        open_credit -= 1;
      }
      if (!announced && static_cast<long>(conns_.size()) >= target && connecting_ == 0) {
        announced = true;
        emit("{\"event\":\"reached\",\"target\":%ld,\"open\":%ld,\"failed\":%" PRIu64 ",\"seconds\":%.3f}", target,
             open_, failed_connects_, secs(Clock::now() - start_));
      }
      if (verifying_) check_verify();
      if (burst_left_ > 0) {
        burst_credit_ = std::min<double>(burst_credit_ + secs(now - burst_last_) * burst_rate_, burst_rate_ / 10 + 1);
        burst_last_ = now;
        while (burst_left_ > 0 && burst_credit_ >= 1) {
          open_one(/*burst=*/true);
          burst_credit_ -= 1;
          if (--burst_left_ == 0) burst_opened_at_ = Clock::now();
        }
      }
      if (bursting_) check_burst();
      fire_timers(now);
      int timeout_ms = 1000;
      if (static_cast<long>(conns_.size()) < target || burst_left_ > 0) timeout_ms = 1;
      if (bursting_) timeout_ms = std::min(timeout_ms, 100);
      if (!timers_.empty()) {
        const auto due = timers_.top().first - Clock::now();
        timeout_ms = std::clamp<int>(static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(due).count()) + 1,
                                     0, timeout_ms);
      }
      int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), timeout_ms);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) die("epoll_wait");
      for (int i = 0; i < n; ++i) {
        if (events[i].data.u64 == kStdin) {
          for (const std::string& cmd : read_commands()) {
          if (cmd.empty()) continue;
          if (cmd == "next") {
            if (target_i + 1 < o_.targets.size()) target = o_.targets[++target_i];
            announced = false;
          } else if (cmd == "stats") {
            print_stats();
          } else if (cmd == "verify") {
            start_verify();
          } else if (cmd == "close") {
            close_all();
          } else if (cmd.rfind("burst ", 0) == 0) {
            start_burst(std::strtol(cmd.c_str() + 6, nullptr, 10));
          } else if (cmd == "quit") {
            quit_ = true;
          } else {
            emit("{\"event\":\"error\",\"unknown_command\":\"%s\"}", cmd.c_str());
          }
          }
          continue;
        }
        on_event(static_cast<size_t>(events[i].data.u64), events[i].events);
      }
    }
    return 0;
  }

 private:
  static constexpr uint64_t kStdin = ~uint64_t{0};

  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }

  void schedule(size_t i, double seconds) {
    timers_.emplace(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)),
                    i);
  }

  void open_one(bool burst = false) {
    const size_t i = conns_.size();
    conns_.emplace_back();
    Conn& c = conns_.back();
    c.burst = burst;
    c.idle = burst || (o_.idle_fraction > 0 &&
                       std::floor(static_cast<double>(i + 1) * o_.idle_fraction) > std::floor(static_cast<double>(i) * o_.idle_fraction));
    c.started = Clock::now();
    c.fd = ::socket(addr_.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c.fd < 0) die("socket (raise the descriptor limit?)");
    if (!o_.cc.empty()) setsockopt(c.fd, IPPROTO_TCP, TCP_CONGESTION, o_.cc.data(), static_cast<socklen_t>(o_.cc.size()));
    int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int r = ::connect(c.fd, reinterpret_cast<sockaddr*>(&addr_), addr_len_);
    if (r != 0 && errno != EINPROGRESS) {
      if (c.burst) c.outcome = errno == ECONNREFUSED || errno == ECONNRESET ? Outcome::refused : Outcome::eof;
      ++failed_connects_;
      ::close(c.fd);
      c.fd = -1;
      c.state = State::dead;
      ++dead_;
      return;
    }
    ++connecting_;
    epoll_event ev{};
    ev.events = EPOLLOUT | EPOLLIN;
    ev.data.u64 = i;
    epoll_ctl(ep_, EPOLL_CTL_ADD, c.fd, &ev);
  }

  void kill(size_t i, int err = 0) {
    Conn& c = conns_[i];
    if (c.state == State::dead) return;
    if (c.burst && c.outcome == Outcome::pending) {
      c.outcome = err == ECONNRESET || err == ECONNREFUSED || err == EPIPE ? Outcome::refused : Outcome::eof;
    }
    if (c.state == State::connecting && c.fd >= 0) --connecting_;
    if (c.state == State::open) --open_;
    c.state = State::dead;
    ++dead_;
    if (c.fd >= 0) ::close(c.fd);
    c.fd = -1;
  }

  void on_event(size_t i, uint32_t ev) {
    Conn& c = conns_[i];
    if (c.state == State::dead) return;
    if (c.state == State::connecting) {
      int err = 0;
      socklen_t l = sizeof err;
      getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &l);
      if (err != 0) {
        ++failed_connects_;
        kill(i, err);
        return;
      }
      if (!(ev & EPOLLOUT)) return;
      c.state = State::open;
      --connecting_;
      ++open_;
      epoll_event e{};
      e.events = EPOLLIN;
      e.data.u64 = i;
      epoll_ctl(ep_, EPOLL_CTL_MOD, c.fd, &e);
      if (c.burst) {
        c.connect_ms = secs(Clock::now() - c.started) * 1e3;
        send_message(i);
      } else if (!c.idle) {
        schedule(i, uniform(0, o_.interval_max));
      }
      return;
    }
    // Echoes: check them against what was sent.
    unsigned char buf[4096];
    for (;;) {
      ssize_t r = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (r > 0) {
        for (ssize_t k = 0; k < r; ++k) {
          if (c.outstanding == 0 || buf[k] != pattern_byte(i, c.echo_seq)) {
            ++bad_echo_;
            kill(i);
            return;
          }
          ++c.echo_seq;
          --c.outstanding;
        }
        if (c.outstanding == 0) {
          ++echoed_;
          if (c.burst && c.outcome == Outcome::pending) {
            c.outcome = Outcome::served;
            c.echo_ms = secs(Clock::now() - c.started) * 1e3;
          }
        }
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && errno == EAGAIN) break;
      kill(i, r < 0 ? errno : 0);  // EOF or error: the connection died
      return;
    }
  }

  bool send_message(size_t i) {
    Conn& c = conns_[i];
    std::vector<unsigned char> msg(static_cast<size_t>(o_.message_bytes));
    for (size_t k = 0; k < msg.size(); ++k) msg[k] = pattern_byte(i, c.sent_seq + k);
    ssize_t w = ::send(c.fd, msg.data(), msg.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w != static_cast<ssize_t>(msg.size())) {  // a 16-byte write into an idle socket does not block
      kill(i, w < 0 ? errno : 0);
      return false;
    }
    c.sent_seq += msg.size();
    c.outstanding += static_cast<uint32_t>(msg.size());
    ++messages_;
    return true;
  }

  void fire_timers(Clock::time_point now) {
    while (!timers_.empty() && timers_.top().first <= now) {
      const size_t i = timers_.top().second;
      timers_.pop();
      if (conns_[i].state != State::open) continue;
      if (send_message(i)) schedule(i, uniform(o_.interval_min, o_.interval_max));
    }
  }

  void start_verify() {
    verifying_ = true;
    verify_start_ = Clock::now();
    verify_sent_ = 0;
    for (size_t i = 0; i < conns_.size(); ++i) {
      if (conns_[i].state != State::open) continue;
      if (send_message(i)) {
        conns_[i].verify_pending = true;
        ++verify_sent_;
      }
    }
    check_verify();
  }

  void check_verify() {
    size_t missing = 0, alive = 0;
    for (Conn& c : conns_) {
      if (c.verify_pending && c.state == State::open && c.outstanding == 0) c.verify_pending = false;
      if (c.verify_pending && c.state == State::open) ++missing;
    }
    const bool timed_out = secs(Clock::now() - verify_start_) > o_.verify_timeout;
    if (missing > 0 && !timed_out) return;
    for (Conn& c : conns_) alive += (c.state == State::open && !c.verify_pending) ? 1 : 0;
    for (Conn& c : conns_) c.verify_pending = false;
    verifying_ = false;
    emit("{\"event\":\"verified\",\"open\":%ld,\"sent\":%zu,\"alive\":%zu,\"dead\":%" PRIu64
         ",\"missing\":%zu,\"bad_echo\":%" PRIu64 ",\"seconds\":%.3f}",
         open_, verify_sent_, alive, dead_, missing, bad_echo_, secs(Clock::now() - verify_start_));
  }

  void start_burst(long n) {
    if (n <= 0) return;
    burst_first_ = conns_.size();
    burst_left_ = n;
    burst_n_ = n;
    burst_rate_ = static_cast<double>(n) / o_.burst_seconds;
    burst_credit_ = 1;
    burst_last_ = Clock::now();
    burst_start_ = burst_last_;
    bursting_ = true;
  }

  void check_burst() {
    if (burst_left_ > 0) return;
    size_t served = 0, refused = 0, eof = 0, pending = 0;
    std::vector<double> connect_ms, echo_ms;
    for (size_t i = burst_first_; i < conns_.size(); ++i) {
      const Conn& c = conns_[i];
      switch (c.outcome) {
        case Outcome::served: ++served; break;
        case Outcome::refused: ++refused; break;
        case Outcome::eof: ++eof; break;
        case Outcome::pending: ++pending; break;
      }
      connect_ms.push_back(c.connect_ms);
      echo_ms.push_back(c.echo_ms);
    }
    if (pending > 0 && secs(Clock::now() - burst_start_) < o_.burst_seconds + o_.burst_timeout) return;
    bursting_ = false;
    emit("{\"event\":\"burst\",\"new\":%ld,\"served\":%zu,\"refused\":%zu,\"eof\":%zu,\"hung\":%zu,"
         "\"opened_in_s\":%.3f,\"seconds\":%.3f,\"connect_ms\":%s,\"echo_ms\":%s}",
         burst_n_, served, refused, eof, pending, secs(burst_opened_at_ - burst_start_),
         secs(Clock::now() - burst_start_), percentiles(connect_ms).c_str(), percentiles(echo_ms).c_str());
  }

  void print_stats() {
    uint64_t outstanding = 0;
    for (const Conn& c : conns_) outstanding += c.state == State::open ? c.outstanding : 0;
    emit("{\"event\":\"stats\",\"open\":%ld,\"connecting\":%d,\"dead\":%" PRIu64 ",\"failed_connects\":%" PRIu64
         ",\"messages\":%" PRIu64 ",\"echoed\":%" PRIu64 ",\"bad_echo\":%" PRIu64 ",\"bytes_outstanding\":%" PRIu64
         ",\"seconds\":%.3f}",
         open_, connecting_, dead_, failed_connects_, messages_, echoed_, bad_echo_, outstanding,
         secs(Clock::now() - start_));
  }

  void close_all() {
    size_t closed = 0;
    for (Conn& c : conns_) {
      if (c.fd >= 0) {
        ::close(c.fd);
        c.fd = -1;
        ++closed;
      }
      c.state = State::dead;
    }
    open_ = 0;
    connecting_ = 0;
    emit("{\"event\":\"closed\",\"closed\":%zu}", closed);
  }

  // Every complete line read so far (stdin is level-triggered: read it all).
  std::vector<std::string> read_commands() {
    char buf[256];
    for (;;) {
      ssize_t r = ::read(0, buf, sizeof buf);
      if (r > 0) {
        stdin_buf_.append(buf, static_cast<size_t>(r));
        continue;
      }
      if (r == 0) {  // EOF: the harness is gone
        quit_ = true;
        epoll_ctl(ep_, EPOLL_CTL_DEL, 0, nullptr);
      }
      break;
    }
    std::vector<std::string> cmds;
    for (auto nl = stdin_buf_.find('\n'); nl != std::string::npos; nl = stdin_buf_.find('\n')) {
      std::string cmd = stdin_buf_.substr(0, nl);
      stdin_buf_.erase(0, nl + 1);
      while (!cmd.empty() && (cmd.back() == '\r' || cmd.back() == ' ')) cmd.pop_back();
      cmds.push_back(std::move(cmd));
    }
    return cmds;
  }

  RunOptions o_;
  std::mt19937_64 rng_;
  sockaddr_storage addr_{};
  socklen_t addr_len_ = 0;
  int ep_ = -1;
  std::vector<Conn> conns_;
  using Timer = std::pair<Clock::time_point, size_t>;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  Clock::time_point start_;
  std::string stdin_buf_;
  bool quit_ = false;
  bool verifying_ = false;
  Clock::time_point verify_start_;
  size_t verify_sent_ = 0;
  int connecting_ = 0;
  long open_ = 0;
  uint64_t dead_ = 0;
  uint64_t failed_connects_ = 0;
  uint64_t messages_ = 0;
  uint64_t echoed_ = 0;
  uint64_t bad_echo_ = 0;
  // burst
  bool bursting_ = false;
  long burst_left_ = 0;
  long burst_n_ = 0;
  size_t burst_first_ = 0;
  double burst_rate_ = 0;
  double burst_credit_ = 0;
  Clock::time_point burst_last_, burst_start_, burst_opened_at_;
};

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
    auto real = [&](double lo) {
      char* end = nullptr;
      double d = std::strtod(v, &end);
      if (*v == '\0' || *end != '\0' || !(d >= lo)) usage(("bad value for " + std::string(a)).c_str());
      return d;
    };
    if (a == "--listen") listen = v;
    else if (a == "--connect") o.connect = v;
    else if (a == "--cc") o.cc = v;
    else if (a == "--rate") o.rate = real(1);
    else if (a == "--in-flight") o.in_flight = static_cast<int>(real(1));
    else if (a == "--interval-min") o.interval_min = real(0.01);
    else if (a == "--interval-max") o.interval_max = real(0.01);
    else if (a == "--message-bytes") o.message_bytes = static_cast<int>(real(1));
    else if (a == "--verify-timeout") o.verify_timeout = real(0.1);
    else if (a == "--seed") o.seed = static_cast<unsigned>(real(0));
    else if (a == "--idle-fraction") o.idle_fraction = std::min(1.0, real(0));
    else if (a == "--burst-seconds") o.burst_seconds = real(0.001);
    else if (a == "--burst-timeout") o.burst_timeout = real(0.1);
    else if (a == "--targets") {
      std::string s = v;
      size_t pos = 0;
      while (pos <= s.size()) {
        size_t comma = s.find(',', pos);
        if (comma == std::string::npos) comma = s.size();
        const long n = std::strtol(s.substr(pos, comma - pos).c_str(), nullptr, 10);
        if (n < 0 || (!o.targets.empty() && n < o.targets.back())) usage("--targets must be ascending counts");
        o.targets.push_back(n);
        pos = comma + 1;
      }
    } else usage(("unknown option " + std::string(a)).c_str());
  }
  if (cmd == "serve") {
    if (listen.empty()) usage("serve needs --listen ADDR:PORT");
    return serve(listen);
  }
  if (cmd == "run") {
    if (o.connect.empty() || o.targets.empty()) usage("run needs --connect ADDR:PORT and --targets");
    if (o.interval_max < o.interval_min) usage("--interval-max below --interval-min");
    signal(SIGPIPE, SIG_IGN);
    raise_nofile();
    return Client(std::move(o)).run();
  }
  usage("command must be serve or run");
}
