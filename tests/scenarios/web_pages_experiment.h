// E-TCP section 4.4, the "realistic scenario" (seed 000): the five web pages
// (etcp_pages.h) fetched over one tunnel connection pair, E-TCP ensembles
// with each scheduling policy against the uncoupled bundle ("Reno bundle").
//
//   client (left) ==== 800 kbit/s, 50 ms one way, drop-tail 10 pkts ==== server (right)
//   requests ->                                                <- responses
//
// Per page and variant: one Scenario, one pair, one WebClient (concurrency 4,
// one stream per object), run until the page is complete. The client
// requests the embedded objects as their links arrive in the root HTML
// (LinkDiscovery::while_parsing: link k of n at byte k * size / (n + 1)), as
// the paper's client "issue[s] requests as it encounters links while parsing
// the HTML" (4.3); this is what makes a server interleave image packets with
// the HTML (4.1). Requesting only after the whole HTML left nothing to
// schedule: on pages with one HTML part every variant then had the same
// HTML time. Measured like the paper, at the client: HTML time (request of
// the root to the last byte of the last HTML part) and page time (to the
// last byte of the page).
//
// Choices where the paper leaves our knobs open (ns-2, 1998-2000):
//  - packet_bytes = 552: the datagram carries the paper's 512-byte MSS plus
//    the 40 bytes ns-2 counted for TCP/IP headers; our 13-byte header, 16-byte
//    tag and ~7-byte STREAM frame header leave ~516 bytes of object data, so
//    objects take as many packets as in the paper, and 10 queued packets hold
//    the same bytes (plus our 28 bytes of IPv4+UDP on the wire).
//  - initial window 1 packet: ns-2's TCP default (windowInit_ = 1) in 2000.
//  - every packet acknowledged at once: ns-2's TCPSink does not delay ACKs,
//    and E-TCP's loss detection "only works well with immediate ACKs" (3.3).
//  - the uncoupled bundle uses the fair policy: independent TCP connections
//    send whenever their own window opens, nobody ranks them.
//  - no handshake time is added to either side: the tunnel has no per-stream
//    handshake and both variants would get the same constant (the paper adds
//    2 RTT to every time), so relative differences here are somewhat larger.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "congestion/ensemble.h"
#include "tests/scenarios/dumbbell.h"
#include "tests/scenarios/etcp_pages.h"
#include "tests/sim/scenario.h"

namespace egw::scenarios {

struct WebVariant {
  std::string name;
  congestion::CouplingMode coupling = congestion::CouplingMode::single;
  congestion::SchedulingPolicy policy = congestion::SchedulingPolicy::preempt;
  // The papers' TCP took every loss for congestion.
  congestion::RandomLoss random_loss = congestion::RandomLoss::congestion;
};

// The Reno bundle and E-TCP with its four policies (paper's order: preempt first).
std::vector<WebVariant> etcp_variants();
WebVariant reno_bundle_variant();
WebVariant etcp_preempt_variant();

struct WebPagesParams {
  DumbbellParams path{
      .bottleneck_bits_per_second = 800'000, .queue_limit_packets = 10, .packet_bytes = 552};
  std::size_t max_concurrent = 4;
  sim::LinkDiscovery links = sim::LinkDiscovery::while_parsing;
  std::uint32_t initial_window_packets = 1;
  std::uint32_t ack_every_packets = 1;
  // Applied to every variant alike (both sides' ensembles); the product's
  // defaults unless an experiment asks otherwise.
  congestion::SlowStart slow_start = congestion::EnsembleConfig{}.slow_start;
  bool send_one_on_recovery = congestion::EnsembleConfig{}.send_one_on_recovery;
  bool pacing = congestion::PacingConfig{}.enabled;
  // Careful resume's RTT check before the jump (product default), or the
  // jump at once as E-TCP and TCP fast start published it.
  bool resume_rtt_check_first = congestion::ResumeConfig{}.rtt_check_first;
  // Both sides' window law, every variant alike (the core's default: NewReno).
  congestion::WindowLawKind law = congestion::EnsembleConfig{}.law;
  std::vector<EtcpPage> pages{kEtcpPages.begin(), kEtcpPages.end()};
  std::vector<WebVariant> variants = etcp_variants();
  std::uint64_t seed = 1;
  Duration deadline = ms(120'000);  // simulated; a page that takes longer is a failure
};

// One page fetch: the client's view plus the server's (sender's) counters.
struct FetchTimes {
  bool complete = false;
  Duration html{0};
  Duration page{0};
  std::uint64_t errors = 0;          // wrong bytes, resets (WebClient::errors)
  std::uint64_t packets_lost = 0;    // server ensemble: declared lost
  std::uint64_t bottleneck_drops = 0;  // reverse (response) link queue drops
  std::uint64_t rto_count = 0;
};

struct WebPageRun {
  EtcpPage page = EtcpPage::text;
  std::string variant;
  FetchTimes times;
};

struct WebPagesResult {
  WebPagesParams params;
  std::string network;  // Scenario::describe() of the first run
  std::vector<WebPageRun> runs;
  const FetchTimes* find(EtcpPage page, const std::string& variant) const;
};

WebPagesResult run_web_pages(const WebPagesParams& params);
std::string report_web_pages(const WebPagesResult& result);

// The pieces, shared with the temporal sharing experiment.
sim::PathConfig web_path_config(const WebPagesParams& params);
sim::PairConfig web_pair_config(const WebPagesParams& params, const WebVariant& variant);
sim::WebClientConfig web_client_config(const WebPagesParams& params);
// Reads a finished (or timed-out) fetch; `pair` is the pair it ran on.
FetchTimes fetch_times(sim::Scenario& scenario, std::size_t pair, const sim::WebClient& web);

// 1 - a / b in percent: how much faster a is than b (positive = a faster).
double percent_faster(Duration a, Duration b);

}  // namespace egw::scenarios
