// E-TCP section 5, temporal sharing (seed 000): the same page fetched twice
// over the same connection pair, the second time after 5 s of idle time.
//
//   client (left) ==== 800 kbit/s, 50 ms one way, drop-tail 10 pkts ==== server (right)
//   fetch 1 at t = 0 ... page complete at T1 ... 5 s idle ... fetch 2 at T1 + 5 s
//
// Network, pages and client as in web_pages_experiment.h (realistic scenario:
// queue 10, concurrency 4). Only E-TCP with HTML-pre is measured, as in the
// paper's section 5, plus the Reno bundle's (single) fetch for reference.
//
// How the state carries over: the ensemble ends when its last stream ends
// and nothing is in flight; the Connection then stores its PathState in the
// side's TemporalCache, and the next stream starts a new ensemble from it
// (careful resume, congestion/careful_resume.h: half the saved window, paced
// over one SRTT, then validated). Both sides get a cache; the server's is the
// one that matters, since it sends the responses. The paper reused the whole
// cached window "without being aged or validated" and calls its gains an
// upper bound; our resume is more careful, so gains may be smaller. The
// paper's repeated access also skips a 1-RTT handshake that it adds to the
// first; the tunnel has none, so that part of its gain is not in our numbers.
#pragma once

#include <string>
#include <vector>

#include "tests/scenarios/web_pages_experiment.h"

namespace egw::scenarios {

struct TemporalSharingParams {
  // E-TCP's temporal sharing as published reuses the cached state at once
  // (no careful-resume RTT check first); the IW 10 variant sets it back.
  TemporalSharingParams() { web.resume_rtt_check_first = false; }
  WebPagesParams web;  // network, client, pages; `variants` is not used
  Duration idle = ms(5'000);
};

struct TemporalSharingRun {
  EtcpPage page = EtcpPage::text;
  FetchTimes first;
  FetchTimes second;
  FetchTimes reno;  // the uncoupled bundle, one fetch, no cache
  // Server side (the sender of the responses).
  std::uint64_t ensembles_started = 0;
  bool second_resumed = false;   // the second fetch's ensemble started from the cache
  bool first_resumed = false;    // must be false: the cache starts empty
  std::uint64_t client_ensembles_started = 0;
};

struct TemporalSharingResult {
  TemporalSharingParams params;
  std::string network;
  std::vector<TemporalSharingRun> runs;
};

TemporalSharingResult run_temporal_sharing(const TemporalSharingParams& params);
std::string report_temporal_sharing(const TemporalSharingResult& result);

}  // namespace egw::scenarios
