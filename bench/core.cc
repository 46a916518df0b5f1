// bench/core: the tunnel core's own cost, with no sockets and no threads.
//
// Two Connections (client = branch, hub) exchange datagrams over a lossless
// in-memory link (rate + one-way delay, preallocated slots) on virtual time
// (tests/support/memory_pair.h, shared with tests/alloc); ACKs flow back the
// same way. The client's streams write bulk data that the hub reads at once. Measured for N = 1, 10, 100, 1,000 and 10,000 streams:
//
//   packet/<protection>/all_active/N   every stream has data queued, so the
//                                      stride scheduler rotates among all N
//   packet/<protection>/one_active/N   one writing stream and N-1 idle open
//                                      streams (each carried a small request
//                                      and answer, then went quiet)
//     ns of CPU per data packet for both sides together (client send + hub
//     receive + the ACKs back + the applications' copies in and out), split
//     per side by the cycles spent inside each side's calls; heap
//     allocations per data packet (a counting global operator new).
//   open/<protection>/N                CPU to open N streams: the client's
//                                      open_stream calls alone, and until the
//                                      hub announced all N and the ACKs settled
//   idle_bytes/N                       live heap bytes per extra idle open
//                                      stream, per side (drained buffers kept in
//                                      the connection's BufferPool excluded)
//
// Google Benchmark runs each case (--benchmark_repetitions, default 5) and
// prints its raw rows; at the end a summary table gives the medians and the
// goals of the issue, met or missed.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "tests/alloc/counting_allocator.h"
#include "tests/support/memory_pair.h"

namespace egw::bench {
namespace {

using alloc_test::counters;
using alloc_test::set_side;
using tunnel::Connection;
using tunnel::ConnectionConfig;
using test_support::cycles;

inline constexpr std::size_t kExchangeBytes = 2000;  // request and answer on an idle stream
inline constexpr int kClient = test_support::MemoryPair::kClient;
inline constexpr int kHub = test_support::MemoryPair::kHub;
inline constexpr std::size_t kStreamCounts[] = {1, 10, 100, 1'000, 10'000};

double thread_cpu_seconds() {
  std::timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) / 1e9;
}

struct PairConfig {
  bool null_protection = true;
  std::size_t max_streams = 10'000;
  // Client: how much each stream may buffer for sending.
  ByteCount send_buffer_bytes = 2 << 20;
  // Hub: receive windows. The connection window bounds what is in flight
  // (the link is lossless, so nothing else stops the window growing).
  ByteCount hub_stream_window_bytes = 1 << 20;
  ByteCount hub_connection_window_bytes = 2 << 20;
  double rate_bits_per_s = 1e9;
  Duration one_way = ms(1);
  std::size_t link_slots = 32768;  // per direction; pages touched only when used
};

test_support::MemoryPairConfig memory_pair_config(const PairConfig& pc) {
  test_support::MemoryPairConfig c;
  c.client.stream_send_buffer_bytes = pc.send_buffer_bytes;
  c.hub.max_incoming_streams = pc.max_streams + 16;
  c.hub.stream_receive_window_bytes = pc.hub_stream_window_bytes;
  c.hub.connection_receive_window_bytes = pc.hub_connection_window_bytes;
  c.null_protection = pc.null_protection;
  c.rate_bits_per_s = pc.rate_bits_per_s;
  c.one_way = pc.one_way;
  c.link_slots = pc.link_slots;
  c.enter_side = &set_side;
  // What a handshake would tell the client (there is none in memory): the
  // hub's stream limit and windows, or streams beyond 1,024 wait for MAX_STREAMS.
  c.client.peer = tunnel::local_transport_parameters(c.hub);
  return c;
}

// The two applications on the in-memory pair (tests/support/memory_pair.h):
// the client fills its writing streams whenever StreamWritable says there is
// room; the hub reads every StreamReadable at once and (if set) answers each
// stream it accepts. Event-driven on both sides, so nothing per step scans
// the streams.
class Pair : public test_support::MemoryPair {
 public:
  explicit Pair(const PairConfig& pc)
      : MemoryPair(memory_pair_config(pc)),
        source_(64 * 1024),
        sink_(64 * 1024),
        writer_(2 * pc.max_streams + 16, false),
        hub_read_per_stream_(pc.max_streams + 16, 0) {
    for (std::size_t i = 0; i < source_.size(); ++i) source_[i] = static_cast<std::byte>(i * 7);
  }

