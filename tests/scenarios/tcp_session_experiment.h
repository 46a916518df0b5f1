// TCP session (Padmanabhan & Katz, seed 004 section 6.3, Figure 8): 1 to 12
// client/server pairs share a 1.5 Mbit/s bottleneck; each server sends its
// client one "Web page" of 4 concurrent 10 KB transfers, all pairs at once.
// We compare the mean page transfer time per pair count for
//   session  one `single` ensemble per pair: one window, loss detection from
//            the acks of all four transfers (the paper's TCP session);
//   indep    coupling `none`: four independent controllers per pair, each
//            with its own window and loss detection (independent TCP
//            connections).
// (The paper's third line, phttp, is one connection carrying all four
// transfers; it has no counterpart in our stream model and is not run.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/units.h"
#include "tests/scenarios/dumbbell.h"
#include "tests/scenarios/seed_stats.h"

namespace egw::scenarios {

struct TcpSessionParams {
  // packet_bytes: the paper's 1 KB segments (Figure 1 topology).
  DumbbellParams path{
      .bottleneck_bits_per_second = 1'500'000, .queue_limit_packets = 20, .packet_bytes = 1024};
  std::size_t objects_per_page = 4;
  ByteCount object_bytes = 10 * 1024;
  std::size_t max_pairs = 12;
  // The paper's session_cwnd starts at 1 segment, and so does each of its
  // independent TCP connections (ns-2, 1998).
  std::uint32_t initial_window_packets = 1;
  // Loss recovery of the paper's simulator (ns-2 of 1998), for both variants:
  //  - before any RTT sample the RTO is 6 s: ns-2's rtxcur_init_ was 6.0
  //    until 2006 (its test suites still pin "Agent/TCP set rtxcur_init_ 6.0
  //    ; # Default changed on 2006/01/21"); initial_rtt 2 s gives
  //    RTO = 2 + 4 x 1 = 6 s (RFC 6298 2.1 with our estimator);
  //  - RTO floor 200 ms: ns-2 then had minrto_ 0 and a 100 ms timer tick,
  //    which is our default floor;
  //  - loss only from 3 later packets (duplicate or sibling acks, section
  //    6.1); no RFC 9002 time threshold, which 1998 NewReno did not have
  //    (time_threshold <= 0 keeps our default 9/8);
  //  - no tail loss probe (Linux's TLP came in 2013): the RTO alone.
  // `modern` below reruns everything with our product defaults, for the report.
  Duration min_rto = ms(200);
  Duration initial_rtt = ms(2'000);
  double time_threshold = 1e9;
  // Pages start "at the same time" (section 6.3). All pairs at exactly
  // t = 0 made the result one deterministic trajectory that hinged on that
  // instant; each pair now starts at a random moment in [0, start_spread)
  // (drawn per run; 200 ms = 2 RTTs, still "at the same time" for pages
  // that take 1-4 s), and the point is the mean over `runs` seeds.
  // start_spread 0 gives the old single trajectory.
  Duration start_spread = ms(200);
  std::size_t runs = 20;
  bool include_modern = true;
  std::uint64_t seed = 1;
};

struct TcpSessionPoint {
  std::size_t pairs = 0;
  Duration mean_page_session{0};  // over pairs and runs
  Duration mean_page_indep{0};
  std::uint64_t lost_session = 0;  // packets the senders declared lost, summed over runs
  std::uint64_t lost_indep = 0;
  std::uint64_t rto_session = 0;
  std::uint64_t rto_indep = 0;
  // Over seeds: each run's mean page time (s) and its 1 - session / indep.
  SeedStats page_session_s;
  SeedStats page_indep_s;
  SeedStats run_reduction;
  // 1 - session / indep, of the means.
  double reduction() const;
};

struct TcpSessionResult {
  TcpSessionParams params;
  std::vector<TcpSessionPoint> points;  // pairs = 1 .. max_pairs, the paper's era
  // The same with our defaults (initial RTO 1 s, RFC 9002 time threshold),
  // when params.include_modern.
  std::vector<TcpSessionPoint> modern_points;
  std::string describe;
};

TcpSessionResult run_tcp_session(const TcpSessionParams& params = {});
std::string report_tcp_session(const TcpSessionResult& result);

}  // namespace egw::scenarios
