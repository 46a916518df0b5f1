// The E-TCP pages under random loss at the product's defaults: what a lossy
// access link (Wi-Fi, mobile) does to a coupled ensemble, next to the
// uncoupled bundle (what independent browser connections would do). The WAN
// lab's pages-loss5 experiment on the real gateway, made deterministic and
// averaged over many seeds:
//
//   client (left) ==== 800 kbit/s, 50 ms one way, drop-tail 10 pkts, p loss each way ==== server
//
// 1472-byte datagrams (the gateway's after path MTU discovery), IW 10, the
// product's ack frequency and recovery settings, concurrency 4.
#pragma once

#include <string>
#include <vector>

#include "tests/scenarios/web_pages_experiment.h"
#include "tunnel/connection.h"

namespace egw::scenarios {

struct LossyPagesParams {
  WebPagesParams web = [] {
    WebPagesParams p;
    p.path.packet_bytes = 1472;
    p.initial_window_packets = 10;
    p.ack_every_packets = tunnel::ConnectionConfig{}.ack_every_packets;
    // The uncoupled bundle as the papers had it (every loss is congestion),
    // then the coupled ensembles with and without Veno's discrimination.
    p.variants = {reno_bundle_variant(),
                  {"single-halve", congestion::CouplingMode::single,
                   congestion::SchedulingPolicy::content, congestion::RandomLoss::congestion},
                  {"single-veno", congestion::CouplingMode::single,
                   congestion::SchedulingPolicy::content, congestion::RandomLoss::veno},
                  {"nflows-halve", congestion::CouplingMode::n_flows,
                   congestion::SchedulingPolicy::content, congestion::RandomLoss::congestion},
                  {"nflows-veno", congestion::CouplingMode::n_flows,
                   congestion::SchedulingPolicy::content, congestion::RandomLoss::veno}};
    return p;
  }();
  double loss_probability = 0.05;
  std::uint64_t seeds = 20;
};

// Per page and variant, means over the seeds.
struct LossyPagesCell {
  EtcpPage page = EtcpPage::text;
  std::string variant;
  double html_ms = 0;
  double page_ms = 0;
  double rtos = 0;
  std::uint64_t incomplete = 0;
};

struct LossyPagesResult {
  LossyPagesParams params;
  std::string network;
  std::vector<LossyPagesCell> cells;
  const LossyPagesCell* find(EtcpPage page, const std::string& variant) const;
};

LossyPagesResult run_lossy_pages(const LossyPagesParams& params);
std::string report_lossy_pages(const LossyPagesResult& result);

}  // namespace egw::scenarios
