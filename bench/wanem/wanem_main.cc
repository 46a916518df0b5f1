// wanem: a userspace WAN link between two TUN devices, one Link (link.h) per
// direction. Routing sends what arrives from one side into TUN A and from the
// other into TUN B; wanem reads a packet from A, passes it through the a2b
// link and writes it to B, where the kernel takes it as received and routes
// it on (main table); b2a the other way. Usage, options, stdin commands:
// README.md. The routing, inside the namespace (bench/wanem/wan-ns.sh does
// it, with forwarding on and rp_filter and offloads off):
//
//   ip tuntap add dev wa mode tun; ip link set wa up      (the same for wb)
//   ip route add default dev wa table 100; ip rule add iif IF_A lookup 100
//   ip route add default dev wb table 101; ip rule add iif IF_B lookup 101
//   wanem --dev-a wa --dev-b wb --a2b "rate=800k,delay=50,queue=10p,loss=0.01" --b2a "rate=800k,delay=50"
//
// One thread: epoll over both TUNs, stdin (commands), a timerfd armed at the
// next departure (absolute CLOCK_MONOTONIC, ns) and a signalfd
// (SIGTERM/SIGINT stop it). Packets live in a pool allocated at start: no
// allocation per packet.
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "bench/wanem/ip_info.h"
#include "bench/wanem/link.h"
#include "bench/wanem/options.h"

namespace {

using namespace egw::wanem;

Time monotonic_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return Time(Nanos(std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec));
}

int open_tun(const std::string& name) {
  const int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return -1;
  ifreq ifr{};
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name.c_str());
  if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Fixed-size packet buffers, handed to the Links as slot numbers.
class Pool {
 public:
  Pool(std::size_t packets, std::size_t slot_bytes)
      : slot_bytes_(slot_bytes), bytes_(packets * slot_bytes) {
    free_.reserve(packets);
    for (std::size_t i = packets; i-- > 0;) free_.push_back(static_cast<std::uint32_t>(i));
  }
  bool empty() const { return free_.empty(); }
  std::uint32_t take() {
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  void give_back(std::uint32_t slot) { free_.push_back(slot); }
  std::uint8_t* data(std::uint32_t slot) { return bytes_.data() + std::size_t{slot} * slot_bytes_; }
  std::size_t slot_bytes() const { return slot_bytes_; }

 private:
  std::size_t slot_bytes_;
  std::vector<std::uint8_t> bytes_;
  std::vector<std::uint32_t> free_;
};

// Drops the model never saw, or that happened after it let a packet go.
struct DriverCounters {
  std::uint64_t out_packets = 0, out_bytes = 0;  // written to the other TUN
  std::uint64_t dropped_write = 0;     // the kernel refused the write to the other TUN
  std::uint64_t dropped_oversize = 0;  // longer than --max-packet-bytes
  std::uint64_t dropped_pool = 0;      // no free buffer (--pool-packets)
};

struct Direction {
  const char* name;
  int in_fd, out_fd;
  Link link;
  DriverCounters driver;
};

class Wanem {
 public:
  Wanem(int fd_a, int fd_b, const LinkConfig& a2b, const LinkConfig& b2a, std::size_t pool_packets,
        std::size_t max_packet_bytes, std::FILE* trace)
      : dirs_{Direction{"a2b", fd_a, fd_b, Link(a2b), {}}, Direction{"b2a", fd_b, fd_a, Link(b2a), {}}},
        pool_(pool_packets, max_packet_bytes + 1),  // +1: a read that fills it was truncated
        scratch_(max_packet_bytes + 1),
        trace_(trace),
        start_(monotonic_now()) {
    stdin_line_.reserve(4096);
  }

  int run();

 private:
  void read_packets(Direction& d);
  void send_due(Direction& d, Time now);
  void arm_timer();
  void read_stdin();
  void command(const std::string& line);
  void print_stats();
  void trace(const Direction& d, const char* event, const std::uint8_t* bytes, std::size_t len, Time now);
  void trace_rate(const Direction& d, Time now);

