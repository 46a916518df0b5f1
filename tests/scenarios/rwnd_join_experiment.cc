#include "tests/scenarios/rwnd_join_experiment.h"

#include <sstream>

#include "tests/scenarios/sender_trace.h"
#include "tests/sim/scenario.h"
#include "tests/sim/shaped_stream.h"

namespace egw::scenarios {

namespace {

struct Outcome {
  std::optional<Duration> fct;
  SenderTrace::Window first_rtt;
  SenderTrace::Window until_done;
  std::uint64_t packets_before_join = 0;
  std::uint64_t mismatches = 0;
};

Outcome run_once(const RwndJoinParams& p, congestion::CouplingMode coupling, std::uint64_t seed,
                 std::string* describe) {
  std::mt19937_64 rng = start_time_rng(seed);
  const Instant long_at = instant_at(random_offset(rng, p.long_window_from, p.start_window));
  const Instant join_at = instant_at(random_offset(rng, p.short_window_from, p.start_window));

  sim::Scenario s(p.path.path_config(1, seed));
  if (describe) *describe = s.describe();
  sim::PairConfig pc;
  pc.coupling = coupling;
  pc.initial_window_packets = p.initial_window_packets;
  pc.customize = [&p](tunnel::ConnectionConfig& c) {
    c.stream_receive_window_bytes = p.stream_window_bytes;
    c.ensemble.pacing.enabled = p.pacing;
  };
  const std::size_t pair = s.add_pair(pc);

  sim::ShapedStream long_stream(s.loop(),
                                {.total_bytes = p.long_bytes,
                                 .read_chunk_bytes = p.long_read_bytes,
                                 .read_period = p.long_read_period},
                                s.client(pair), s.server(pair));
  long_stream.start_at(long_at);
  sim::BulkTransfer& short_stream =
      s.add_bulk(pair,
                 {.bytes = p.short_bytes, .direction = sim::BulkConfig::Direction::client_to_server,
                  .port = 5002},
                 join_at);
  SenderTrace trace(s.network().forward(), nullptr);
  s.loop().run_until([&] { return short_stream.complete(); }, join_at + ms(30'000));
  const Instant done = s.now();

  Outcome o;
  o.fct = short_stream.completion_time();
  const Duration rtt = 2 * p.path.one_way_delay;
  o.first_rtt = trace.window(join_at, join_at + rtt);
  o.until_done = trace.window(join_at, done + ms(1));
  o.packets_before_join = trace.window(join_at - ms(1'000), join_at).packets;
  o.mismatches = long_stream.mismatches() + short_stream.mismatches();
  return o;
}

void add(RwndJoinVariant& v, const Outcome& o) {
  if (o.fct) {
    v.fct_ms.add(to_seconds(*o.fct) * 1e3);
  } else {
    ++v.unfinished;
  }
  v.max_at_one_instant.add(static_cast<double>(o.until_done.max_at_one_instant));
  v.drops_first_rtt.add(static_cast<double>(o.first_rtt.drops));
  v.max_queue_first_rtt.add(static_cast<double>(o.first_rtt.max_queue));
  v.drops_until_done.add(static_cast<double>(o.until_done.drops));
  v.packets_before_join.add(static_cast<double>(o.packets_before_join));
  v.mismatches += o.mismatches;
}

void finish(RwndJoinVariant& v) {
  for (SeedStats* s : {&v.fct_ms, &v.max_at_one_instant, &v.drops_first_rtt, &v.max_queue_first_rtt,
                       &v.drops_until_done, &v.packets_before_join}) {
    s->finish();
  }
}

}  // namespace

RwndJoinResult run_rwnd_join(const RwndJoinParams& params) {
  RwndJoinResult r;
  r.params = params;
  r.coupled.name = "single+ack_clocked";
  r.uncoupled.name = "none";
  for (std::size_t i = 0; i < params.seeds; ++i) {
    const std::uint64_t seed = params.seed + i;
    const Outcome c = run_once(params, congestion::CouplingMode::single, seed,
                               r.describe.empty() ? &r.describe : nullptr);
    const Outcome u = run_once(params, congestion::CouplingMode::none, seed, nullptr);
    add(r.coupled, c);
    add(r.uncoupled, u);
    if (c.fct && u.fct) r.fct_ratio.add(to_seconds(*c.fct) / to_seconds(*u.fct));
  }
  finish(r.coupled);
  finish(r.uncoupled);
  r.fct_ratio.finish();
  return r;
}

std::string report_rwnd_join(const RwndJoinResult& r) {
  const RwndJoinParams& p = r.params;
  std::ostringstream out;
  out << "Join beside a receive-window-limited long stream: " << r.describe << " (first seed), "
      << p.seeds << " seeds\n";
  out << "  long " << p.long_bytes / 1'000'000 << " MB from [0, 1) s, its reader "
      << p.long_read_bytes / 1024 << " KB every " << to_seconds(p.long_read_period) * 1e3
      << " ms (" << p.stream_window_bytes / 1024 << " KB stream windows); short "
      << p.short_bytes / 1000
      << " KB joins in [5, 6) s; IW " << p.initial_window_packets << ", NewReno\n";
  for (const RwndJoinVariant* v : {&r.coupled, &r.uncoupled}) {
    out << "  " << v->name << ":\n"
        << "    short FCT " << format_stats(v->fct_ms, 1.0, "ms", 0) << "\n"
        << "    max packets at one instant (join..done) " << format_stats(v->max_at_one_instant, 1.0, "", 1)
        << "  (both streams; coupled < half of uncoupled)\n"
        << "    drops in the first RTT " << format_stats(v->drops_first_rtt, 1.0, "", 1)
        << "  (coupled: at most 1), max queue " << format_stats(v->max_queue_first_rtt, 1.0, "", 1) << " of "
        << p.path.queue_limit_packets << "\n"
        << "    drops until the short stream completed " << format_stats(v->drops_until_done, 1.0, "", 1)
        << "\n    sender packets in the second before the join (long stream) "
        << format_stats(v->packets_before_join, 1.0, "", 1) << "\n";
    if (v->unfinished > 0 || v->mismatches > 0) {
      out << "    UNFINISHED " << v->unfinished << ", mismatches " << v->mismatches << "\n";
    }
  }
  out << "  FCT single / none per seed " << format_stats(r.fct_ratio, 1.0, "", 3)
      << "  (goal: mean <= 1)\n";
  return out.str();
}

}  // namespace egw::scenarios
