#include "tests/scenarios/fairness_experiment.h"

#include <cstdio>
#include <sstream>

namespace egw::scenarios {

double FairnessResult::ratio() const {
  const double independent = run.groups.at(1).total_bits_per_second;
  return independent > 0.0 ? run.groups.at(0).total_bits_per_second / independent : 0.0;
}

double FairnessResult::jain_ensemble() const {
  return jain_index(run.groups.at(0).stream_bits_per_second);
}

double FairnessResult::jain_independent() const {
  return jain_index(run.groups.at(1).stream_bits_per_second);
}

SeedStats FairnessResult::ratio_stats() const { return seed_stats(run_ratios(run, 0, 1)); }

namespace {
SeedStats jain_per_run(const GroupResult& g) {
  std::vector<double> v;
  for (const auto& streams : g.run_stream_bits_per_second) v.push_back(jain_index(streams));
  return seed_stats(std::move(v));
}
}  // namespace

SeedStats FairnessResult::jain_ensemble_stats() const { return jain_per_run(run.groups.at(0)); }
SeedStats FairnessResult::jain_independent_stats() const { return jain_per_run(run.groups.at(1)); }

FairnessResult run_fairness(const FairnessParams& params) {
  FairnessResult r;
  r.params = params;
  // The independent flows: one connection (own ensemble, one member) each.
  r.run = run_competition(params.path,
                          {{"n_flows x4", congestion::CouplingMode::n_flows, params.streams, true},
                           {"independent x4", congestion::CouplingMode::single, params.streams, false}});
  return r;
}

std::string report_fairness(const FairnessResult& r) {
  std::ostringstream out;
  char line[200];
  out << "Fairness (issue 2 s5 item 2): `n_flows` ensemble of " << r.params.streams << " vs "
      << r.params.streams << " independent NewReno flows, steady state "
      << to_seconds(r.params.path.warmup) << "-" << to_seconds(r.params.path.horizon) << " s\n"
      << "  " << r.run.describe << "\n";
  for (const GroupResult& g : r.run.groups) {
    std::snprintf(line, sizeof line, "  %-16s %7.3f Mbit/s  streams:", g.label.c_str(),
                  g.total_bits_per_second / 1e6);
    out << line;
    for (double bps : g.stream_bits_per_second) {
      std::snprintf(line, sizeof line, " %.3f", bps / 1e6);
      out << line;
    }
    out << "  (loss rounds " << g.loss_rounds << ", RTOs " << g.rto_count << ")\n";
  }
  std::snprintf(line, sizeof line,
                "  ratio ensemble/independent %.3f (criterion 0.75-1.33); link drops %llu, "
                "utilization %.3f\n",
                r.ratio(), static_cast<unsigned long long>(r.run.bottleneck_drops),
                r.run.bottleneck_utilization);
  out << line;
  std::snprintf(line, sizeof line,
                "  Jain index of the mean throughputs: ensemble members %.4f, independent flows %.4f\n",
                r.jain_ensemble(), r.jain_independent());
  out << line;
  out << "  over " << r.run.runs << " seeds (random starts in the first "
      << to_seconds(r.params.path.start_spread) << " s): ratio " << format_stats(r.ratio_stats(), 1.0, "", 3)
      << "\n  Jain ensemble (criterion: mean >= 0.99) " << format_stats(r.jain_ensemble_stats(), 1.0, "", 4)
      << "\n  Jain independent " << format_stats(r.jain_independent_stats(), 1.0, "", 4) << "\n";
  out << "  paper (EFCM, TKN-04-007, fig. 5.3/5.4, 2 NewReno connections, 100 ms): "
         "coupled 0.9977 vs uncoupled 0.8112\n"
         "  (reliable last hop, fig. 5.1/5.2: 0.9996 vs 0.6098)\n";
  return out.str();
}

}  // namespace egw::scenarios