  Direction dirs_[2];
  Pool pool_;
  std::vector<std::uint8_t> scratch_;  // where a packet goes when the pool is empty
  std::FILE* trace_;
  Time start_;
  int epoll_fd_ = -1, timer_fd_ = -1, signal_fd_ = -1;
  Time armed_at_{};
  bool armed_ = false;
  bool stdin_open_ = false;
  bool device_lost_ = false;
  std::string stdin_line_;
};

void Wanem::trace(const Direction& d, const char* event, const std::uint8_t* bytes, std::size_t len, Time now) {
  if (!trace_) return;
  const IpInfo ip = parse_ip({bytes, len});
  const long long t_us = std::chrono::duration_cast<std::chrono::microseconds>(now - start_).count();
  if (ip.has_ports) {
    std::fprintf(trace_, "%lld %s %s %zu %u %u %u\n", t_us, d.name, event, len, ip.protocol, ip.src_port,
                 ip.dst_port);
  } else {
    std::fprintf(trace_, "%lld %s %s %zu %u - -\n", t_us, d.name, event, len, ip.protocol);
  }
}

// The rate a `set` left (changed or not): the trace's reader rebuilds each
// packet's time on the wire from it (bench/lab/wantrace.py).
void Wanem::trace_rate(const Direction& d, Time now) {
  if (!trace_) return;
  const long long t_us = std::chrono::duration_cast<std::chrono::microseconds>(now - start_).count();
  std::fprintf(trace_, "%lld %s rate %llu - - -\n", t_us, d.name,
               static_cast<unsigned long long>(d.link.config().rate_bps));
}

void Wanem::read_packets(Direction& d) {
  // A batch per wakeup, so departures are not held up by a flood.
  for (int i = 0; i < 64; ++i) {
    const bool pooled = !pool_.empty();
    const std::uint32_t slot = pooled ? pool_.take() : 0;
    std::uint8_t* buf = pooled ? pool_.data(slot) : scratch_.data();
    const ssize_t n = read(d.in_fd, buf, pool_.slot_bytes());
    if (n <= 0) {
      if (pooled) pool_.give_back(slot);
      // EAGAIN: all read. Anything else (the device deleted under us) would
      // wake epoll forever: stop.
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        std::fprintf(stderr, "wanem: reading %s: %s\n", d.name, std::strerror(errno));
        device_lost_ = true;
      }
      return;
    }
    const Time now = monotonic_now();
    const auto len = static_cast<std::size_t>(n);
    if (!pooled || len == pool_.slot_bytes()) {
      ++(pooled ? d.driver.dropped_oversize : d.driver.dropped_pool);
      trace(d, pooled ? "drop_oversize" : "drop_pool", buf, len, now);
      if (pooled) pool_.give_back(slot);
      continue;
    }
    const IpInfo ip = parse_ip({buf, len});
    const Admission a = d.link.on_packet(now, Packet{slot, static_cast<std::uint32_t>(len), is_le(ip)});
    for (const Packet& evicted : a.evicted) {
      trace(d, "drop_le", pool_.data(evicted.slot), evicted.len_bytes, now);
      pool_.give_back(evicted.slot);
    }
    if (a.verdict == Verdict::queued) {
      trace(d, "enq", buf, len, now);
    } else {
      trace(d, a.verdict == Verdict::dropped_loss ? "drop_loss" : "drop_queue", buf, len, now);
      pool_.give_back(slot);
    }
  }
}

void Wanem::send_due(Direction& d, Time now) {
  while (const auto p = d.link.pop_due(now)) {
    const std::uint8_t* buf = pool_.data(p->slot);
    // The TUN takes the packet as received (netif_rx); a refusal (device
    // down, its backlog full) is a drop on the link, not a retry.
    if (write(d.out_fd, buf, p->len_bytes) == static_cast<ssize_t>(p->len_bytes)) {
      ++d.driver.out_packets;
      d.driver.out_bytes += p->len_bytes;
    } else {
      ++d.driver.dropped_write;
    }
    trace(d, "deq", buf, p->len_bytes, now);
    pool_.give_back(p->slot);
  }
}

void Wanem::arm_timer() {
  std::optional<Time> next;
  for (const Direction& d : dirs_) {
    const auto t = d.link.next_departure();
    if (t && (!next || *t < *next)) next = t;
  }
  if (next.has_value() == armed_ && (!next || *next == armed_at_)) return;
  itimerspec its{};  // all zero disarms
  if (next) {
    const auto ns = std::max<std::int64_t>(next->time_since_epoch().count(), 1);
    its.it_value.tv_sec = ns / 1'000'000'000;
    its.it_value.tv_nsec = ns % 1'000'000'000;
  }
  timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &its, nullptr);
  armed_ = next.has_value();
  if (next) armed_at_ = *next;
}

