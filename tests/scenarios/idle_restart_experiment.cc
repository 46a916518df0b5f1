#include "tests/scenarios/idle_restart_experiment.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tests/scenarios/model_law_experiment.h"
#include "tests/scenarios/sender_trace.h"
#include "tests/sim/scenario.h"
#include "tests/sim/shaped_stream.h"

namespace egw::scenarios {

std::uint64_t IdleRestartResult::bound_packets() const {
  const std::uint64_t half = cwnd_before_restart / params.path.packet_bytes / 2;
  return std::max<std::uint64_t>(params.initial_window_packets, half) + 2;
}

IdleRestartResult run_idle_restart(const IdleRestartParams& p) {
  IdleRestartResult r;
  r.params = p;
  sim::Scenario s(p.path.path_config());
  r.describe = s.describe();
  sim::PairConfig pc;
  pc.initial_window_packets = p.initial_window_packets;
  pc.law = p.law;
  const std::size_t pair = s.add_pair(pc);
  sim::TunnelHost& client = s.client(pair);

  // One long-lived stream (an HTTP/2-like connection): chunk 1 at 0.1 s,
  // chunk 2 one period later; open (not finished) in between, so the
  // connection PINGs and the ensemble stays alive.
  const Instant start = instant_at(ms(100));
  sim::ShapedStream stream(s.loop(),
                           {.total_bytes = 2 * p.chunk_bytes,
                            .write_chunk_bytes = p.chunk_bytes,
                            .write_period = p.period},
                           client, s.server(pair));
  stream.start_at(start);
  const Instant restart = start + p.period;
  s.loop().run_until([&] { return stream.bytes_read() >= p.chunk_bytes; }, start + ms(120'000));
  r.first_complete = stream.bytes_read() >= p.chunk_bytes;
  if (!r.first_complete) return r;
  r.first_done_at = s.now();
  s.run_until(s.now() + ms(1'000));  // the last ACKs
  const std::uint64_t sent_before_idle = client.stats().datagrams_sent;
  s.run_until(restart - us(1));
  r.pings_during_idle = client.stats().datagrams_sent - sent_before_idle;
  r.cwnd_before_restart = client.connection().stats().ensemble.cwnd_bytes;

  SenderTrace trace(s.network().forward(), nullptr);
  s.loop().run_until([&] { return stream.complete(); }, restart + ms(120'000));
  trace.stop();
  r.second_complete = stream.complete();
  if (r.second_complete) r.second_fct = *stream.completed_at() - restart;
  const SenderTrace::Window w = trace.window(restart, restart + p.first_rtt);
  r.packets_first_rtt = w.packets;
  r.low_priority_first_rtt = w.low_priority;
  r.max_at_one_instant = w.max_at_one_instant;
  r.drops_first_rtt = w.drops;
  r.connection_closed = client.closed().has_value() || s.server(pair).closed().has_value();
  r.ensembles_started = client.connection().stats().ensembles_started;
  r.mismatches = stream.mismatches();
  return r;
}

std::string report_idle_restart(const IdleRestartResult& r) {
  const IdleRestartParams& p = r.params;
  std::ostringstream out;
  char line[320];
  out << "Restart after idle inside a live ensemble: " << r.describe << ", IW "
      << p.initial_window_packets << ", " << law_name(p.law) << ", single\n";
  std::snprintf(line, sizeof line,
                "  one long-lived stream: %llu MB at 0.1 s (done at %.1f s), silence (%llu sender "
                "datagrams: PINGs), %llu MB more at %.0f s (%.0f s idle)\n",
                static_cast<unsigned long long>(p.chunk_bytes / 1'000'000),
                to_seconds(r.first_done_at.time_since_epoch()),
                static_cast<unsigned long long>(r.pings_during_idle),
                static_cast<unsigned long long>(p.chunk_bytes / 1'000'000),
                to_seconds(p.period) + 0.1,
                to_seconds(p.period) + 0.1 - to_seconds(r.first_done_at.time_since_epoch()));
  out << line;
  std::snprintf(line, sizeof line,
                "  cwnd before the restart %.0f pkts; first %.0f ms: %llu packets (goal <= %llu), "
                "%llu low priority (goal >= %lld), at most %llu at one instant (goal <= %u), %llu "
                "drops\n",
                static_cast<double>(r.cwnd_before_restart) /
                    static_cast<double>(p.path.packet_bytes),
                to_seconds(p.first_rtt) * 1e3, static_cast<unsigned long long>(r.packets_first_rtt),
                static_cast<unsigned long long>(r.bound_packets()),
                static_cast<unsigned long long>(r.low_priority_first_rtt),
                static_cast<long long>(r.packets_first_rtt) - static_cast<long long>(p.initial_window_packets),
                static_cast<unsigned long long>(r.max_at_one_instant), p.initial_window_packets,
                static_cast<unsigned long long>(r.drops_first_rtt));
  out << line;
  std::snprintf(line, sizeof line,
                "  second transfer %.3f s; connection closed %d, ensembles started %llu\n",
                r.second_fct ? to_seconds(*r.second_fct) : -1.0, r.connection_closed,
                static_cast<unsigned long long>(r.ensembles_started));
  out << line;
  out << "  (goal: at most half the old window in the first RTT, paced and marked low priority, "
         "or at most IW)\n";
  return out.str();
}

}  // namespace egw::scenarios
