// bench_classify -> build/bench/classify: the classifier's cost per new
// connection (issue 21's goal: < 5 us), stage by stage. A decision is made
// once per connection; nothing runs per packet after it (the stream's class
// is a byte the scheduler reads).
//
//   ninja -C build bench_classify && build/bench/classify
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>
#include <vector>

#include "proxy/app_list.h"
#include "proxy/classifier.h"
#include "proxy/ndpi_detector.h"
#include "tests/proxy/client_hello_builder.h"

namespace egw::proxy {
namespace {

std::vector<std::string> corpus_hosts() {
  std::ifstream in(std::string(EGW_CLASSIFY_DATA_DIR) + "/hosts.tsv");
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') out.push_back(line.substr(0, line.find('\t')));
  }
  return out;
}

tunnel::Destination destination(std::size_t i) {
  tunnel::Destination d;
  d.address = {203, 0, static_cast<std::uint8_t>(113 + (i >> 8) % 8), static_cast<std::uint8_t>(i)};
  d.port = 443;
  return d;
}

config::ClassifyConfig typical_config() {
  config::ClassifyConfig c;  // nDPI on, default content types, learned cache 4096
  c.sni = {{"*.calls.example.com", ContentClass::realtime}, {"backup.example.com", ContentClass::bulk}};
  c.destinations = {{std::get<config::DestinationRule>(config::parse_destination_rule("10.9.0.0/16:22")),
                     ContentClass::interactive}};
  return c;
}

// A TLS connection: parse the ClientHello, admin rules, the host lists then
// libndpi 4.2 by name, learn.
void BM_OpenWithSni(benchmark::State& state) {
  const Classifier k(typical_config());
  std::vector<test_data::Bytes> hellos;
  for (const auto& h : corpus_hosts()) hellos.push_back(test_data::client_hello_records(h));
  std::size_t i = 0;
  for (auto _ : state) {
    const auto d = k.classify_open(destination(i), hellos[i % hellos.size()]);
    benchmark::DoNotOptimize(d);
    ++i;
  }
  state.SetLabel("the corpus names, round robin");
}
BENCHMARK(BM_OpenWithSni);

// The nDPI host-name lookup alone.
void BM_NdpiByHost(benchmark::State& state) {
  const NdpiDetector& ndpi = NdpiDetector::shared();
  const auto hosts = corpus_hosts();
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(ndpi.by_host(hosts[i++ % hosts.size()]));
}
BENCHMARK(BM_NdpiByHost);

// Each host list alone (hash probes per label boundary), and the chain the
// classifier asks (the newer nDPI list, the v2fly list, the UT1 list, then
// libndpi 4.2 for what all three lack).
void list_by_host(benchmark::State& state, const AppListDetector& list) {
  const auto hosts = corpus_hosts();
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(list.list_match(hosts[i++ % hosts.size()]));
  state.SetLabel(std::to_string(list.patterns()) + " patterns, ~" + std::to_string(list.memory_bytes() / 1024) +
                 " KiB of tables");
}
void BM_ListByHost(benchmark::State& state) { list_by_host(state, AppListDetector::shared()); }
BENCHMARK(BM_ListByHost);
void BM_V2flyListByHost(benchmark::State& state) { list_by_host(state, AppListDetector::shared_v2fly()); }
BENCHMARK(BM_V2flyListByHost);
void BM_Ut1ListByHost(benchmark::State& state) { list_by_host(state, AppListDetector::shared_ut1()); }
BENCHMARK(BM_Ut1ListByHost);

void BM_ListThenNdpiByHost(benchmark::State& state) {
  const AppListDetector& chain = AppListDetector::shared();
  const auto hosts = corpus_hosts();
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(chain.by_host(hosts[i++ % hosts.size()]));
  state.SetLabel("newer nDPI list, v2fly list, UT1 list, libndpi 4.2");
}
BENCHMARK(BM_ListThenNdpiByHost);

// Building a list's tables (once per process, at a branch's start).
void BM_ListBuild(benchmark::State& state) {
  for (auto _ : state) {
    const AppListDetector list(ndpi_host_table(), nullptr);
    benchmark::DoNotOptimize(list.patterns());
  }
}
BENCHMARK(BM_ListBuild)->Unit(benchmark::kMicrosecond);
void BM_V2flyListBuild(benchmark::State& state) {
  for (auto _ : state) {
    const AppListDetector list(v2fly_host_table(), nullptr);
    benchmark::DoNotOptimize(list.patterns());
  }
}
BENCHMARK(BM_V2flyListBuild)->Unit(benchmark::kMicrosecond);
void BM_Ut1ListBuild(benchmark::State& state) {
  for (auto _ : state) {
    const AppListDetector list(ut1_host_table(), nullptr);
    benchmark::DoNotOptimize(list.patterns());
  }
}
BENCHMARK(BM_Ut1ListBuild)->Unit(benchmark::kMicrosecond);

// No SNI (ECH, server-first): nDPI by address, then the learned cache.
void BM_OpenWithoutSniLearned(benchmark::State& state) {
  const Classifier k(typical_config());
  const auto hosts = corpus_hosts();
  for (std::size_t i = 0; i < hosts.size(); ++i) k.classify_open(destination(i), test_data::client_hello_records(hosts[i]));
  const std::string_view ssh = "SSH-2.0-OpenSSH_9.2\r\n";
  const auto bytes = std::as_bytes(std::span(ssh.data(), ssh.size()));
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(k.classify_open(destination(i++ % hosts.size()), bytes));
}
BENCHMARK(BM_OpenWithoutSniLearned);

// The admin's destination rule: final, nothing parsed.
void BM_OpenDestinationRule(benchmark::State& state) {
  const Classifier k(typical_config());
  tunnel::Destination d;
  d.address = {10, 9, 1, 2};
  d.port = 22;
  for (auto _ : state) benchmark::DoNotOptimize(k.classify_open(d, {}));
}
BENCHMARK(BM_OpenDestinationRule);

// What nDPI's detection module costs to build (once per process).
void BM_NdpiInit(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(NdpiDetector::shared().init_ms() / 1000);
  state.SetLabel("built once per process: the figure is that one build");
}
BENCHMARK(BM_NdpiInit)->UseManualTime()->Iterations(1);

}  // namespace
}  // namespace egw::proxy

BENCHMARK_MAIN();
