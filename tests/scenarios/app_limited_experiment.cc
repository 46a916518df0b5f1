#include "tests/scenarios/app_limited_experiment.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tests/scenarios/model_law_experiment.h"
#include "tests/scenarios/sender_trace.h"
#include "tests/sim/scenario.h"
#include "tests/sim/shaped_stream.h"

namespace egw::scenarios {

namespace {

AppLimitedCase run_case(const AppLimitedParams& p, bool app_limited) {
  sim::Scenario s(p.path.path_config());
  sim::PairConfig pc;
  pc.initial_window_packets = p.initial_window_packets;
  pc.law = p.law;
  if (!app_limited) {
    pc.customize = [&p](tunnel::ConnectionConfig& c) { c.stream_receive_window_bytes = p.rwnd_bytes; };
  }
  const std::size_t pair = s.add_pair(pc);
  sim::ShapedStreamConfig sc;
  Duration duration{0};
  if (app_limited) {
    sc.total_bytes = p.app_write_bytes * p.app_writes;
    sc.write_chunk_bytes = p.app_write_bytes;
    sc.write_period = p.app_write_period;
    duration = p.app_write_period * static_cast<std::int64_t>(p.app_writes);
  } else {
    sc.total_bytes = p.rwnd_total_bytes;
    sc.read_chunk_bytes = p.rwnd_read_bytes;
    sc.read_period = p.rwnd_read_period;
    duration = p.rwnd_duration;
  }
  sim::ShapedStream stream(s.loop(), sc, s.client(pair), s.server(pair));
  tunnel::Connection& sender = s.client(pair).connection();
  SenderTrace trace(s.network().forward(), &sender);
  stream.start_at(instant_at(ms(0)));
  s.run_until(instant_at(duration));
  trace.stop();

  AppLimitedCase c;
  c.name = app_limited ? "app_limited" : "rwnd_limited";
  c.describe = s.describe();
  c.max_cwnd = trace.max_cwnd();
  c.max_in_flight = trace.max_in_flight();
  c.max_bw_bytes_per_s = trace.max_bottleneck_bytes_per_s();
  c.final_cwnd = sender.stats().ensemble.cwnd_bytes;
  c.bytes_read = stream.bytes_read();
  c.mismatches = stream.mismatches();
  const ByteCount packet = p.path.packet_bytes;
  c.bound = std::max<ByteCount>(p.initial_window_packets * packet, 2 * c.max_in_flight) + 3 * packet;
  return c;
}

}  // namespace

AppLimitedResult run_app_limited(const AppLimitedParams& params) {
  AppLimitedResult r;
  r.params = params;
  r.app_limited = run_case(params, true);
  r.rwnd_limited = run_case(params, false);
  return r;
}

std::string report_app_limited(const AppLimitedResult& r) {
  const AppLimitedParams& p = r.params;
  std::ostringstream out;
  char line[300];
  out << "Application- and receiver-limited senders (cwnd validation): " << r.app_limited.describe
      << ", IW " << p.initial_window_packets << ", " << law_name(p.law) << ", single\n";
  std::snprintf(line, sizeof line,
                "  app_limited:  %llu B every %.0f ms for %zu writes; rwnd_limited: stream window "
                "%llu KB, reader %llu KB every %.0f ms, %.0f s\n",
                static_cast<unsigned long long>(p.app_write_bytes), to_seconds(p.app_write_period) * 1e3,
                p.app_writes, static_cast<unsigned long long>(p.rwnd_bytes / 1024),
                static_cast<unsigned long long>(p.rwnd_read_bytes / 1024),
                to_seconds(p.rwnd_read_period) * 1e3, to_seconds(p.rwnd_duration));
  out << line;
  out << "  case          max in flight   max cwnd      final cwnd    goal: cwnd <= max(IW, 2 x flight) + 3 pkts\n";
  for (const AppLimitedCase* c : {&r.app_limited, &r.rwnd_limited}) {
    const double pkt = static_cast<double>(p.path.packet_bytes);
    std::snprintf(line, sizeof line,
                  "  %-12s %9.1f pkts %9.1f pkts %9.1f pkts   bound %.1f pkts: %s (read %llu B, "
                  "mismatches %llu, model bw max %.2f Mbit/s)\n",
                  c->name.c_str(), static_cast<double>(c->max_in_flight) / pkt,
                  static_cast<double>(c->max_cwnd) / pkt, static_cast<double>(c->final_cwnd) / pkt,
                  static_cast<double>(c->bound) / pkt,
                  c->final_cwnd <= c->bound && c->max_cwnd <= c->bound ? "met" : "MISSED",
                  static_cast<unsigned long long>(c->bytes_read),
                  static_cast<unsigned long long>(c->mismatches), c->max_bw_bytes_per_s * 8e-6);
    out << line;
  }
  out << "  (RFC 7661 / RFC 9002 7.8: a sender that does not use its window must not grow it)\n";
  return out.str();
}

}  // namespace egw::scenarios
