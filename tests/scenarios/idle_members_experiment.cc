#include "tests/scenarios/idle_members_experiment.h"

#include <cstdio>
#include <sstream>

#include "tests/scenarios/model_law_experiment.h"

namespace egw::scenarios {

double IdleMembersCase::ratio() const {
  const double other = run.groups.at(1).total_bits_per_second;
  return other > 0.0 ? run.groups.at(0).total_bits_per_second / other : 0.0;
}

SeedStats IdleMembersCase::ratio_stats() const { return seed_stats(run_ratios(run, 0, 1)); }

IdleMembersResult run_idle_members(const IdleMembersParams& params) {
  IdleMembersResult r;
  r.params = params;
  for (std::size_t idle : params.idle_counts) {
    IdleMembersCase c;
    c.idle = idle;
    CompetitionGroup ensemble{"n_flows 1+" + std::to_string(idle) + " idle",
                              congestion::CouplingMode::n_flows, 1, true};
    ensemble.idle_streams = idle;
    c.run = run_competition(params.path,
                            {ensemble, {"one flow", congestion::CouplingMode::single, 1, true}});
    r.cases.push_back(std::move(c));
  }
  return r;
}

std::string report_idle_members(const IdleMembersResult& r) {
  std::ostringstream out;
  char line[240];
  out << "Idle members under n_flows (" << law_name(r.params.path.law)
      << "): 1 bulk + k idle streams vs one flow, steady state "
      << to_seconds(r.params.path.warmup) << "-" << to_seconds(r.params.path.horizon) << " s\n";
  if (!r.cases.empty()) out << "  " << r.cases.front().run.describe << ", " << r.cases.front().run.runs << " seeds\n";
  for (const IdleMembersCase& c : r.cases) {
    std::snprintf(line, sizeof line,
                  "  k = %zu idle: bulk %.3f Mbit/s, competitor %.3f Mbit/s, ratio of means %.2f "
                  "(goal 0.5-2); per seed ",
                  c.idle, c.run.groups[0].total_bits_per_second / 1e6,
                  c.run.groups[1].total_bits_per_second / 1e6, c.ratio());
    out << line << format_stats(c.ratio_stats(), 1.0, "", 2) << "\n";
  }
  out << "  (EFCM: an ensemble of n is as aggressive as n flows; an idle stream is no flow)\n";
  return out.str();
}

}  // namespace egw::scenarios
