#include "tests/scenarios/lossy_pages_experiment.h"

#include <cstdio>
#include <sstream>

namespace egw::scenarios {

const LossyPagesCell* LossyPagesResult::find(EtcpPage page, const std::string& variant) const {
  for (const auto& c : cells) {
    if (c.page == page && c.variant == variant) return &c;
  }
  return nullptr;
}

LossyPagesResult run_lossy_pages(const LossyPagesParams& params) {
  LossyPagesResult result;
  result.params = params;
  for (const EtcpPage page : params.web.pages) {
    for (const WebVariant& variant : params.web.variants) {
      LossyPagesCell cell{.page = page, .variant = variant.name};
      for (std::uint64_t seed = 1; seed <= params.seeds; ++seed) {
        WebPagesParams web = params.web;
        web.seed = seed;
        sim::PathConfig path = web_path_config(web);
        path.loss_probability = params.loss_probability;
        sim::Scenario s(path);
        if (result.network.empty()) result.network = s.describe();
        const auto pair = s.add_pair(web_pair_config(web, variant));
        auto& client = s.add_web(pair, etcp_page(page), web_client_config(web), instant_at(ms(0)));
        s.run_until_done(instant_at(web.deadline));
        const FetchTimes t = fetch_times(s, pair, client);
        if (!t.complete || t.errors != 0) ++cell.incomplete;
        cell.html_ms += to_seconds(t.html) * 1e3;
        cell.page_ms += to_seconds(t.page) * 1e3;
        cell.rtos += static_cast<double>(t.rto_count);
      }
      const double n = static_cast<double>(params.seeds);
      cell.html_ms /= n;
      cell.page_ms /= n;
      cell.rtos /= n;
      result.cells.push_back(cell);
    }
  }
  return result;
}

std::string report_lossy_pages(const LossyPagesResult& result) {
  std::ostringstream out;
  char line[256];
  const auto& p = result.params;
  out << "E-TCP pages under " << p.loss_probability * 100 << " % random loss each way, means of "
      << p.seeds << " seeds: " << result.network << ", concurrency " << p.web.max_concurrent
      << ", IW " << p.web.initial_window_packets << " pkt\n";
  std::snprintf(line, sizeof line, "%-9s %-15s %9s %9s %6s %s\n", "page", "variant", "html_ms",
                "page_ms", "rtos", "page vs uncoupled");
  out << line;
  const std::string none = reno_bundle_variant().name;
  for (const auto& c : result.cells) {
    const LossyPagesCell* base = result.find(c.page, none);
    std::snprintf(line, sizeof line, "%-9s %-15s %9.1f %9.1f %6.2f %+6.1f %%%s\n",
                  std::string(to_string(c.page)).c_str(), c.variant.c_str(), c.html_ms, c.page_ms,
                  c.rtos, base && base->page_ms > 0 ? 100.0 * (c.page_ms / base->page_ms - 1) : 0.0,
                  c.incomplete ? "  INCOMPLETE" : "");
    out << line;
  }
  return out.str();
}

}  // namespace egw::scenarios
