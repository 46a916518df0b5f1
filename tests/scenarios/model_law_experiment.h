// The model window law (congestion/model_law.h) in the simulator, beside
// NewReno and CUBIC on the same paths (issue 20, item 2): one bulk download
// through the tunnel on a link with random loss (both directions) and a
// drop-tail buffer; the link's utilisation over a steady window and the
// queueing delay the bottleneck's packets met.
#pragma once

#include <string>
#include <vector>

#include "common/units.h"
#include "congestion/ensemble_config.h"

namespace egw::scenarios {

struct ModelLawPath {
  std::string label;
  std::uint64_t bits_per_second = 20'000'000;
  Duration one_way_delay = ms(30);
  std::size_t queue_limit_packets = 600;
  double loss_probability = 0.0;  // each direction
  Duration warmup = ms(3'000);
  Duration horizon = ms(8'000);
};

struct ModelLawRun {
  congestion::WindowLawKind law = congestion::WindowLawKind::newreno;
  double utilisation = 0;  // content bytes over [warmup, horizon) / link rate
  double queue_p50_ms = 0;  // bottleneck queueing delay met by enqueued packets
  double queue_p99_ms = 0;
  std::uint64_t drops = 0;
  std::uint64_t loss_rounds = 0;
  std::uint64_t rtos = 0;
  std::uint64_t mismatches = 0;
};

ModelLawRun run_model_law_bulk(const ModelLawPath& path, congestion::WindowLawKind law);
std::string report_model_law(const ModelLawPath& path, const std::vector<ModelLawRun>& runs);
const char* law_name(congestion::WindowLawKind law);

}  // namespace egw::scenarios
