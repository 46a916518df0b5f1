#include "tests/scenarios/bulk_loss_experiment.h"

#include <cstdio>

#include "tests/sim/scenario.h"

namespace egw::scenarios {

using namespace egw::sim;

std::vector<BulkLossRun> run_bulk_loss(const BulkLossParams& p) {
  std::vector<BulkLossRun> out;
  for (const auto random_loss : {congestion::RandomLoss::congestion, congestion::RandomLoss::veno}) {
    Scenario s(p.path.path_config());
    PairConfig pair_config;
    pair_config.law = p.law;
    pair_config.customize = [&p, random_loss](tunnel::ConnectionConfig& c) {
      c.ensemble.random_loss = random_loss;
      c.stream_receive_window_bytes = p.stream_window_bytes;
    };
    const std::size_t pair = s.add_pair(pair_config);
    BulkTransfer& bulk = s.add_bulk(pair, {.bytes = p.bytes, .port = 5001}, instant_at(ms(100)));
    s.loop().run_until([&] { return bulk.complete(); }, instant_at(ms(120'000)));
    const auto stats = s.server(pair).connection().stats().ensemble;
    BulkLossRun r;
    r.label = random_loss == congestion::RandomLoss::veno ? "veno" : "congestion";
    r.fct_ms = bulk.completion_time() ? static_cast<double>(bulk.completion_time()->count()) / 1e3 : -1;
    r.drops = s.network().reverse().stats().dropped_total();
    r.loss_rounds = stats.loss_rounds;
    r.random_loss_rounds = stats.random_loss_rounds;
    r.rtos = stats.rto_count;
    out.push_back(r);
  }
  return out;
}

std::string report_bulk_loss(const BulkLossParams& p, const std::vector<BulkLossRun>& runs) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line,
                "A lone %llu B download, %llu bit/s, one-way %lld us, queue %zu pkts, %s, stream window %llu B\n",
                static_cast<unsigned long long>(p.bytes), static_cast<unsigned long long>(p.path.bottleneck_bits_per_second),
                static_cast<long long>(p.path.one_way_delay.count()), p.path.queue_limit_packets,
                p.law == congestion::WindowLawKind::cubic ? "CUBIC" : "NewReno",
                static_cast<unsigned long long>(p.stream_window_bytes));
  out += line;
  out += "  random_loss   FCT ms   drops  loss rounds  of them random  RTOs\n";
  for (const auto& r : runs) {
    std::snprintf(line, sizeof line, "  %-11s %8.1f %7llu %12llu %15llu %5llu\n", r.label.c_str(), r.fct_ms,
                  static_cast<unsigned long long>(r.drops), static_cast<unsigned long long>(r.loss_rounds),
                  static_cast<unsigned long long>(r.random_loss_rounds), static_cast<unsigned long long>(r.rtos));
    out += line;
  }
  return out;
}

}  // namespace egw::scenarios
