// Scenario 4 (issue 2 section 5): E-TCP web pages, seed 000 section 4.4.
//
//   client host (left)                                       server host (right)
//   WebClient ---- requests ---> [800 kbit/s, 50 ms, queue 10] ---> WebServer
//             <--- responses --- [800 kbit/s, 50 ms, queue 10] <---
//   one tunnel connection pair; one stream per object
//
// Parameters: bottleneck 800 kbit/s each way, 50 ms one-way delay (RTT 100 ms),
// drop-tail queue 10 packets each way, datagrams of 552 bytes (the paper's
// 512-byte MSS + 40 bytes of headers; ~516 bytes of object data each) plus 28
// bytes IPv4+UDP on the wire, initial window 1 packet, an ACK for every packet,
// NewReno, client concurrency 4, embedded objects requested once the root HTML
// has arrived, seed 1. Pages (etcp_pages.h): text, map, graphics, frames, java.
// Variants: reno-bundle (CouplingMode::none, every stream its own NewReno),
// etcp-preempt (CouplingMode::single, SchedulingPolicy::preempt = HTML-pre),
// and for the report etcp-content, etcp-decay, etcp-fair.
//
// Criteria (issue 2, 5.4): etcp-preempt faster than the reno-bundle for HTML
// on all five pages, and for the whole page on the pages with many objects
// (graphics, frames, java). Paper: HTML 4-75 %, whole page 17-61 % faster.
#include <iostream>

#include <gtest/gtest.h>

#include "tests/scenarios/web_pages_experiment.h"

namespace egw::scenarios {
namespace {

TEST(ScenarioEtcpWebPages, PreemptEnsembleBeatsRenoBundle) {
  const WebPagesParams params;
  const WebPagesResult result = run_web_pages(params);
  std::cout << report_web_pages(result);

  const std::string reno = reno_bundle_variant().name;
  const std::string pre = etcp_preempt_variant().name;
  for (const auto& run : result.runs) {
    SCOPED_TRACE(std::string(to_string(run.page)) + " " + run.variant);
    EXPECT_TRUE(run.times.complete);
    EXPECT_EQ(run.times.errors, 0u);
  }
  for (const EtcpPage page : kEtcpPages) {
    SCOPED_TRACE(std::string(to_string(page)));
    const FetchTimes* r = result.find(page, reno);
    const FetchTimes* e = result.find(page, pre);
    ASSERT_NE(r, nullptr);
    ASSERT_NE(e, nullptr);
    // HTML on every page: preempt strictly faster than the bundle.
    EXPECT_LT(e->html, r->html);
    // Whole page on the pages with many objects (14, 27 and 36 objects).
    if (page == EtcpPage::graphics || page == EtcpPage::frames || page == EtcpPage::java) {
      EXPECT_LT(e->page, r->page);
    }
  }
}

}  // namespace
}  // namespace egw::scenarios
