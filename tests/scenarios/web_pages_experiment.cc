#include "tests/scenarios/web_pages_experiment.h"

#include <cstdio>
#include <sstream>

namespace egw::scenarios {

using congestion::CouplingMode;
using congestion::SchedulingPolicy;

WebVariant reno_bundle_variant() { return {"reno-bundle", CouplingMode::none, SchedulingPolicy::fair}; }
WebVariant etcp_preempt_variant() {
  return {"etcp-preempt", CouplingMode::single, SchedulingPolicy::preempt};
}

std::vector<WebVariant> etcp_variants() {
  return {reno_bundle_variant(),
          etcp_preempt_variant(),
          {"etcp-content", CouplingMode::single, SchedulingPolicy::content},
          {"etcp-decay", CouplingMode::single, SchedulingPolicy::decay},
          {"etcp-fair", CouplingMode::single, SchedulingPolicy::fair}};
}

sim::PathConfig web_path_config(const WebPagesParams& params) {
  return params.path.path_config(1, params.seed);
}

sim::PairConfig web_pair_config(const WebPagesParams& params, const WebVariant& variant) {
  sim::PairConfig pair;
  pair.coupling = variant.coupling;
  pair.policy = variant.policy;
  pair.initial_window_packets = params.initial_window_packets;
  pair.law = params.law;
  pair.customize = [params, variant](tunnel::ConnectionConfig& c) {
    c.ensemble.random_loss = variant.random_loss;
    c.ack_every_packets = params.ack_every_packets;
    c.ensemble.slow_start = params.slow_start;
    c.ensemble.send_one_on_recovery = params.send_one_on_recovery;
    c.ensemble.pacing.enabled = params.pacing;
    c.ensemble.resume.rtt_check_first = params.resume_rtt_check_first;
  };
  return pair;
}

sim::WebClientConfig web_client_config(const WebPagesParams& params) {
  return {.max_concurrent = params.max_concurrent, .port = 80, .links = params.links};
}

FetchTimes fetch_times(sim::Scenario& scenario, std::size_t pair, const sim::WebClient& web) {
  FetchTimes t;
  t.complete = web.complete();
  if (const auto h = web.html_time()) t.html = *h;
  if (const auto p = web.page_time()) t.page = *p;
  t.errors = web.errors();
  const auto server = scenario.server(pair).connection().stats();
  t.packets_lost = server.ensemble.packets_lost;
  t.rto_count = server.ensemble.rto_count;
  t.bottleneck_drops = scenario.network().reverse().stats().dropped_total();
  return t;
}

const FetchTimes* WebPagesResult::find(EtcpPage page, const std::string& variant) const {
  for (const auto& r : runs) {
    if (r.page == page && r.variant == variant) return &r.times;
  }
  return nullptr;
}

WebPagesResult run_web_pages(const WebPagesParams& params) {
  WebPagesResult result;
  result.params = params;
  for (const EtcpPage page : params.pages) {
    for (const WebVariant& variant : params.variants) {
      sim::Scenario s(web_path_config(params));
      if (result.network.empty()) result.network = s.describe();
      const auto pair = s.add_pair(web_pair_config(params, variant));
      auto& web = s.add_web(pair, etcp_page(page), web_client_config(params),
                            instant_at(ms(0)));
      s.run_until_done(instant_at(params.deadline));
      result.runs.push_back({page, variant.name, fetch_times(s, pair, web)});
    }
  }
  return result;
}

double percent_faster(Duration a, Duration b) {
  if (b.count() <= 0) return 0.0;
  return 100.0 * (1.0 - static_cast<double>(a.count()) / static_cast<double>(b.count()));
}

std::string report_web_pages(const WebPagesResult& result) {
  std::ostringstream out;
  char line[256];
  out << "E-TCP web pages (seed 000 section 4.4, realistic scenario): " << result.network
      << ", concurrency " << result.params.max_concurrent << ", IW "
      << result.params.initial_window_packets << " pkt\n";
  std::snprintf(line, sizeof line, "%-9s %-13s %9s %9s %6s %6s %4s %4s\n", "page", "variant",
                "html_ms", "page_ms", "lost", "drops", "rto", "err");
  out << line;
  for (const auto& r : result.runs) {
    const auto& t = r.times;
    std::snprintf(line, sizeof line, "%-9s %-13s %9.1f %9.1f %6llu %6llu %4llu %4llu%s\n",
                  std::string(to_string(r.page)).c_str(), r.variant.c_str(),
                  to_seconds(t.html) * 1e3, to_seconds(t.page) * 1e3,
                  static_cast<unsigned long long>(t.packets_lost),
                  static_cast<unsigned long long>(t.bottleneck_drops),
                  static_cast<unsigned long long>(t.rto_count),
                  static_cast<unsigned long long>(t.errors), t.complete ? "" : "  INCOMPLETE");
    out << line;
  }
  const std::string reno = reno_bundle_variant().name;
  const std::string pre = etcp_preempt_variant().name;
  out << "etcp-preempt vs reno-bundle, % faster (paper 4.4: HTML 4-75 %, whole page 17-61 %):\n";
  for (const EtcpPage page : result.params.pages) {
    const FetchTimes* r = result.find(page, reno);
    const FetchTimes* e = result.find(page, pre);
    if (!r || !e) continue;
    std::snprintf(line, sizeof line, "  %-9s html %+6.1f %%   page %+6.1f %%\n",
                  std::string(to_string(page)).c_str(), percent_faster(e->html, r->html),
                  percent_faster(e->page, r->page));
    out << line;
  }
  return out.str();
}

}  // namespace egw::scenarios