void Wanem::print_stats() {
  std::printf("{");
  for (int i = 0; i < 2; ++i) {
    const Direction& d = dirs_[i];
    const LinkCounters& c = d.link.counters();
    // out_* counts what reached the other TUN (the link let go of
    // dropped_write more, which the kernel refused).
    std::printf(
        "%s\"%s\": {\"in_packets\": %llu, \"out_packets\": %llu, \"in_bytes\": %llu, \"out_bytes\": %llu, "
        "\"dropped_loss\": %llu, \"dropped_queue\": %llu, \"dropped_le\": %llu, \"dropped_write\": %llu, "
        "\"dropped_oversize\": %llu, \"dropped_pool\": %llu, \"max_queue_packets\": %llu, \"max_queue_bytes\": %llu, "
        "\"queue_packets\": %llu, \"inside_packets\": %llu}",
        i ? ", " : "", d.name, static_cast<unsigned long long>(c.in_packets),
        static_cast<unsigned long long>(d.driver.out_packets), static_cast<unsigned long long>(c.in_bytes),
        static_cast<unsigned long long>(d.driver.out_bytes),
        static_cast<unsigned long long>(c.dropped_loss), static_cast<unsigned long long>(c.dropped_queue),
        static_cast<unsigned long long>(c.dropped_le), static_cast<unsigned long long>(d.driver.dropped_write),
        static_cast<unsigned long long>(d.driver.dropped_oversize),
        static_cast<unsigned long long>(d.driver.dropped_pool), static_cast<unsigned long long>(c.max_queue_packets),
        static_cast<unsigned long long>(c.max_queue_bytes), static_cast<unsigned long long>(d.link.queued_packets()),
        static_cast<unsigned long long>(d.link.packets_inside()));
  }
  std::printf("}\n");
  std::fflush(stdout);
}

// One command a line; each answers one line: "ok", "error: ..." or the stats.
void Wanem::command(const std::string& line) {
  const auto word_end = line.find(' ');
  const std::string word = line.substr(0, word_end);
  if (word == "stats") {
    print_stats();
  } else if (word == "reset") {
    for (Direction& d : dirs_) {
      d.link.reset_counters();
      d.driver = {};
    }
    std::printf("ok\n");
  } else if (word == "set" && word_end != std::string::npos) {
    const std::string rest = line.substr(word_end + 1);
    const auto dir_end = rest.find(' ');
    const std::string dir = rest.substr(0, dir_end);
    const std::string spec = dir_end == std::string::npos ? "" : rest.substr(dir_end + 1);
    const bool a2b = dir == "a2b" || dir == "both", b2a = dir == "b2a" || dir == "both";
    LinkConfig ca = dirs_[0].link.config(), cb = dirs_[1].link.config();
    std::string err = a2b || b2a ? "" : "direction must be a2b, b2a or both";
    if (err.empty() && a2b) err = apply_options(spec, ca);
    if (err.empty() && b2a) err = apply_options(spec, cb);
    if (err.empty()) {
      // Changes apply from now: let what is already due leave first.
      const Time now = monotonic_now();
      for (Direction& d : dirs_) send_due(d, now);
      if (a2b) dirs_[0].link.configure(ca);
      if (b2a) dirs_[1].link.configure(cb);
      for (int i = 0; i < 2; ++i) {
        if (i == 0 ? a2b : b2a) trace_rate(dirs_[i], now);
      }
      std::printf("ok\n");
    } else {
      std::printf("error: %s\n", err.c_str());
    }
  } else if (!word.empty()) {
    std::printf("error: unknown command '%s' (set a2b|b2a|both OPTIONS, stats, reset)\n", line.c_str());
  }
  std::fflush(stdout);
}

void Wanem::read_stdin() {
  char buf[4096];
  const ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {  // EOF: commands are over, the emulator is not
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, STDIN_FILENO, nullptr);
    stdin_open_ = false;
    return;
  }
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] == '\n') {
      if (!stdin_line_.empty() && stdin_line_.back() == '\r') stdin_line_.pop_back();
      command(stdin_line_);
      stdin_line_.clear();
    } else if (stdin_line_.size() < 4096) {
      stdin_line_.push_back(buf[i]);
    }
  }
}

