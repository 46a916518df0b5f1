#include "tests/scenarios/fast_start_experiment.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <sstream>
#include <stdexcept>

#include "congestion/temporal_cache.h"
#include "tests/sim/scenario.h"

namespace egw::scenarios {

namespace {

using sim::BulkConfig;
using sim::BulkTransfer;
using sim::LinkEvent;
using sim::PairConfig;
using sim::PathConfig;
using sim::Scenario;

// Long enough to outlast any run: 1.5 Mbit/s for 60 s is ~11 MB.
constexpr ByteCount kCrossBytes = 64ull << 20;
// Nothing here should take this long; a run that does is a failure.
constexpr Duration kRunLimit = ms(120'000);

const char* name(FastStartVariant v) {
  switch (v) {
    case FastStartVariant::newreno: return "newreno (slow start)";
    case FastStartVariant::fs: return "fs";
    case FastStartVariant::fs_pdrop: return "fs-pdrop";
  }
  return "?";
}

const char* name(FastStartLoad l) { return l == FastStartLoad::light ? "light" : "heavy"; }

PathConfig path_for(const FastStartParams& p, FastStartVariant v, std::uint64_t seed) {
  PathConfig path;
  path.bottleneck_bits_per_second = p.bottleneck_bits_per_second;
  path.one_way_delay = p.one_way_delay;
  path.queue_limit_packets = p.queue_limit_packets;
  path.packet_bytes = p.packet_bytes;
  path.priority_drop = v == FastStartVariant::fs_pdrop;
  // Section 3.3: a low-priority packet is dropped only when the buffer is
  // full (and one queued is pushed out for a normal arrival), not earlier.
  path.low_priority_queue_fraction = 1.0;
  path.max_pairs = 1 + std::max(p.light_cross_flows, p.heavy_cross_flows);
  path.seed = seed;
  return path;
}

struct RunOutcome {
  Duration first_burst{0};
  Duration second_burst{0};
  std::uint64_t burst_packets_lost = 0;
  std::uint64_t low_priority_sent = 0;
  std::uint64_t low_priority_dropped = 0;
  std::uint64_t normal_dropped = 0;
  std::uint64_t rto_count = 0;
  std::uint64_t loss_rounds = 0;
  bool resumed = false;
  double cross_flow_share = 0.0;
};

RunOutcome run_once(const FastStartParams& p, FastStartLoad load, FastStartVariant variant,
                    std::size_t run, std::string* describe) {
  const std::uint64_t seed = p.seed + run;
  std::mt19937_64 rng(seed);  // only the cross flows' start times
  auto spread = [&] {
    const auto span_us = static_cast<std::uint64_t>(p.start_spread.count());
    return span_us == 0 ? Duration{0} : us(static_cast<std::int64_t>(rng() % span_us));
  };

  Scenario s(path_for(p, variant, seed));
  if (describe) *describe = s.describe();

  // Cross traffic: no cache; the receiver's 8 KB window is its maximum window.
  PairConfig cross;
  cross.initial_window_packets = p.initial_window_packets;
  cross.customize = [&p](tunnel::ConnectionConfig& c) {
    c.stream_receive_window_bytes = p.cross_receive_window_bytes;
  };
  const BulkConfig cross_bulk{.bytes = kCrossBytes};
  std::vector<BulkTransfer*> light_flows;
  const std::size_t light_flows_now = load == FastStartLoad::light ? p.light_cross_flows : 0;
  for (std::size_t i = 0; i < light_flows_now; ++i) {
    light_flows.push_back(&s.add_bulk(s.add_pair(cross), cross_bulk, instant_at(spread())));
  }

  // The bursty pair; only its sender (the server) needs a cache.
  congestion::TemporalCache cache;
  PairConfig bursty;
  bursty.initial_window_packets = p.initial_window_packets;
  if (variant != FastStartVariant::newreno) bursty.server_cache = &cache;
  bursty.customize = [&p](tunnel::ConnectionConfig& c) {
    c.ensemble.resume.rtt_check_first = p.resume_rtt_check_first;
  };
  const std::size_t pair = s.add_pair(bursty);
  const BulkConfig burst{.bytes = p.burst_bytes, .port = 6001};

  RunOutcome out;
  BulkTransfer& first = s.add_bulk(pair, burst, instant_at(p.first_burst_at));
  if (!s.loop().run_until([&] { return first.complete(); }, instant_at(kRunLimit))) {
    throw std::runtime_error("fast start: first burst did not complete");
  }
  out.first_burst = *first.completion_time();
  const Instant idle_from = *first.completed_at();
  const Instant second_at = idle_from + p.idle;

  if (load == FastStartLoad::heavy) {
    for (std::size_t i = 0; i < p.heavy_cross_flows; ++i) {
      const std::size_t cp = s.add_pair(cross);
      s.add_bulk(cp, cross_bulk, idle_from + p.heavy_start_after + spread());
    }
  }

  // Count drops at the bottleneck (data direction) during the second burst.
  bool counting = false;
  s.network().reverse().set_observer([&](const LinkEvent& e) {
    if (!counting || e.kind != LinkEvent::Kind::drop) return;
    ++(e.low_priority ? out.low_priority_dropped : out.normal_dropped);
  });
  s.loop().schedule_at(second_at, [&] { counting = true; });

  auto& sender = s.server(pair);
  const std::uint64_t lp_before_second = sender.stats().low_priority_sent;
  BulkTransfer& second = s.add_bulk(pair, burst, second_at);
  if (!s.loop().run_until([&] { return second.complete(); }, second_at + kRunLimit)) {
    throw std::runtime_error("fast start: second burst did not complete");
  }
  s.network().reverse().set_observer({});
  out.second_burst = *second.completion_time();
  const auto stats = sender.connection().stats();
  // The second burst runs in a new ensemble (the first one retired when its
  // stream ended), so these counters are the second burst's alone.
  out.burst_packets_lost = stats.ensemble.packets_lost;
  out.resumed = stats.ensemble.resumed;
  out.rto_count = stats.ensemble.rto_count;
  out.loss_rounds = stats.ensemble.loss_rounds;
  out.low_priority_sent = sender.stats().low_priority_sent - lp_before_second;

  // One light cross flow's share while the bursty pair was idle (skip 1 s
  // after the first burst so its tail is gone).
  if (load == FastStartLoad::light && !light_flows.empty()) {
    const Instant from = idle_from + ms(1'000);
    const ByteCount bytes =
        light_flows[0]->bytes_delivered_by(second_at) - light_flows[0]->bytes_delivered_by(from);
    out.cross_flow_share = static_cast<double>(bytes) * 8.0 / to_seconds(second_at - from) /
                           static_cast<double>(p.bottleneck_bits_per_second);
  }
  return out;
}

Duration mean(const std::vector<Duration>& v) {
  if (v.empty()) return Duration{0};
  Duration sum{0};
  for (Duration d : v) sum += d;
  return sum / static_cast<std::int64_t>(v.size());
}

}  // namespace

const FastStartCase& FastStartResult::at(FastStartLoad load, FastStartVariant variant) const {
  for (const auto& c : cases) {
    if (c.load == load && c.variant == variant) return c;
  }
  throw std::out_of_range("FastStartResult: no such case");
}

double FastStartResult::reduction(FastStartLoad load, FastStartVariant variant) const {
  const double base = to_seconds(at(load, FastStartVariant::newreno).mean_second_burst);
  return base <= 0.0 ? 0.0 : 1.0 - to_seconds(at(load, variant).mean_second_burst) / base;
}

SeedStats FastStartResult::reduction_stats(FastStartLoad load, FastStartVariant variant) const {
  const auto& base = at(load, FastStartVariant::newreno).second_burst_times;
  const auto& v = at(load, variant).second_burst_times;
  SeedStats s;
  for (std::size_t i = 0; i < base.size() && i < v.size(); ++i) {
    s.add(1.0 - to_seconds(v[i]) / to_seconds(base[i]));
  }
  return s.finish();
}

FastStartResult run_fast_start(const FastStartParams& params) {
  FastStartResult result;
  result.params = params;
  double share_sum = 0.0;
  for (FastStartLoad load : {FastStartLoad::light, FastStartLoad::heavy}) {
    const std::size_t runs = load == FastStartLoad::light ? params.light_runs : params.heavy_runs;
    if (runs == 0) continue;
    for (FastStartVariant v :
         {FastStartVariant::newreno, FastStartVariant::fs, FastStartVariant::fs_pdrop}) {
      FastStartCase c;
      c.load = load;
      c.variant = v;
      c.all_resumed = true;
      std::vector<Duration> firsts;
      for (std::size_t run = 0; run < runs; ++run) {
        const RunOutcome o = run_once(params, load, v, run, &result.describe);
        c.second_burst_times.push_back(o.second_burst);
        firsts.push_back(o.first_burst);
        c.burst_packets_lost += o.burst_packets_lost;
        c.low_priority_sent += o.low_priority_sent;
        c.low_priority_dropped += o.low_priority_dropped;
        c.normal_dropped += o.normal_dropped;
        c.rto_count += o.rto_count;
        c.loss_rounds += o.loss_rounds;
        c.all_resumed = c.all_resumed && o.resumed;
        if (load == FastStartLoad::light && v == FastStartVariant::newreno) {
          share_sum += o.cross_flow_share;
        }
      }
      c.mean_second_burst = mean(c.second_burst_times);
      for (Duration d : c.second_burst_times) c.second_burst_s.add(to_seconds(d));
      c.second_burst_s.finish();
      c.mean_first_burst = mean(firsts);
      result.cases.push_back(std::move(c));
    }
  }
  if (params.light_runs > 0) {
    result.cross_flow_share = share_sum / static_cast<double>(params.light_runs);
  }
  return result;
}

std::string report_fast_start(const FastStartResult& r) {
  const FastStartParams& p = r.params;
  std::ostringstream out;
  char line[256];
  out << "Fast start (seed 004 sections 3-4): 30 KB burst, " << to_seconds(p.idle)
      << " s idle, 30 KB burst; IW " << p.initial_window_packets << " packet(s); mean of "
      << p.light_runs << " (light) / " << p.heavy_runs << " (heavy) runs\n  " << r.describe
      << "\n";
  if (p.light_runs > 0) {
    std::snprintf(line, sizeof line,
                  "  cross traffic: %.0f KB stream receive window, one flow uses %.0f %% of the "
                  "link (paper: 8 KB max window, ~40 %%)\n",
                  static_cast<double>(p.cross_receive_window_bytes) / 1024.0,
                  100.0 * r.cross_flow_share);
    out << line;
  }
  out << "  load   variant                1st burst  2nd burst  vs newreno  lost  RTOs  decr"
         "  LP sent  LP drop  other drop\n";
  for (const auto& c : r.cases) {
    std::snprintf(line, sizeof line,
                  "  %-6s %-22s %7.3f s  %7.3f s  %+8.1f %%  %4llu  %4llu  %4llu  %7llu  %7llu  %10llu\n",
                  name(c.load), name(c.variant), to_seconds(c.mean_first_burst),
                  to_seconds(c.mean_second_burst), -100.0 * r.reduction(c.load, c.variant),
                  static_cast<unsigned long long>(c.burst_packets_lost),
                  static_cast<unsigned long long>(c.rto_count),
                  static_cast<unsigned long long>(c.loss_rounds),
                  static_cast<unsigned long long>(c.low_priority_sent),
                  static_cast<unsigned long long>(c.low_priority_dropped),
                  static_cast<unsigned long long>(c.normal_dropped));
    out << line;
  }
  out << "  2nd burst over seeds (mean, min, max, sd), and per-seed change vs newreno:\n";
  for (const auto& c : r.cases) {
    out << "  " << name(c.load) << " " << name(c.variant) << ": "
        << format_stats(c.second_burst_s, 1e3, "ms", 0);
    if (c.variant != FastStartVariant::newreno) {
      SeedStats change = r.reduction_stats(c.load, c.variant);
      for (double& x : change.values) x = -x;
      change.finish();
      out << "; change " << format_stats(change, 100.0, "%", 1);
    }
    out << "\n";
  }
  std::snprintf(line, sizeof line,
                "  light: %d cross flow(s) throughout; heavy: none in the first burst, %d "
                "started %.0f-%.0f s into the idle period\n",
                static_cast<int>(p.light_cross_flows), static_cast<int>(p.heavy_cross_flows),
                to_seconds(p.heavy_start_after), to_seconds(p.heavy_start_after + p.start_spread));
  out << line;
  out << "  paper: fast start cuts the 2nd burst's completion time by 50-65 % at low load "
         "(Fig. 2, 50 ms);\n"
         "         with load added during the idle time, fs-pdrop is similar to newreno or "
         "marginally worse (Fig. 4)\n";
  return out.str();
}

}  // namespace egw::scenarios
