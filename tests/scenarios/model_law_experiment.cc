#include "tests/scenarios/model_law_experiment.h"

#include <algorithm>
#include <cstdio>

#include "tests/scenarios/dumbbell.h"
#include "tests/sim/scenario.h"
#include "tests/support/quantile.h"

namespace egw::scenarios {

using namespace egw::sim;

const char* law_name(congestion::WindowLawKind law) {
  switch (law) {
    case congestion::WindowLawKind::newreno: return "newreno";
    case congestion::WindowLawKind::cubic: return "cubic";
    case congestion::WindowLawKind::model: return "model";
  }
  return "?";
}

ModelLawRun run_model_law_bulk(const ModelLawPath& path, congestion::WindowLawKind law) {
  DumbbellParams d;
  d.bottleneck_bits_per_second = path.bits_per_second;
  d.one_way_delay = path.one_way_delay;
  d.queue_limit_packets = path.queue_limit_packets;
  PathConfig pc = d.path_config();
  pc.loss_probability = path.loss_probability;
  Scenario s(pc);
  PairConfig pair_config;
  pair_config.law = law;
  pair_config.customize = [](tunnel::ConnectionConfig& c) {
    // Flow control out of the way (issue 20 item 5 is another change).
    c.stream_receive_window_bytes = 64 << 20;
    c.connection_receive_window_bytes = 64 << 20;
    c.stream_send_buffer_bytes = 64 << 20;
    c.connection_send_buffer_bytes = 64 << 20;
  };
  const std::size_t pair = s.add_pair(pair_config);
  const double seconds = to_seconds(path.horizon);
  const auto bytes = static_cast<ByteCount>(static_cast<double>(path.bits_per_second) / 8 * seconds * 2);
  BulkTransfer& bulk = s.add_bulk(pair, {.bytes = bytes, .port = 5001}, instant_at(ms(0)));
  // Queueing delay of each packet the bottleneck (server -> client) takes in.
  const double packet_ms = 1e3 * static_cast<double>((d.packet_bytes + pc.overhead_bytes) * 8) /
                           static_cast<double>(path.bits_per_second);
  std::vector<double> queue_ms;
  const Instant warmup = instant_at(path.warmup);
  s.network().reverse().set_observer([&](const LinkEvent& e) {
    if (e.kind == LinkEvent::Kind::enqueue && e.time >= warmup) {
      queue_ms.push_back(static_cast<double>(e.queue_packets) * packet_ms);
    }
  });
  s.loop().run_until([] { return false; }, instant_at(path.horizon));
  s.network().reverse().set_observer({});
  ModelLawRun r;
  r.law = law;
  const ByteCount got = bulk.bytes_delivered_by(instant_at(path.horizon)) -
                        bulk.bytes_delivered_by(warmup);
  r.utilisation = static_cast<double>(got) * 8 /
                  (static_cast<double>(path.bits_per_second) * to_seconds(path.horizon - path.warmup));
  r.queue_p50_ms = test_support::quantile(queue_ms, 0.5);
  r.queue_p99_ms = test_support::quantile(queue_ms, 0.99);
  r.drops = s.network().reverse().stats().dropped_total();
  const auto stats = s.server(pair).connection().stats().ensemble;
  r.loss_rounds = stats.loss_rounds;
  r.rtos = stats.rto_count;
  r.mismatches = bulk.mismatches();
  return r;
}

std::string report_model_law(const ModelLawPath& path, const std::vector<ModelLawRun>& runs) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%s: %llu bit/s, one-way %lld ms, queue %zu, loss %.2f %%, window %lld-%lld ms\n",
                path.label.c_str(), static_cast<unsigned long long>(path.bits_per_second),
                static_cast<long long>(path.one_way_delay.count() / 1000), path.queue_limit_packets,
                100 * path.loss_probability, static_cast<long long>(path.warmup.count() / 1000),
                static_cast<long long>(path.horizon.count() / 1000));
  out += line;
  for (const auto& r : runs) {
    std::snprintf(line, sizeof line,
                  "  %-8s util %5.1f %%  queue p50 %6.1f ms p99 %6.1f ms  drops %6llu  loss rounds %5llu  RTOs %llu\n",
                  law_name(r.law), 100 * r.utilisation, r.queue_p50_ms, r.queue_p99_ms,
                  static_cast<unsigned long long>(r.drops), static_cast<unsigned long long>(r.loss_rounds),
                  static_cast<unsigned long long>(r.rtos));
    out += line;
  }
  return out;
}

}  // namespace egw::scenarios
