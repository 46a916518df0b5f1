// The figures of docs (law-docs): the model law against NewReno and CUBIC
// on the packet-level path of model_path_sim.h. Disabled (it asserts
// nothing); run with
//   build/tests/congestion_tests --gtest_also_run_disabled_tests
//     --gtest_filter='*ModelLawFigures*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "congestion/cubic.h"
#include "congestion/model_law.h"
#include "congestion/newreno.h"
#include "model_path_sim.h"
#include "tests/support/quantile.h"

namespace egw::congestion {
namespace {

using testing::PathConfig;
using testing::PathSim;

const WindowLawParams kParams{1200, 12000, 2400};
const Instant t0 = instant_at(Duration{0});

std::unique_ptr<WindowLaw> make(const char* name) {
  if (name[0] == 'n') return std::make_unique<NewReno>(kParams);
  if (name[0] == 'c') return std::make_unique<Cubic>(kParams);
  return std::make_unique<ModelLaw>(kParams);
}

void one_flow(const char* title, PathConfig path, Duration warmup, Duration measured) {
  for (const char* law : {"newreno", "cubic", "model"}) {
    PathSim sim(path);
    sim.add_flow(make(law), law[0] == 'm');
    sim.run(t0 + warmup + measured, t0 + warmup);
    std::printf("%-34s %-8s util %5.1f %%  queue p50 %6.1f ms p99 %6.1f ms\n", title, law,
                100 * sim.utilisation(0, measured),
                to_seconds(test_support::quantile(sim.queue_samples(), 0.5)) * 1e3,
                to_seconds(test_support::quantile(sim.queue_samples(), 0.99)) * 1e3);
  }
}

void sharing(const char* title, PathConfig path, int cubic_flows) {
  for (const char* law : {"newreno", "cubic", "model"}) {
    PathSim sim(path);
    sim.add_flow(make(law), law[0] == 'm');
    for (int i = 0; i < cubic_flows; ++i) sim.add_flow(std::make_unique<Cubic>(kParams), false);
    const Duration measured = ms(40000);
    sim.run(t0 + ms(20000) + measured, t0 + ms(20000));
    double others = 0;
    for (int i = 1; i <= cubic_flows; ++i) others += sim.utilisation(i, measured);
    const double mine = sim.utilisation(0, measured);
    std::printf("%-34s %-8s share %5.1f %% vs one CUBIC %5.1f %%: %.2fx  queue p99 %6.1f ms\n",
                title, law, 100 * mine, 100 * others / cubic_flows,
                mine / (others / cubic_flows),
                to_seconds(test_support::quantile(sim.queue_samples(), 0.99)) * 1e3);
  }
}

TEST(ModelLawFigures, DISABLED_Print) {
  PathConfig lossy;  // 20 Mbit/s, 60 ms, 600 packets
  one_flow("20M 60ms 600p loss 0", lossy, ms(5000), ms(30000));
  lossy.random_loss = 0.002;
  one_flow("20M 60ms 600p loss 0.2%", lossy, ms(5000), ms(30000));
  lossy.random_loss = 0.01;
  one_flow("20M 60ms 600p loss 1%", lossy, ms(5000), ms(30000));
  lossy.random_loss = 0.02;
  one_flow("20M 60ms 600p loss 2%", lossy, ms(5000), ms(30000));
  PathConfig shallow;
  shallow.buffer_packets = 30;
  one_flow("20M 60ms 30p (1/4 BDP) loss 0", shallow, ms(5000), ms(30000));
  PathConfig lfn;
  lfn.rate_bytes_per_s = 100e6 / 8;
  lfn.base_rtt = ms(100);
  lfn.buffer_packets = 1000;
  one_flow("100M 100ms 1000p", lfn, ms(5000), ms(30000));
  PathConfig geo;
  geo.rate_bytes_per_s = 10e6 / 8;
  geo.base_rtt = ms(600);
  geo.buffer_packets = 700;
  one_flow("GEO 10M 600ms 700p", geo, ms(10000), ms(30000));
  sharing("20M 60ms 600p with 1 CUBIC", PathConfig{}, 1);
  sharing("20M 60ms 600p with 4 CUBIC", PathConfig{}, 4);
  sharing("20M 60ms 100p (1 BDP) with 1 CUBIC", PathConfig{20e6 / 8, ms(60), 100, 0, 1200}, 1);
  sharing("20M 60ms 100p (1 BDP) with 4 CUBIC", PathConfig{20e6 / 8, ms(60), 100, 0, 1200}, 4);
}

}  // namespace
}  // namespace egw::congestion
