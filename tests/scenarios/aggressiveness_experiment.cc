#include "tests/scenarios/aggressiveness_experiment.h"

#include <cstdio>
#include <sstream>

namespace egw::scenarios {

double AggressivenessResult::bundle_to_flow_ratio(const CompetitionResult& r) {
  const double flow = r.groups.at(1).total_bits_per_second;
  return flow > 0.0 ? r.groups.at(0).total_bits_per_second / flow : 0.0;
}

SeedStats AggressivenessResult::run_ratio_stats(const CompetitionResult& r) {
  return seed_stats(run_ratios(r, 0, 1));
}

CompetitionResult run_bundle_vs_one_flow(const AggressivenessParams& p,
                                         congestion::CouplingMode coupling, std::size_t runs) {
  CompetitionPath path = p.path;
  path.runs = runs;
  const char* label = coupling == congestion::CouplingMode::single ? "single x4"
                      : coupling == congestion::CouplingMode::none ? "none x4"
                                                                    : "n_flows x4";
  return run_competition(path, {{label, coupling, p.bundle_streams, true},
                                {"one flow", congestion::CouplingMode::single, 1, true}});
}

AggressivenessResult run_aggressiveness(const AggressivenessParams& params) {
  AggressivenessResult r;
  r.params = params;
  r.coupled = run_bundle_vs_one_flow(params, congestion::CouplingMode::single, params.coupled_runs);
  r.uncoupled = run_bundle_vs_one_flow(params, congestion::CouplingMode::none, params.uncoupled_runs);
  return r;
}

std::string report_bundle_vs_one_flow(const CompetitionResult& r, const char* criterion) {
  std::ostringstream out;
  char line[200];
  out << "  " << r.describe << ", " << r.runs << " run(s) from this seed, averaged\n";
  for (const GroupResult& g : r.groups) {
    std::snprintf(line, sizeof line, "  %-12s %7.3f Mbit/s  streams:", g.label.c_str(),
                  g.total_bits_per_second / 1e6);
    out << line;
    for (double bps : g.stream_bits_per_second) {
      std::snprintf(line, sizeof line, " %.3f", bps / 1e6);
      out << line;
    }
    out << "  per run: " << format_stats(seed_stats(g.run_total_bits_per_second), 1e-6, "Mbit/s", 3);
    out << "  (decreases " << g.loss_rounds << ", RTOs " << g.rto_count << ")\n";
  }
  std::snprintf(line, sizeof line,
                "  ratio bundle/flow %.3f (criterion %s); link drops %llu, utilization %.3f\n",
                AggressivenessResult::bundle_to_flow_ratio(r), criterion,
                static_cast<unsigned long long>(r.bottleneck_drops), r.bottleneck_utilization);
  out << line;
  out << "  per-run ratio: " << format_stats(AggressivenessResult::run_ratio_stats(r), 1.0, "", 3)
      << "\n";
  return out.str();
}

std::string report_aggressiveness(const AggressivenessResult& r) {
  std::ostringstream out;
  out << "Aggressiveness (issue 2 s5 item 1): " << r.params.bundle_streams
      << " bulk streams vs one NewReno flow, random starts in the first "
      << to_seconds(r.params.path.start_spread) << " s, steady state " << to_seconds(r.params.path.warmup)
      << "-" << to_seconds(r.params.path.horizon) << " s\n";
  out << " coupled (`single` ensemble):\n" << report_bundle_vs_one_flow(r.coupled, "0.75-1.33");
  out << " uncoupled (`none` bundle):\n" << report_bundle_vs_one_flow(r.uncoupled, ">= 2.5");
  out << " paper (E-TCP, CCR 2000, s3/s4, no numbers): an ensemble is \"only as aggressive as a\n"
         "  single standard TCP connection\" (ratio 1); a Reno bundle of 4 is \"roughly four times\n"
         "  as aggressive as a single Reno connection\" (ratio ~4)\n";
  return out.str();
}

}  // namespace egw::scenarios
