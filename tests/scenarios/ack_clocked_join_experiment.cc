#include "tests/scenarios/ack_clocked_join_experiment.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tests/sim/scenario.h"

namespace egw::sim {

namespace {

using congestion::CouplingMode;
using congestion::JoinMode;

struct Variant {
  const char* label;
  CouplingMode coupling;
  JoinMode join;
  bool with_short;
};

constexpr std::uint16_t kLongPort = 5001;
constexpr std::uint16_t kShortPort = 5002;

AckClockedJoinRun run_variant(const AckClockedJoinParams& p, const Variant& v,
                              std::string* describe) {
  PathConfig path;
  path.bottleneck_bits_per_second = p.bottleneck_bits_per_second;
  path.one_way_delay = p.one_way_delay;
  path.queue_limit_packets = p.queue_limit_packets;
  path.packet_bytes = p.packet_bytes;
  path.max_pairs = 1;
  path.seed = p.seed;
  Scenario s(path);
  if (describe) *describe = s.describe();

  PairConfig pair_config;
  pair_config.coupling = v.coupling;
  pair_config.join = v.join;
  pair_config.law = p.law;
  pair_config.initial_window_packets = p.initial_window_packets;
  // Both streams are bulk; `fair` states the equal shares of seed 003 outright.
  pair_config.policy = congestion::SchedulingPolicy::fair;
  const std::size_t pair = s.add_pair(pair_config);

  BulkTransfer& long_flow =
      s.add_bulk(pair, {.bytes = p.long_bytes, .port = kLongPort}, instant_at(p.long_start));
  BulkTransfer* short_flow = nullptr;
  if (v.with_short) {
    short_flow = &s.add_bulk(pair, {.bytes = p.short_bytes, .port = kShortPort},
                             instant_at(p.short_start));
  }

  AckClockedJoinRun run;
  run.label = v.label;
  tunnel::Connection& sender = s.server(pair).connection();
  Link& bottleneck = s.network().reverse();  // downloads flow server -> client

  // The join: the instant the sender's ensemble counts two members. Without
  // a short stream, the instant its request would have arrived.
  s.run_until(instant_at(p.short_start));
  if (short_flow) {
    s.loop().run_until([&] { return sender.stats().ensemble.members >= 2; },
                       instant_at(p.short_start + ms(1'000)));
  } else {
    s.run_until(instant_at(p.short_start + p.one_way_delay));
  }
  run.join_at = s.now();
  run.rtt_at_join = sender.stats().ensemble.srtt;
  const Instant window_end = run.join_at + run.rtt_at_join;
  run.max_queue_in_window = bottleneck.queue_packets();
  bottleneck.set_observer([&run, window_end](const LinkEvent& e) {
    if (e.time >= window_end) return;
    run.max_queue_in_window = std::max(run.max_queue_in_window, e.queue_packets);
    if (e.kind == LinkEvent::Kind::drop) ++run.drops_in_window;
  });
  s.run_until(window_end);
  bottleneck.set_observer({});

  s.run_until(instant_at(p.horizon));
  run.long_bytes_by_horizon = long_flow.bytes_delivered_by(instant_at(p.horizon));
  run.long_complete_by_horizon = long_flow.complete();
  if (short_flow) run.short_fct = short_flow->completion_time();
  run.drops_total = bottleneck.stats().dropped_total();
  run.mismatches = long_flow.mismatches() + (short_flow ? short_flow->mismatches() : 0);
  return run;
}

double ms_of(Duration d) { return static_cast<double>(d.count()) / 1e3; }

}  // namespace

double AckClockedJoinResult::fct_reduction() const {
  if (!ack_clocked.short_fct || !uncoupled.short_fct || uncoupled.short_fct->count() == 0) return 0;
  return 1.0 - static_cast<double>(ack_clocked.short_fct->count()) /
                   static_cast<double>(uncoupled.short_fct->count());
}

double AckClockedJoinResult::long_cost() const {
  if (no_join.long_bytes_by_horizon == 0) return 1.0;
  return 1.0 - static_cast<double>(ack_clocked.long_bytes_by_horizon) /
                   static_cast<double>(no_join.long_bytes_by_horizon);
}

AckClockedJoinResult run_ack_clocked_join(const AckClockedJoinParams& params) {
  AckClockedJoinResult r;
  r.params = params;
  const CouplingMode coupled = params.coupling;
  r.ack_clocked = run_variant(params, {"ack_clocked", coupled, JoinMode::ack_clocked, true}, &r.describe);
  r.immediate = run_variant(params, {"immediate", coupled, JoinMode::immediate, true}, nullptr);
  r.uncoupled = run_variant(params, {"uncoupled", CouplingMode::none, JoinMode::ack_clocked, true}, nullptr);
  r.no_join = run_variant(params, {"no_join", coupled, JoinMode::ack_clocked, false}, nullptr);
  r.single_ack_clocked =
      run_variant(params, {"single+ack", CouplingMode::single, JoinMode::ack_clocked, true}, nullptr);
  return r;
}

std::string report_ack_clocked_join(const AckClockedJoinResult& r) {
  const AckClockedJoinParams& p = r.params;
  std::ostringstream out;
  char line[256];
  out << "ACK-clocked join (seed 003): " << r.describe << "\n";
  std::snprintf(line, sizeof line,
                "  long %llu B at %.1f s, short %llu B at %.1f s, horizon %.1f s, IW %u, %s, "
                "coupled mode %s\n",
                static_cast<unsigned long long>(p.long_bytes), to_seconds(p.long_start),
                static_cast<unsigned long long>(p.short_bytes), to_seconds(p.short_start),
                to_seconds(p.horizon), p.initial_window_packets,
                p.law == congestion::WindowLawKind::cubic ? "CUBIC" : "NewReno",
                p.coupling == CouplingMode::n_flows ? "n_flows" : "single");
  out << line;
  out << "  variant       short FCT   long bytes@horizon  window [join, +srtt]    "
         "max queue  drops(window)  drops(total)\n";
  for (const AckClockedJoinRun* run :
       {&r.ack_clocked, &r.immediate, &r.uncoupled, &r.no_join, &r.single_ack_clocked}) {
    char fct[32] = "-";
    if (run->short_fct) std::snprintf(fct, sizeof fct, "%.0f ms", ms_of(*run->short_fct));
    std::snprintf(line, sizeof line,
                  "  %-12s %10s %19llu  [%.3f s, +%.0f ms] %12zu/%zu %14llu %13llu\n",
                  run->label.c_str(), fct, static_cast<unsigned long long>(run->long_bytes_by_horizon),
                  to_seconds(run->join_at.time_since_epoch()), ms_of(run->rtt_at_join),
                  run->max_queue_in_window, p.queue_limit_packets,
                  static_cast<unsigned long long>(run->drops_in_window),
                  static_cast<unsigned long long>(run->drops_total));
    out << line;
  }
  std::snprintf(line, sizeof line,
                "  short FCT reduction vs uncoupled: ours %.1f %% (paper: > 40 %% for capacities "
                "other than 1-2 Mbit/s)\n",
                100.0 * r.fct_reduction());
  out << line;
  std::snprintf(line, sizeof line,
                "  long stream cost (bytes by horizon vs no join): ours %.2f %% (paper: <= 0.66 %%)\n",
                100.0 * r.long_cost());
  out << line;
  return out.str();
}

}  // namespace egw::sim
