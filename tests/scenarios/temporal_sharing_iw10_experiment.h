// Temporal sharing at IW 10 (issue "Ensemble core under real traffic", item
// 5): temporal_sharing_experiment.h with the product's initial window of 10
// packets instead of the paper era's 1, same network, pages and client:
//
//   client (left) ==== 800 kbit/s, 50 ms one way, drop-tail 10 pkts ==== server (right)
//   fetch 1 at t = 0 ... page complete at T1 ... 5 s idle ... fetch 2 (resumes from the cache)
//
// 552-byte datagrams as the E-TCP experiments (so the pages take the paper's
// packet counts; the brief's numbers were taken so), ACK every packet,
// NewReno, single + preempt, concurrency 4. Deterministic: one run per page.
// Lower bound of an HTML time: one RTT plus the HTML's wire bytes over the
// rate, wire bytes = ceil(size / 516) packets x (552 + 28) bytes.
#pragma once

#include <string>
#include <vector>

#include "tests/scenarios/temporal_sharing_experiment.h"

namespace egw::scenarios {

struct TemporalSharingIw10Page {
  EtcpPage page = EtcpPage::text;
  TemporalSharingRun run;
  Duration html_bound{0};
  bool never_slower() const;     // second <= first, HTML and page
  bool needs_gap_closed() const;  // first HTML > 1.2 x bound
  bool gap_closed() const;       // second HTML - bound <= (first HTML - bound) / 2
};

struct TemporalSharingIw10Result {
  TemporalSharingResult raw;
  std::vector<TemporalSharingIw10Page> pages;
};

// Product defaults (IW 10, careful resume with its RTT check); without the
// check the cached window is used at once, as the papers did.
TemporalSharingParams temporal_sharing_iw10_params(
    bool rtt_check_first = true, congestion::WindowLawKind law = congestion::WindowLawKind::newreno);
Duration html_lower_bound(const WebPagesParams& web, EtcpPage page);
TemporalSharingIw10Result run_temporal_sharing_iw10(
    bool rtt_check_first = true, congestion::WindowLawKind law = congestion::WindowLawKind::newreno);
std::string report_temporal_sharing_iw10(const TemporalSharingIw10Result& result);

}  // namespace egw::scenarios
