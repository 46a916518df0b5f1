#include "tests/scenarios/integrity_experiment.h"

#include <cstdio>
#include <sstream>

#include "tests/sim/scenario.h"

namespace egw::scenarios {

bool IntegrityResult::intact() const {
  if (!all_complete || streams.empty()) return false;
  for (const IntegrityStream& s : streams) {
    if (!s.complete || s.reset || s.mismatches != 0 || s.delivered_bytes != s.size_bytes) return false;
  }
  return true;
}

IntegrityResult run_integrity(const IntegrityParams& p) {
  PathConfig path;
  path.bottleneck_bits_per_second = p.bottleneck_bits_per_second;
  path.one_way_delay = p.one_way_delay;
  path.packet_bytes = p.packet_bytes;
  path.queue_limit_packets = p.queue_limit_packets;
  path.loss_probability = p.loss_probability;
  path.max_jitter = p.max_jitter;
  path.max_pairs = 1;
  path.seed = p.seed;
  Scenario s(path);
  PairConfig pc;
  pc.coupling = p.coupling;
  const std::size_t pair = s.add_pair(pc);

  std::vector<BulkTransfer*> bulks;
  Instant start = instant_at(ms(0));
  std::mt19937_64 start_rng = start_time_rng(p.seed);
  for (std::size_t i = 0; i < p.stream_bytes.size(); ++i) {
    BulkConfig c;
    c.bytes = p.stream_bytes[i];
    c.direction = i % 2 == 0 ? BulkConfig::Direction::server_to_client
                             : BulkConfig::Direction::client_to_server;
    c.port = static_cast<std::uint16_t>(5001 + i);
    const Instant at = p.start_spread.count() > 0
                           ? instant_at(random_offset(start_rng, ms(0), p.start_spread))
                           : start;
    bulks.push_back(&s.add_bulk(pair, c, at));
    start += p.start_spacing;
  }

  IntegrityResult r;
  r.params = p;
  r.describe = s.describe();
  r.all_complete = s.run_until_done(instant_at(p.deadline));
  r.finished_at = s.now();
  // StreamClosed needs the last ACKs of both directions too: a few RTOs more.
  s.run_until(s.now() + ms(5'000));

  for (const BulkTransfer* b : bulks) {
    IntegrityStream st;
    st.size_bytes = b->config().bytes;
    st.download = b->config().direction == BulkConfig::Direction::server_to_client;
    st.delivered_bytes = b->bytes_delivered();
    st.complete = b->complete();
    st.closed = b->closed();
    st.reset = b->reset();
    st.mismatches = b->mismatches();
    st.completion_time = b->completion_time();
    r.streams.push_back(st);
  }
  r.random_drops_forward = s.network().forward().stats().dropped(DropCause::random_loss);
  r.random_drops_reverse = s.network().reverse().stats().dropped(DropCause::random_loss);
  r.queue_drops = s.network().forward().stats().dropped(DropCause::queue_full) +
                  s.network().reverse().stats().dropped(DropCause::queue_full);
  for (TunnelHost* h : {&s.client(pair), &s.server(pair)}) {
    const auto st = h->connection().stats();
    r.datagrams_rejected += st.datagrams_forged + st.datagrams_malformed;
    r.retransmitted_bytes += st.stream_bytes_retransmitted;
    r.connection_closed = r.connection_closed || h->closed().has_value();
  }
  r.events = s.loop().events_run();
  return r;
}

IntegritySeeds run_integrity_seeds(const IntegrityParams& params, std::size_t seeds) {
  IntegritySeeds r;
  r.params = params;
  if (r.params.start_spread.count() == 0) r.params.start_spread = ms(1'000);
  for (std::size_t i = 0; i < seeds; ++i) {
    IntegrityParams p = r.params;
    p.seed = r.params.seed + i;
    r.runs.push_back(run_integrity(p));
    const IntegrityResult& x = r.runs.back();
    if (x.intact()) ++r.intact_runs;
    r.finished_s.add(to_seconds(x.finished_at.time_since_epoch()));
    r.retransmitted_kb.add(static_cast<double>(x.retransmitted_bytes) / 1e3);
    r.random_drops.add(static_cast<double>(x.random_drops_forward + x.random_drops_reverse));
  }
  r.finished_s.finish();
  r.retransmitted_kb.finish();
  r.random_drops.finish();
  return r;
}

std::string report_integrity_seeds(const std::vector<IntegritySeeds>& cases) {
  std::ostringstream out;
  out << "Integrity (issue 2 s5 item 8) over seeds: 8 concurrent streams, 4 each way, random "
         "starts in [0, 1 s), loss both directions, jitter 0-5 ms (reordering)\n";
  for (const IntegritySeeds& c : cases) {
    const char* coupling = c.params.coupling == congestion::CouplingMode::single  ? "single"
                           : c.params.coupling == congestion::CouplingMode::none ? "none"
                                                                                  : "n_flows";
    char line[160];
    std::snprintf(line, sizeof line, "  loss %.0f %%, coupling %-7s intact in %zu of %zu seeds\n",
                  100.0 * c.params.loss_probability, coupling, c.intact_runs, c.runs.size());
    out << line << "    done at " << format_stats(c.finished_s, 1.0, "s", 2)
        << "\n    random drops " << format_stats(c.random_drops, 1.0, "", 0)
        << "\n    retransmitted " << format_stats(c.retransmitted_kb, 1.0, "kB", 0) << "\n";
    for (const IntegrityResult& r : c.runs) {
      if (!r.intact()) out << "    NOT INTACT: " << r.describe << "\n";
    }
  }
  return out.str();
}

std::string report_integrity(const std::vector<IntegrityResult>& results) {
  std::ostringstream out;
  char line[240];
  out << "Integrity (issue 2 s5 item 8): 8 concurrent streams, 4 each way, loss both directions, "
         "jitter (reordering)\n";
  for (const IntegrityResult& r : results) {
    const char* coupling = r.params.coupling == congestion::CouplingMode::single  ? "single"
                           : r.params.coupling == congestion::CouplingMode::none ? "none"
                                                                                  : "n_flows";
    out << "  " << r.describe << ", coupling " << coupling << "\n";
    std::snprintf(line, sizeof line,
                  "    intact %s, done at %.2f s; random drops fwd/rev %llu/%llu, queue drops %llu, "
                  "retransmitted %llu B, rejected datagrams %llu, connection closed %d\n",
                  r.intact() ? "yes" : "NO", to_seconds(r.finished_at.time_since_epoch()),
                  static_cast<unsigned long long>(r.random_drops_forward),
                  static_cast<unsigned long long>(r.random_drops_reverse),
                  static_cast<unsigned long long>(r.queue_drops),
                  static_cast<unsigned long long>(r.retransmitted_bytes),
                  static_cast<unsigned long long>(r.datagrams_rejected), r.connection_closed);
    out << line;
    for (const IntegrityStream& s : r.streams) {
      std::snprintf(line, sizeof line,
                    "    %-4s %8llu B: delivered %8llu B, mismatches %llu, %s%s, %.2f s\n",
                    s.download ? "down" : "up", static_cast<unsigned long long>(s.size_bytes),
                    static_cast<unsigned long long>(s.delivered_bytes),
                    static_cast<unsigned long long>(s.mismatches),
                    s.complete ? "complete" : "INCOMPLETE", s.reset ? ", RESET" : "",
                    s.completion_time ? to_seconds(*s.completion_time) : -1.0);
      out << line;
    }
  }
  out << "  paper: none (the issue's own criterion: every byte complete and in order)\n";
  return out.str();
}

}  // namespace egw::scenarios