  StreamId open() { return open_stream(); }
  // The stream writes forever (refilled on StreamWritable).
  void start_writing(StreamId id) {
    enter(kClient);
    writer_.at(id) = true;
    fill(id);
    enter(kHarness);
  }
  void write_once(StreamId id, std::size_t bytes) {
    enter(kClient);
    client().stream_write(id, std::span(source_).first(bytes), now());
    enter(kHarness);
  }
  void set_answer_bytes(std::size_t bytes) { answer_bytes_ = bytes; }

  std::uint64_t hub_read_bytes() const { return hub_read_; }
  std::uint64_t client_read_bytes() const { return client_read_; }
  std::uint64_t hub_opened() const { return hub_opened_; }
  const std::vector<std::uint64_t>& hub_read_per_stream() const { return hub_read_per_stream_; }

 private:
  void fill(StreamId id) {
    while (client().stream_write(id, source_, now()) > 0) {
    }
  }
  void client_app() override {
    Connection& c = client();
    while (auto e = c.poll_event()) {
      if (auto* r = std::get_if<tunnel::StreamReadable>(&*e)) {
        bool fin = false;
        while (std::size_t n = c.stream_read(r->id, sink_, &fin, now())) client_read_ += n;
      } else if (auto* w = std::get_if<tunnel::StreamWritable>(&*e)) {
        if (w->id < writer_.size() && writer_[w->id]) fill(w->id);
      }
    }
  }
  void hub_app() override {
    Connection& h = hub();
    while (auto e = h.poll_event()) {
      if (auto* o = std::get_if<tunnel::StreamOpened>(&*e)) {
        ++hub_opened_;
        if (answer_bytes_ > 0) h.stream_write(o->id, std::span(source_).first(answer_bytes_), now());
      } else if (auto* r = std::get_if<tunnel::StreamReadable>(&*e)) {
        bool fin = false;
        std::uint64_t& per_stream = hub_read_per_stream_[std::min<std::size_t>(
            r->id / 2, hub_read_per_stream_.size() - 1)];
        while (std::size_t n = h.stream_read(r->id, sink_, &fin, now())) {
          hub_read_ += n;
          per_stream += n;
        }
      }
    }
  }

