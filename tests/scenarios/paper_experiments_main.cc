// paper_experiments: runs every experiment of the papers on the real tunnel
// core and congestion library over the simulated WAN and prints our numbers
// next to the papers' and the uncoupled baselines'. This is the demo until
// the gateway runs on real sockets; the scenario tests assert the same runs.
//
//   paper_experiments            all experiments
//   paper_experiments join web   only those whose name starts with an argument
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tests/scenarios/ack_clocked_join_experiment.h"
#include "tests/scenarios/aggressiveness_experiment.h"
#include "tests/scenarios/fairness_experiment.h"
#include "tests/scenarios/fast_start_experiment.h"
#include "tests/scenarios/integrity_experiment.h"
#include "tests/scenarios/tcp_session_experiment.h"
#include "tests/scenarios/temporal_sharing_experiment.h"
#include "tests/scenarios/web_pages_experiment.h"
#include "tests/scenarios/app_limited_experiment.h"
#include "tests/scenarios/idle_members_experiment.h"
#include "tests/scenarios/idle_restart_experiment.h"
#include "tests/scenarios/rwnd_join_experiment.h"
#include "tests/scenarios/temporal_sharing_iw10_experiment.h"
#include "tests/scenarios/lossy_pages_experiment.h"
#include "tests/scenarios/bulk_loss_experiment.h"

namespace {

using namespace egw::scenarios;

struct Experiment {
  std::string_view name;
  std::string_view title;
  std::function<std::string()> run_and_report;
  bool only_when_named = false;  // long checks: not part of the default run
};

std::vector<IntegritySeeds> run_integrity_matrix() {
  std::vector<IntegritySeeds> results;
  for (double loss : {0.01, 0.05}) {
    IntegrityParams p;
    p.loss_probability = loss;
    results.push_back(run_integrity_seeds(p, 20));
  }
  IntegrityParams none;
  none.loss_probability = 0.05;
  none.coupling = egw::congestion::CouplingMode::none;
  results.push_back(run_integrity_seeds(none, 20));
  return results;
}

const std::vector<Experiment>& experiments() {
  static const std::vector<Experiment> all = {
      {"aggressiveness", "1. Aggressiveness: single ensemble of 4 vs one flow (E-TCP, TCP session)",
       [] { return report_aggressiveness(run_aggressiveness()); }},
      {"fairness", "2. n_flows ensemble of 4 vs 4 flows, Jain's index (EFCM)",
       [] { return report_fairness(run_fairness()); }},
      {"join", "3. ACK-clocked join (seed 003, Algorithm 1)",
       [] {
         return report_ack_clocked_join(run_ack_clocked_join()) +
                report_ack_clocked_join_seeds(run_ack_clocked_join_seeds(AckClockedJoinParams{}, true));
       }},
      {"web", "4. E-TCP web pages: preempt ensemble vs Reno bundle",
       [] { return report_web_pages(run_web_pages(WebPagesParams{})); }},
      {"temporal", "5. Temporal sharing: the same page again after 5 s idle (E-TCP)",
       [] { return report_temporal_sharing(run_temporal_sharing(TemporalSharingParams{})); }},
      {"faststart", "6. Restart from cache after 20 s idle (TCP fast start)",
       [] { return report_fast_start(run_fast_start()); }},
      {"session", "7. TCP session: 1-12 client/server pairs, 4 x 10 KB pages",
       [] { return report_tcp_session(run_tcp_session()); }},
      {"integrity", "8. Integrity under 1 % and 5 % loss with reordering",
       [] { return report_integrity_seeds(run_integrity_matrix()); }},
      {"applimited", "9. Application- and receiver-limited senders: cwnd validation",
       [] { return report_app_limited(run_app_limited()); }},
      {"idlemembers", "10. Idle members under n_flows vs one flow",
       [] { return report_idle_members(run_idle_members()); }},
      {"rwndjoin", "11. Join beside a receive-window-limited long stream",
       [] { return report_rwnd_join(run_rwnd_join()); }},
      {"idlerestart", "12. Restart after 1 h idle inside a live ensemble",
       [] { return report_idle_restart(run_idle_restart()); }},
      {"temporal-iw10", "13. Temporal sharing at IW 10 (product defaults)",
       [] {
         return report_temporal_sharing_iw10(run_temporal_sharing_iw10(true)) +
                report_temporal_sharing_iw10(run_temporal_sharing_iw10(false));
       }},
      {"lossy-pages", "14. E-TCP pages at IW 10 (the WAN lab's pages-realistic), lossless and under 1 % and 5 % random loss, 20 seeds",
       [] {
         LossyPagesParams p;
         p.loss_probability = 0.0;
         std::string out = report_lossy_pages(run_lossy_pages(p));
         p.loss_probability = 0.01;
         out += report_lossy_pages(run_lossy_pages(p));
         p.loss_probability = 0.05;
         return out + report_lossy_pages(run_lossy_pages(p));
       }},
      {"bulk-loss", "15. A lone bulk download on a 1-BDP queue: every loss congestion vs Veno's test",
       [] {
         BulkLossParams p;
         std::string out = report_bulk_loss(p, run_bulk_loss(p));
         p.law = egw::congestion::WindowLawKind::cubic;
         return out + report_bulk_loss(p, run_bulk_loss(p));
       }},
      {"check-aggressiveness-60s",
       "Check: aggressiveness and fairness with a 10 s warmup and a 60 s (or $EGW_HORIZON_S) horizon, 20 seeds",
       [] {
         AggressivenessParams p;
         p.path.warmup = egw::ms(10'000);
         p.path.horizon = egw::ms(std::getenv("EGW_HORIZON_S") ? 1000 * std::atoi(std::getenv("EGW_HORIZON_S")) : 60000);
         FairnessParams f;
         f.path = p.path;
         return report_aggressiveness(run_aggressiveness(p)) + report_fairness(run_fairness(f));
       },
       true},
  };
  return all;
}

bool selected(std::string_view name, int argc, char** argv) {
  if (argc <= 1) return true;
  for (int i = 1; i < argc; ++i) {
    if (name.starts_with(argv[i])) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int ran = 0;
  for (const Experiment& e : experiments()) {
    if (!selected(e.name, argc, argv)) continue;
    if (e.only_when_named && argc <= 1) continue;
    const auto start = std::chrono::steady_clock::now();
    std::printf("=== %.*s\n", static_cast<int>(e.title.size()), e.title.data());
    std::fflush(stdout);
    const std::string report = e.run_and_report();
    const double cpu_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s(%.1f s to simulate)\n\n", report.c_str(), cpu_s);
    ++ran;
  }
  if (ran == 0) {
    std::fprintf(stderr, "usage: %s [aggressiveness|fairness|join|web|temporal|faststart|session|integrity|applimited|idlemembers|rwndjoin|idlerestart|temporal-iw10|lossy-pages|bulk-loss ...]\n",
                 argv[0]);
    return 2;
  }
  return 0;
}