int Wanem::run() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  signal_fd_ = signalfd(-1, &stop_signals, SFD_NONBLOCK | SFD_CLOEXEC);
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (signal_fd_ < 0 || timer_fd_ < 0 || epoll_fd_ < 0) {
    std::perror("wanem: signalfd/timerfd/epoll");
    return 1;
  }
  auto watch = [&](int fd) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0;
  };
  watch(dirs_[0].in_fd);
  watch(dirs_[1].in_fd);
  watch(timer_fd_);
  watch(signal_fd_);
  // stdin may be a file or /dev/null (epoll refuses those): then no commands.
  fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
  stdin_open_ = watch(STDIN_FILENO);

  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) {
    epoll_event events[8];
    const int n = epoll_wait(epoll_fd_, events, 8, -1);
    if (n < 0 && errno != EINTR) {
      std::perror("wanem: epoll_wait");
      return 1;
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == signal_fd_) {
        print_stats();
        return 0;
      }
      if (fd == timer_fd_) {
        std::uint64_t expirations;
        [[maybe_unused]] const ssize_t r = read(timer_fd_, &expirations, sizeof expirations);
        armed_ = false;
      } else if (fd == STDIN_FILENO) {
        read_stdin();
      } else {
        read_packets(fd == dirs_[0].in_fd ? dirs_[0] : dirs_[1]);
      }
    }
    if (device_lost_) {
      print_stats();
      return 1;
    }
    const Time now = monotonic_now();
    for (Direction& d : dirs_) send_due(d, now);
    arm_timer();
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"wanem: a WAN link between two TUN devices (bench/wanem/README.md)"};
  std::string dev_a, dev_b, a2b_spec, b2a_spec, trace_path;
  std::size_t pool_packets = 8192, max_packet_bytes = 2048;
  app.add_option("--dev-a", dev_a, "TUN device A (created if missing): what it receives goes a2b")->required();
  app.add_option("--dev-b", dev_b, "TUN device B: what it receives goes b2a")->required();
  app.add_option("--a2b", a2b_spec, "the A -> B link: rate=800k,delay=50,jitter=0,reorder=0,queue=10p,loss=0,"
                                    "le_drop=1,seed=1");
  app.add_option("--b2a", b2a_spec, "the B -> A link (default seed=2)");
  app.add_option("--trace", trace_path, "one line per packet event: time_us dir event ip_len proto sport dport");
  app.add_option("--pool-packets", pool_packets, "packet buffers for both directions")
      ->capture_default_str()
      ->check(CLI::Range(16, 1 << 20));
  app.add_option("--max-packet-bytes", max_packet_bytes, "longer packets are dropped (dropped_oversize)")
      ->capture_default_str()
      ->check(CLI::Range(576, 65535));
  CLI11_PARSE(app, argc, argv);

  LinkConfig a2b, b2a;
  b2a.seed = 2;  // independent losses each way unless told otherwise
  for (auto [spec, config, name] : {std::tuple{&a2b_spec, &a2b, "--a2b"}, std::tuple{&b2a_spec, &b2a, "--b2a"}}) {
    if (const std::string err = apply_options(*spec, *config); !err.empty()) {
      std::fprintf(stderr, "wanem: %s: %s\n", name, err.c_str());
      return 2;
    }
  }
  // The default 50 us of timer slack would make every departure that late.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  std::signal(SIGPIPE, SIG_IGN);  // a harness that closed our stdout must not kill us
  const int fd_a = open_tun(dev_a), fd_b = open_tun(dev_b);
  if (fd_a < 0 || fd_b < 0) {
    std::fprintf(stderr, "wanem: cannot open TUN %s: %s\n", fd_a < 0 ? dev_a.c_str() : dev_b.c_str(),
                 std::strerror(errno));
    return 1;
  }
  std::FILE* trace = nullptr;
  if (!trace_path.empty()) {
    trace = std::fopen(trace_path.c_str(), "w");
    if (!trace) {
      std::fprintf(stderr, "wanem: cannot write %s: %s\n", trace_path.c_str(), std::strerror(errno));
      return 1;
    }
    std::setvbuf(trace, nullptr, _IOFBF, 1 << 20);
    std::fprintf(trace, "# time_us dir event ip_len proto src_port dst_port\n");
  }
  std::fprintf(stderr, "wanem: a2b %s\nwanem: b2a %s\n", describe(a2b).c_str(), describe(b2a).c_str());
  Wanem wanem(fd_a, fd_b, a2b, b2a, pool_packets, max_packet_bytes, trace);
  const int rc = wanem.run();
  if (trace) std::fclose(trace);
  return rc;
}