  std::vector<std::byte> source_;
  std::vector<std::byte> sink_;
  std::vector<bool> writer_;                          // by client stream id
  std::vector<std::uint64_t> hub_read_per_stream_;    // by client stream id / 2
  std::size_t answer_bytes_ = 0;
  std::uint64_t hub_read_ = 0;
  std::uint64_t client_read_ = 0;
  std::uint64_t hub_opened_ = 0;
};

// Every repetition's numbers, for the summary's medians: key "case/N/metric".
std::map<std::string, std::vector<double>>& results() {
  static std::map<std::string, std::vector<double>> r;
  return r;
}
void record(benchmark::State& state, const std::string& key, const std::string& metric,
            double value) {
  state.counters[metric] = value;
  results()[key + "/" + metric].push_back(value);
}

std::string case_key(const char* kind, bool null_protection, const char* mode, std::size_t n) {
  std::string k = std::string(kind) + "/" + (null_protection ? "null" : "test");
  if (mode) k += std::string("/") + mode;
  return k + "/" + std::to_string(n);
}

// Opens `count` idle streams (each carries a request and an answer, then goes quiet).
void open_idle_streams(Pair& p, std::size_t count) {
  if (count == 0) return;
  p.set_answer_bytes(kExchangeBytes);
  const std::uint64_t opened = p.hub_opened();
  const std::uint64_t hub_read = p.hub_read_bytes();
  const std::uint64_t client_read = p.client_read_bytes();
  for (std::size_t i = 0; i < count; ++i) p.write_once(p.open(), kExchangeBytes);
  p.run_until([&] {
    return p.hub_opened() == opened + count &&
           p.hub_read_bytes() == hub_read + count * kExchangeBytes &&
           p.client_read_bytes() == client_read + count * kExchangeBytes;
  });
  p.run_for(ms(300));  // ACKs settle; everything quiet
  p.set_answer_bytes(0);
}

// CPU per data packet in steady state. One benchmark iteration is one more
// client datagram (a step may send several; the loop then catches up).
void packet_bench(benchmark::State& state, bool null_protection, bool all_active) {
  const auto n = static_cast<std::size_t>(state.range(0));
  PairConfig pc;
  pc.null_protection = null_protection;
  pc.max_streams = n;
  // All active: the aggregate send buffer stays >= 2 MB (the hub's connection
  // window, which bounds what is in flight) at every N, so the regime (about
  // 1,700 packets in flight) is the same for 1 and 10,000 streams.
  pc.send_buffer_bytes = all_active ? std::max<ByteCount>(8 * 1024, (2 << 20) / n) : (2 << 20);
  Pair p(pc);
  std::vector<StreamId> writers;
  if (all_active) {
    for (std::size_t i = 0; i < n; ++i) writers.push_back(p.open());
  } else {
    open_idle_streams(p, n - 1);
    writers.push_back(p.open());
  }
  for (StreamId id : writers) p.start_writing(id);
  p.run_client_datagrams(std::max<std::uint64_t>(20'000, 10 * n));  // warm up: every ring and vector at its peak

  const std::vector<std::uint64_t> per_stream_before = p.hub_read_per_stream();
  const std::uint64_t sent_before = p.client_sent();
  const std::uint64_t read_before = p.hub_read_bytes();
  const std::uint64_t client_ticks_before = p.client_cycles();
  const std::uint64_t hub_ticks_before = p.hub_cycles();
  std::uint64_t target = sent_before;
  // EGW_ALLOC_DEBUG=1 names each allocation in the measurement on stderr
  // (tests/alloc/counting_allocator.cc; slow, so only for diagnosis).
  const bool diagnose = std::getenv("EGW_ALLOC_DEBUG") != nullptr;
  if (diagnose) alloc_test::warm_up_attribution();
  counters().attributing = diagnose;
  const double cpu_start = thread_cpu_seconds();
  const std::uint64_t ticks_start = cycles();
  // Allocations are counted inside the loop body: Google Benchmark's own
  // bookkeeping when the loop starts and ends allocates.
  std::uint64_t allocations = 0;
  for (auto _ : state) {
    const std::uint64_t before = counters().allocations;
    p.run_until_client_sent(++target);
    allocations += counters().allocations - before;
  }
  const std::uint64_t ticks_total = cycles() - ticks_start;
  const double cpu = thread_cpu_seconds() - cpu_start;
  counters().attributing = false;

  const double packets = double(p.client_sent() - sent_before);
  const double ns_both = cpu * 1e9 / packets;
  const double client_share = double(p.client_cycles() - client_ticks_before) / double(ticks_total);
  const double hub_share = double(p.hub_cycles() - hub_ticks_before) / double(ticks_total);
  std::size_t served = 0;
  for (std::size_t i = 0; i < per_stream_before.size(); ++i) {
    if (p.hub_read_per_stream()[i] > per_stream_before[i]) ++served;
  }
  const std::string key = case_key("packet", null_protection, all_active ? "all_active" : "one_active", n);
  record(state, key, "ns_pkt", ns_both);
  record(state, key, "ns_pkt_side", ns_both / 2);
  record(state, key, "ns_client", ns_both * client_share);
  record(state, key, "ns_hub", ns_both * hub_share);
  record(state, key, "allocs_pkt", double(allocations) / packets);
  record(state, key, "payload_B_pkt", double(p.hub_read_bytes() - read_before) / packets);
  record(state, key, "streams_served", double(served));
}

// CPU to open N streams: the client's open_stream calls, then until the hub
// announced all of them and everything was acknowledged.
void open_bench(benchmark::State& state, bool null_protection) {
  const auto n = static_cast<std::size_t>(state.range(0));
  PairConfig pc;
  pc.null_protection = null_protection;
  pc.max_streams = n;
  Pair p(pc);
  double api = 0, total = 0, client = 0, hub = 0;
  for (auto _ : state) {
    const double cpu_start = thread_cpu_seconds();
    for (std::size_t i = 0; i < n; ++i) p.open();
    const double cpu_opened = thread_cpu_seconds();
    const std::uint64_t ticks_start = cycles();
    const std::uint64_t client_ticks_before = p.client_cycles();
    const std::uint64_t hub_ticks_before = p.hub_cycles();
    p.run_until([&] { return p.hub_opened() == n; });
    p.run_for(ms(100));  // the last ACKs (delayed ACK timers) settle
    const std::uint64_t ticks_total = cycles() - ticks_start;
    const double cpu_end = thread_cpu_seconds();
    api = cpu_opened - cpu_start;
    total = cpu_end - cpu_start;
    const double wire = cpu_end - cpu_opened;
    client = api + wire * double(p.client_cycles() - client_ticks_before) / double(ticks_total);
    hub = wire * double(p.hub_cycles() - hub_ticks_before) / double(ticks_total);
  }
  const std::string key = case_key("open", null_protection, nullptr, n);
  record(state, key, "open_api_ms", api * 1e3);
  record(state, key, "open_total_ms", total * 1e3);
  record(state, key, "open_client_ms", client * 1e3);
  record(state, key, "open_hub_ms", hub * 1e3);
}

// Live heap bytes per extra idle open stream, per side, after each stream
// carried a request and an answer both ways (every buffer used once) and
// went quiet. Drained buffers in the connection's BufferPool (bounded,
// shared) are not counted per stream; rings the connection grew for N
// streams at once (history, events) are.
void idle_bytes_bench(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  PairConfig pc;
  pc.null_protection = true;
  pc.max_streams = n + 1;
  // The product's defaults for the windows and buffers.
  const ConnectionConfig defaults;
  pc.send_buffer_bytes = defaults.stream_send_buffer_bytes;
  pc.hub_stream_window_bytes = defaults.stream_receive_window_bytes;
  pc.hub_connection_window_bytes = defaults.connection_receive_window_bytes;
  Pair p(pc);
  double client_per_stream = 0, hub_per_stream = 0;
  for (auto _ : state) {
    open_idle_streams(p, 1);  // the ensemble and first-stream state exist
    auto live = [&](int side) {
      set_side(side);
      Connection& c = side == kClient ? p.client() : p.hub();
      const auto pool = static_cast<std::int64_t>(c.stats().buffer_pool_bytes);
      set_side(0);
      return counters().live_bytes[side] - pool;
    };
    const std::int64_t client_before = live(kClient);
    const std::int64_t hub_before = live(kHub);
    open_idle_streams(p, n);
    client_per_stream = double(live(kClient) - client_before) / double(n);
    hub_per_stream = double(live(kHub) - hub_before) / double(n);
  }
  const std::string key = "idle/" + std::to_string(n);
  record(state, key, "idle_B_client", client_per_stream);
  record(state, key, "idle_B_hub", hub_per_stream);
}

double median(std::vector<double> v) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}
double get(const std::string& key) {
  auto it = results().find(key);
  return it == results().end() ? -1 : median(it->second);
}
std::size_t runs(const std::string& key) {
  auto it = results().find(key);
  return it == results().end() ? 0 : it->second.size();
}

void print_packet_table(bool null_protection) {
  std::printf("\nCPU per data packet in steady state, %s protection (ns; median of %zu runs)\n",
              null_protection ? "NullProtection" : "TestProtection (SipHash tag)",
              runs(case_key("packet", null_protection, "all_active", 1) + "/ns_pkt"));
  std::printf("%7s | %-48s | %-40s\n", "", "all N streams active", "1 active + N-1 idle open streams");
  std::printf("%7s | %7s %7s %7s %7s %7s %9s | %7s %7s %7s %7s %7s\n", "streams", "both", "/2",
              "client", "hub", "allocs", "served", "both", "/2", "client", "hub", "allocs");
  for (std::size_t n : kStreamCounts) {
    const std::string a = case_key("packet", null_protection, "all_active", n);
    const std::string o = case_key("packet", null_protection, "one_active", n);
    if (runs(a + "/ns_pkt") == 0 && runs(o + "/ns_pkt") == 0) continue;
    std::printf("%7zu | %7.0f %7.0f %7.0f %7.0f %7.1f %9.0f | %7.0f %7.0f %7.0f %7.0f %7.1f\n", n,
                get(a + "/ns_pkt"), get(a + "/ns_pkt_side"), get(a + "/ns_client"),
                get(a + "/ns_hub"), get(a + "/allocs_pkt") * 1e5, get(a + "/streams_served"),
                get(o + "/ns_pkt"), get(o + "/ns_pkt_side"), get(o + "/ns_client"),
                get(o + "/ns_hub"), get(o + "/allocs_pkt") * 1e5);
  }
}

void print_summary() {
  std::printf("\n=== bench/core summary ===\n");
  std::printf(
      "both = CPU of both connections (and both applications' copies) per client data "
      "packet; /2 = both halved;\nclient, hub = both split by the cycles spent in each "
      "side's calls (the rest is the harness's event loop);\nallocs = heap allocations per "
      "100,000 data packets; served = streams that got data during the measurement.\n");
  print_packet_table(true);
  print_packet_table(false);

  std::printf("\nOpening N streams (ms of CPU; median): client open_stream calls alone, and "
              "until the hub announced all N (both sides)\n");
  std::printf("%7s | %12s %12s %12s %12s | %12s %12s\n", "streams", "API (null)", "total (null)",
              "client", "hub", "API (test)", "total (test)");
  for (std::size_t n : kStreamCounts) {
    const std::string k = case_key("open", true, nullptr, n);
    const std::string t = case_key("open", false, nullptr, n);
    if (runs(k + "/open_total_ms") == 0) continue;
    std::printf("%7zu | %12.3f %12.3f %12.3f %12.3f | %12.3f %12.3f\n", n, get(k + "/open_api_ms"),
                get(k + "/open_total_ms"), get(k + "/open_client_ms"), get(k + "/open_hub_ms"),
                get(t + "/open_api_ms"), get(t + "/open_total_ms"));
  }

  std::printf("\nLive heap bytes per idle open stream (after a %zu-byte request and answer)\n",
              kExchangeBytes);
  std::printf("%7s | %10s %10s\n", "streams", "client", "hub");
  for (std::size_t n : kStreamCounts) {
    const std::string k = "idle/" + std::to_string(n);
    if (runs(k + "/idle_B_client") == 0) continue;
    std::printf("%7zu | %10.0f %10.0f\n", n, get(k + "/idle_B_client"), get(k + "/idle_B_hub"));
  }

  std::printf("\nGoals (medians, NullProtection):\n");
  auto verdict = [](bool met) { return met ? "met" : "MISSED"; };
  {
    const double a10 = get(case_key("packet", true, "all_active", 10) + "/ns_pkt");
    const double a10k = get(case_key("packet", true, "all_active", 10'000) + "/ns_pkt");
    if (a10 > 0 && a10k > 0) {
      std::printf("  per-packet CPU at 10,000 active streams <= 1.5x of 10: %.0f / %.0f ns = %.2fx  %s\n",
                  a10k, a10, a10k / a10, verdict(a10k / a10 <= 1.5));
    }
  }
  {
    const double t = get(case_key("open", true, nullptr, 10'000) + "/open_total_ms");
    if (t > 0) {
      std::printf("  open 10,000 streams < 100 ms CPU (both sides, until announced): %.1f ms  %s\n",
                  t, verdict(t < 100));
    }
  }
  {
    double worst = 0;
    for (bool np : {true, false}) {
      for (const char* mode : {"all_active", "one_active"}) {
        for (std::size_t n : kStreamCounts) {
          const double a = get(case_key("packet", np, mode, n) + "/allocs_pkt");
          worst = std::max(worst, a);
        }
      }
    }
    std::printf("  no heap allocation per packet in steady state: worst %.1f per 100,000 packets  %s\n",
                worst * 1e5, verdict(worst == 0));
  }
  {
    double worst = 0, worst_half = 0;
    std::string where;
    for (const char* mode : {"all_active", "one_active"}) {
      for (std::size_t n : kStreamCounts) {
        const std::string k = case_key("packet", true, mode, n);
        const double side = std::max(get(k + "/ns_client"), get(k + "/ns_hub"));
        if (side > worst) {
          worst = side;
          where = std::string(mode) + ", N=" + std::to_string(n);
        }
        worst_half = std::max(worst_half, get(k + "/ns_pkt_side"));
      }
    }
    std::printf("  <= 0.5 us CPU per data packet per side (null protection): worst side %.0f ns (%s), "
                "worst both/2 %.0f ns  %s\n",
                worst, where.c_str(), worst_half, verdict(worst <= 500));
  }
  {
    double worst = 0;
    for (std::size_t n : kStreamCounts) {
      const std::string k = "idle/" + std::to_string(n);
      if (runs(k + "/idle_B_client") == 0) continue;
      worst = std::max({worst, get(k + "/idle_B_client"), get(k + "/idle_B_hub")});
    }
    std::printf("  idle stream <= 1 KB per side: worst %.0f bytes  %s\n", worst, verdict(worst <= 1024));
  }
}

void register_benchmarks() {
  // Iterations = client datagrams measured after the warm-up.
  // EGW_BENCH_PACKETS overrides it (e.g. to see whether rare allocations recur).
  benchmark::IterationCount kPackets = 100'000;
  if (const char* v = std::getenv("EGW_BENCH_PACKETS")) kPackets = std::atoll(v);
  for (bool null_protection : {true, false}) {
    for (bool all_active : {true, false}) {
      const std::string name = std::string("packet/") + (null_protection ? "null" : "test") + "/" +
                               (all_active ? "all_active" : "one_active");
      auto* b = benchmark::RegisterBenchmark(name.c_str(), packet_bench, null_protection, all_active);
      for (std::size_t n : kStreamCounts) b->Arg(static_cast<std::int64_t>(n));
      b->ArgName("streams")->Iterations(kPackets)->Unit(benchmark::kNanosecond);
    }
  }
  for (bool null_protection : {true, false}) {
    const std::string name = std::string("open/") + (null_protection ? "null" : "test");
    auto* b = benchmark::RegisterBenchmark(name.c_str(), open_bench, null_protection);
    for (std::size_t n : kStreamCounts) b->Arg(static_cast<std::int64_t>(n));
    b->ArgName("streams")->Iterations(1)->Unit(benchmark::kMillisecond);
  }
  auto* b = benchmark::RegisterBenchmark("idle_bytes", idle_bytes_bench);
  for (std::size_t n : kStreamCounts) b->Arg(static_cast<std::int64_t>(n));
  // Deterministic (no timing): one run is enough.
  b->ArgName("streams")->Iterations(1)->Repetitions(1)->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace egw::bench

int main(int argc, char** argv) {
  // Five repetitions unless the caller says otherwise: the summary gives medians.
  std::vector<char*> args(argv, argv + argc);
  bool repetitions_given = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]).rfind("--benchmark_repetitions", 0) == 0) repetitions_given = true;
  }
  std::string default_repetitions = "--benchmark_repetitions=5";
  if (!repetitions_given) args.push_back(default_repetitions.data());
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  egw::bench::register_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  egw::bench::print_summary();
  return 0;
}
