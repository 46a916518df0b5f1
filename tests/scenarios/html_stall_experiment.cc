#include "tests/scenarios/html_stall_experiment.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "congestion/temporal_cache.h"

#include "tests/scenarios/lossy_pages_experiment.h"
#include "tests/scenarios/model_law_experiment.h"
#include "tests/scenarios/temporal_sharing_iw10_experiment.h"

namespace egw::scenarios {

HtmlStallParams::HtmlStallParams() : web(LossyPagesParams{}.web) {
  web.law = congestion::WindowLawKind::model;
  variant = {"single-veno", congestion::CouplingMode::single, congestion::SchedulingPolicy::content,
             congestion::RandomLoss::veno};
}

double HtmlStallFetch::ratio() const {
  return bound.count() > 0 ? static_cast<double>(html.count()) / static_cast<double>(bound.count()) : 0;
}

std::size_t HtmlStallResult::stalls() const {
  return static_cast<std::size_t>(std::count_if(fetches.begin(), fetches.end(), [this](const auto& f) {
    return !f.complete || f.ratio() > params.stall_factor;
  }));
}

double HtmlStallResult::worst_ratio() const {
  double worst = 0;
  for (const auto& f : fetches) worst = std::max(worst, f.ratio());
  return worst;
}

double HtmlStallResult::mean_ratio(double loss, bool repeat) const {
  double sum = 0;
  std::size_t n = 0;
  for (const auto& f : fetches) {
    if (f.loss != loss || f.repeat != repeat) continue;
    sum += f.ratio();
    ++n;
  }
  return n ? sum / static_cast<double>(n) : 0;
}

namespace {

struct ServerCounters {
  std::uint64_t lost = 0, probes = 0, rtos = 0, rounds = 0;
  std::uint64_t client_lost = 0, client_probes = 0, client_rtos = 0;
};

ServerCounters server_counters(sim::Scenario& s, std::size_t pair) {
  const auto st = s.server(pair).connection().stats();
  const auto cl = s.client(pair).connection().stats();
  return {st.packets_lost, st.tail_probes, st.rtos, st.loss_rounds,
          cl.packets_lost, cl.tail_probes, cl.rtos};
}

HtmlStallFetch read_fetch(sim::Scenario& s, std::size_t pair, const sim::WebClient& web,
                          const ServerCounters& before) {
  HtmlStallFetch f;
  f.complete = web.complete();
  if (const auto h = web.html_time()) f.html = *h;
  const ServerCounters now = server_counters(s, pair);
  f.packets_lost = now.lost - before.lost;
  f.tail_probes = now.probes - before.probes;
  f.rtos = now.rtos - before.rtos;
  f.loss_rounds = now.rounds - before.rounds;
  f.client_lost = now.client_lost - before.client_lost;
  f.client_probes = now.client_probes - before.client_probes;
  f.client_rtos = now.client_rtos - before.client_rtos;
  Instant last{};
  for (std::uint32_t i = 0; i < web.objects().size(); ++i) {
    const sim::ObjectTiming& o = web.objects()[i];
    if (!web.page()[i].is_html || !o.completed_at || !o.requested_at) continue;
    if (*o.completed_at >= last) {
      last = *o.completed_at;
      f.slowest_html = i;
      f.slowest_html_time = *o.completed_at - *o.requested_at;
    }
  }
  return f;
}

void run_seed(const HtmlStallParams& p, EtcpPage page, double loss, std::uint64_t seed,
              HtmlStallResult& r) {
  WebPagesParams web = p.web;
  web.seed = seed;
  sim::PathConfig path = web_path_config(web);
  path.loss_probability = loss;
  // The gateway keeps a temporal cache on each side (proxy/gateway.h); both
  // outlive the Scenario (declared first, destroyed last).
  congestion::TemporalCache client_cache;
  congestion::TemporalCache server_cache;
  sim::Scenario s(path);
  if (r.network.empty()) r.network = s.describe();
  sim::PairConfig pc = web_pair_config(web, p.variant);
  if (p.caches) {
    pc.client_cache = &client_cache;
    pc.server_cache = &server_cache;
  }
  const auto pair = s.add_pair(pc);
  const Duration bound = html_lower_bound(web, page);
  auto& first = s.add_web(pair, etcp_page(page), web_client_config(web), instant_at(ms(0)));
  s.run_until_done(instant_at(web.deadline));
  HtmlStallFetch f1 = read_fetch(s, pair, first, {});
  f1.page = page, f1.loss = loss, f1.seed = seed, f1.bound = bound;
  r.fetches.push_back(f1);
  if (!first.page_completed_at()) return;
  const ServerCounters before = server_counters(s, pair);
  const Instant second_start = *first.page_completed_at() + p.idle;
  auto& second = s.add_web(pair, etcp_page(page), web_client_config(web), second_start);
  s.run_until_done(second_start + web.deadline);
  HtmlStallFetch f2 = read_fetch(s, pair, second, before);
  f2.page = page, f2.loss = loss, f2.seed = seed, f2.bound = bound, f2.repeat = true;
  r.fetches.push_back(f2);
}

}  // namespace

HtmlStallResult run_html_stall(const HtmlStallParams& params) {
  HtmlStallResult r;
  r.params = params;
  for (const double loss : params.losses) {
    for (const EtcpPage page : params.web.pages) {
      for (std::uint64_t seed = 1; seed <= params.seeds; ++seed) run_seed(params, page, loss, seed, r);
    }
  }
  return r;
}

std::string report_html_stall(const HtmlStallResult& r, std::size_t worst) {
  const HtmlStallParams& p = r.params;
  std::ostringstream out;
  char line[300];
  out << "HTML under random loss (" << law_name(p.web.law) << ", " << p.variant.name
      << (p.caches ? ", temporal caches" : ", no caches") << "): " << r.network << ", " << p.seeds << " seeds, first access and repeat after "
      << to_seconds(p.idle) << " s\n";
  for (const double loss : p.losses) {
    std::snprintf(line, sizeof line, "  loss %.0f %%: mean HTML / bound first %.2f, repeat %.2f\n",
                  loss * 100, r.mean_ratio(loss, false), r.mean_ratio(loss, true));
    out << line;
  }
  std::snprintf(line, sizeof line, "  stalls (> %.1fx or incomplete): %zu of %zu fetches, worst %.2fx\n",
                p.stall_factor, r.stalls(), r.fetches.size(), r.worst_ratio());
  out << line;
  std::vector<HtmlStallFetch> sorted = r.fetches;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.ratio() > b.ratio(); });
  out << "  worst: page loss seed access  html_ms bound_ms ratio  server: lost probes rtos rounds"
         "  client: lost probes rtos  slowest html obj (ms)\n";
  for (std::size_t i = 0; i < std::min(worst, sorted.size()); ++i) {
    const HtmlStallFetch& f = sorted[i];
    std::snprintf(line, sizeof line,
                  "  %-9s %3.0f%% %4llu %-6s %8.1f %8.1f %5.2f %5llu %6llu %4llu %6llu  %5llu %6llu %4llu"
                  "  #%u %.1f%s\n",
                  std::string(to_string(f.page)).c_str(), f.loss * 100,
                  static_cast<unsigned long long>(f.seed), f.repeat ? "repeat" : "first",
                  to_seconds(f.html) * 1e3, to_seconds(f.bound) * 1e3, f.ratio(),
                  static_cast<unsigned long long>(f.packets_lost), static_cast<unsigned long long>(f.tail_probes),
                  static_cast<unsigned long long>(f.rtos), static_cast<unsigned long long>(f.loss_rounds),
                  static_cast<unsigned long long>(f.client_lost), static_cast<unsigned long long>(f.client_probes),
                  static_cast<unsigned long long>(f.client_rtos),
                  f.slowest_html, to_seconds(f.slowest_html_time) * 1e3, f.complete ? "" : "  INCOMPLETE");
    out << line;
  }
  return out.str();
}

}  // namespace egw::scenarios
