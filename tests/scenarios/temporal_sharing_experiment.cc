#include "tests/scenarios/temporal_sharing_experiment.h"

#include <cstdio>
#include <sstream>

#include "congestion/temporal_cache.h"

namespace egw::scenarios {

namespace {

TemporalSharingRun run_page(const TemporalSharingParams& params, EtcpPage page,
                            std::string* network) {
  TemporalSharingRun run;
  run.page = page;
  const WebPagesParams& web = params.web;
  {
    // Both caches outlive the Scenario (declared first, destroyed last).
    congestion::TemporalCache client_cache;
    congestion::TemporalCache server_cache;
    sim::Scenario s(web_path_config(web));
    if (network->empty()) *network = s.describe();
    sim::PairConfig pc = web_pair_config(web, etcp_preempt_variant());
    pc.client_cache = &client_cache;
    pc.server_cache = &server_cache;
    const auto pair = s.add_pair(pc);

    auto& first = s.add_web(pair, etcp_page(page), web_client_config(web), instant_at(ms(0)));
    s.run_until_done(instant_at(web.deadline));
    run.first = fetch_times(s, pair, first);
    run.first_resumed = s.server(pair).connection().stats().ensemble.resumed;
    if (!first.page_completed_at()) return run;  // second stays incomplete

    // The idle time counts from the end of the first page at the client.
    const Instant second_start = *first.page_completed_at() + params.idle;
    auto& second = s.add_web(pair, etcp_page(page), web_client_config(web), second_start);
    s.run_until_done(second_start + web.deadline);
    run.second = fetch_times(s, pair, second);
    run.second.bottleneck_drops -= run.first.bottleneck_drops;  // link counters are cumulative
    const auto server = s.server(pair).connection().stats();
    run.ensembles_started = server.ensembles_started;
    run.second_resumed = server.ensemble.resumed;
    run.client_ensembles_started = s.client(pair).connection().stats().ensembles_started;
  }
  {
    sim::Scenario s(web_path_config(web));
    const auto pair = s.add_pair(web_pair_config(web, reno_bundle_variant()));
    auto& reno = s.add_web(pair, etcp_page(page), web_client_config(web), instant_at(ms(0)));
    s.run_until_done(instant_at(web.deadline));
    run.reno = fetch_times(s, pair, reno);
  }
  return run;
}

}  // namespace

TemporalSharingResult run_temporal_sharing(const TemporalSharingParams& params) {
  TemporalSharingResult result;
  result.params = params;
  for (const EtcpPage page : params.web.pages) {
    result.runs.push_back(run_page(params, page, &result.network));
  }
  return result;
}

std::string report_temporal_sharing(const TemporalSharingResult& result) {
  std::ostringstream out;
  char line[256];
  out << "E-TCP temporal sharing (seed 000 section 5, realistic scenario): " << result.network
      << ", concurrency " << result.params.web.max_concurrent << ", IW "
      << result.params.web.initial_window_packets << " pkt, idle "
      << to_seconds(result.params.idle) << " s, etcp-preempt with caches on both sides\n";
  std::snprintf(line, sizeof line, "%-9s %9s %9s %9s %9s %8s %8s %9s %9s %5s %8s\n", "page",
                "html1_ms", "html2_ms", "page1_ms", "page2_ms", "html_%", "page_%",
                "reno_html", "reno_page", "ens", "resumed");
  out << line;
  for (const auto& r : result.runs) {
    std::snprintf(line, sizeof line,
                  "%-9s %9.1f %9.1f %9.1f %9.1f %+7.1f%% %+7.1f%% %9.1f %9.1f %5llu %8s%s\n",
                  std::string(to_string(r.page)).c_str(), to_seconds(r.first.html) * 1e3,
                  to_seconds(r.second.html) * 1e3, to_seconds(r.first.page) * 1e3,
                  to_seconds(r.second.page) * 1e3, percent_faster(r.second.html, r.first.html),
                  percent_faster(r.second.page, r.first.page), to_seconds(r.reno.html) * 1e3,
                  to_seconds(r.reno.page) * 1e3,
                  static_cast<unsigned long long>(r.ensembles_started),
                  r.second_resumed ? "yes" : "no",
                  r.first.complete && r.second.complete ? "" : "  INCOMPLETE");
    out << line;
  }
  out << "html_% / page_%: second fetch faster than the first (paper section 5, realistic "
         "scenario: HTML 17-53 %, page 10-28 %).\n";
  out << "Repeated fetch vs reno bundle, % faster (paper: HTML 30-8? %, the digit is clipped in our copy; page 32-72 %):\n";
  for (const auto& r : result.runs) {
    std::snprintf(line, sizeof line, "  %-9s html %+6.1f %%   page %+6.1f %%\n",
                  std::string(to_string(r.page)).c_str(), percent_faster(r.second.html, r.reno.html),
                  percent_faster(r.second.page, r.reno.page));
    out << line;
  }
  return out.str();
}

}  // namespace egw::scenarios
