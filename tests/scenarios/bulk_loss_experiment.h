// A lone bulk download on seed 003's link (10 Mbit/s, RTT 100 ms, drop-tail
// queue of 1 BDP, 83 packets), with every loss taken as congestion and with
// Veno's random-loss test (`ensemble.random_loss`, the product's default).
// On a link without random loss every loss is an overflow: the test must
// see a queue and cut in full, so the two runs should not differ. The WAN
// lab's join experiment measured the long flow alone 3 % slower and with 3x
// the drops under Veno; this run shows whether the core does that.
#pragma once

#include <string>
#include <vector>

#include "common/units.h"
#include "congestion/ensemble_config.h"
#include "tests/scenarios/dumbbell.h"

namespace egw::scenarios {

struct BulkLossParams {
  DumbbellParams path{.queue_limit_packets = 83, .packet_bytes = 1472};
  ByteCount bytes = 8'000'000;
  congestion::WindowLawKind law = congestion::WindowLawKind::newreno;
  // The gateway's default (limits.stream_buffer_bytes): about 1.5 BDP here,
  // so the download is held by flow control, not by the window, and sends
  // in bursts as the receiver's credit arrives.
  ByteCount stream_window_bytes = 256 * 1024;
};

struct BulkLossRun {
  std::string label;
  double fct_ms = 0;
  std::uint64_t drops = 0;
  std::uint64_t loss_rounds = 0;
  std::uint64_t random_loss_rounds = 0;
  std::uint64_t rtos = 0;
};

std::vector<BulkLossRun> run_bulk_loss(const BulkLossParams& p = {});
std::string report_bulk_loss(const BulkLossParams& p, const std::vector<BulkLossRun>& runs);

}  // namespace egw::scenarios
