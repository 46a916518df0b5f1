// Issue 21 item 4: a modern page over HTTP/1.1's six connections per host,
// where the render-blocking CSS and JS must not wait behind the images.
//
//   client (left) ==== 10 Mbit/s, 20 ms one way, drop-tail 40 pkts ==== server (right)
//
// Pages (page order = link order in the root HTML, links discovered while
// it arrives, LinkDiscovery::while_parsing): a 40 KB root HTML, two
// stylesheets (24, 16 KB) and two or three scripts, and 14-21 images
// (shapes below). CSS and JS are class `script`, the images `image`. Client
// concurrency 6 (HTTP/1.1's connections per host), one stream per object,
// IW 10, each window law (law_param.h), 1200-byte datagrams, seed 1, both
// gateways with their path caches; the same page again 1 s after the first
// was done ("repeat"). The client fills a freed
// connection with the next link in page order, so a script may compete with
// five images (E-TCP's per-stream tickets: 5 x 3 against 6) or, early on,
// four scripts with one image.
//
// Variants: "direct" (CouplingMode::none, fair: every stream its own
// controller, the stand-in for direct TCP), the gateway's defaults (single
// ensemble, class shares 12/6/3/1, html and script first within
// render_blocking_cap 95 %), "shares" (class shares alone, cap 0), "cap90"
// and preempt (html strictly first, script within the cap).
//
// CSS+JS time: from the root's request to the last byte of the last
// stylesheet or script. Its bound: the root alone (RTT + its bytes), then one
// RTT for the requests plus the CSS and JS bytes at the link rate (what a
// perfect scheduler achieves: bench/lab/bounds.py's css_js()), both at the
// wire's bytes per payload byte.
//
// Measured (deterministic, NewReno, links while parsing, before the path
// caches and the repeat were added), mean CSS+JS time / bound over the shapes:
//                              scripts in head   scripts late   page (mean)
//   direct                          1.711x          2.192x        897 ms
//   before (7ebda40: per-stream tickets, joins ahead of pick())
//     defaults                      1.359x          1.995x        740 ms
//     preempt                       1.364x          2.029x        746 ms
//   class shares alone (cap 0)      1.389x          2.062x        739 ms
//   defaults (cap 95 %)             1.282x          2.030x        742 ms
//   cap 90 %                        1.299x          2.037x        749 ms
//   preempt                         1.263x          2.023x        745 ms
// With the scripts in the head the defaults gain 5.7 %; what remains above
// 1.2x is slow start from IW 10 (near-strict precedence, cap 100 %, reaches
// 1.264x): the root and the first CSS+JS arrive while the window still grows.
// With the scripts late (requested after ten images, once a connection is
// free) the images' packets are already in the bottleneck queue when a
// script opens (nothing is backlogged in the gateway to overtake): the
// scheduler cannot help there; per shape the defaults are later than direct
// once (shape 14, 549 vs 533 ms; 526 ms before).
// Asserted: on average never later than direct (CSS+JS and page), and the
// defaults' head shapes within 1.30x (1.359x before) and ahead of class
// shares alone. Over the model law (the gateway's default) the head shapes
// take 1.162x (repeat 1.081x), the late ones 1.917x (direct 1.598x, 2.117x).
//
// LinksAfterTheHtml: the lab's client (links requested once the root is
// complete), where the root and the CSS+JS are two busy periods; see there.
// Head shapes, first (repeat), defaults:   NewReno          model
//   ensemble retired after the root     1.573x (1.673x)  1.577x (1.482x)
//   ensemble lingers (connection.cc)    1.482x (1.268x)  1.320x (1.272x)
//   direct                              1.349x (1.348x)  1.430x (1.429x)
// (this "direct" has no TCP handshake: six initial windows at once).
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "congestion/temporal_cache.h"
#include "tests/scenarios/law_param.h"
#include "tests/sim/scenario.h"
#include "tests/sim/web.h"

namespace egw::scenarios {
namespace {

using congestion::CouplingMode;
using congestion::SchedulingPolicy;
using congestion::WindowLawKind;

constexpr std::uint64_t kRateBps = 10'000'000;
constexpr Duration kOneWay = ms(20);
constexpr ByteCount kPacketBytes = 1200;
constexpr ByteCount kOverheadBytes = 28;
constexpr ByteCount kK = 1024;

// Sixteen shapes of the page, so no figure rests on one loss pattern:
// shape k (0..7) has 14 + k images of 10 + k, 12 + k, ... KB; shapes 0..7
// load every script in the head, shapes 8..15 (the same images) two
// stylesheets in the head and three scripts (64, 40, 24 KB) at the end of
// the body, after the first ten images.
constexpr int kShapes = 16;

sim::Page modern_page(int shape) {
  const bool late_scripts = shape >= 8;
  const int k = shape % 8;
  sim::Page p;
  p.push_back({40 * kK, ContentClass::html, true});
  auto image = [&](int i) {
    p.push_back({static_cast<ByteCount>(10 + k + 2 * i) * kK, ContentClass::image, false});
  };
  if (!late_scripts) {
    for (ByteCount kb : {24, 16, 64, 40}) p.push_back({kb * kK, ContentClass::script, false});
    for (int i = 0; i < 14 + k; ++i) image(i);
    return p;
  }
  for (ByteCount kb : {24, 16}) p.push_back({kb * kK, ContentClass::script, false});
  for (int i = 0; i < 10; ++i) image(i);
  for (ByteCount kb : {64, 40, 24}) p.push_back({kb * kK, ContentClass::script, false});
  for (int i = 10; i < 14 + k; ++i) image(i);
  return p;
}

struct Variant {
  std::string name;
  CouplingMode coupling;
  SchedulingPolicy policy;
  std::uint32_t render_blocking_cap_percent = congestion::SchedulerConfig{}.render_blocking_cap_percent;
};

struct PageRun {
  std::string name;
  int shape = 0;
  double bound_s = 0;  // css_js_bound_s
  bool complete = false;
  double css_js_s = 0;
  double repeat_css_js_s = 0;  // the same page again, 1 s after the first was done
  double html_s = 0;
  double page_s = 0;
  std::uint64_t lost = 0;  // server ensemble: packets declared lost
  std::uint64_t rtos = 0;
};

// Seconds to carry `payload` bytes at the link rate, counting each
// datagram's tunnel and IP/UDP overhead (~36 bytes of tunnel framing).
double wire_seconds(ByteCount payload) {
  const double per_packet = static_cast<double>(kPacketBytes - 36);
  const double packets = static_cast<double>(payload) / per_packet;
  const double bytes = static_cast<double>(payload) + packets * (36 + kOverheadBytes);
  return bytes * 8 / static_cast<double>(kRateBps);
}

double css_js_bound_s(const sim::Page& page) {
  const double rtt = 2 * to_seconds(kOneWay);
  ByteCount scripts = 0;
  for (const auto& o : page) {
    if (o.content_class == ContentClass::script) scripts += o.size_bytes;
  }
  return rtt + wire_seconds(page.front().size_bytes) + rtt + wire_seconds(scripts);
}

// The page, then the same page again 1 s after it was done (the lab's
// "repeat"), over one pair of gateways with their path caches.
PageRun fetch(const Variant& v, WindowLawKind law, sim::LinkDiscovery links, int shape) {
  sim::PathConfig path;
  path.bottleneck_bits_per_second = kRateBps;
  path.one_way_delay = kOneWay;
  path.queue_limit_packets = 40;
  path.packet_bytes = kPacketBytes;
  path.overhead_bytes = kOverheadBytes;
  sim::Scenario s(path);
  congestion::TemporalCache client_cache;  // the gateways' `cache` (on by default)
  congestion::TemporalCache server_cache;
  sim::PairConfig pair_config;
  pair_config.client_cache = &client_cache;
  pair_config.server_cache = &server_cache;
  pair_config.coupling = v.coupling;
  pair_config.policy = v.policy;
  pair_config.law = law;
  pair_config.customize = [cap = v.render_blocking_cap_percent](tunnel::ConnectionConfig& c) {
    c.ensemble.scheduler.render_blocking_cap_percent = cap;
  };
  const auto pair = s.add_pair(pair_config);
  PageRun r{v.name, shape, css_js_bound_s(modern_page(shape))};
  for (int access = 0; access < 2; ++access) {
    const Instant start = access == 0 ? instant_at(ms(0)) : s.now() + ms(1000);
    auto& web = s.add_web(pair, modern_page(shape), {.max_concurrent = 6, .links = links}, start);
    r.complete = s.run_until_done(start + ms(60'000)) && web.complete() && web.errors() == 0;
    if (!r.complete || !web.started_at()) return r;
    Instant last_script = *web.started_at();
    for (std::size_t i = 0; i < web.page().size(); ++i) {
      if (web.page()[i].content_class != ContentClass::script) continue;
      last_script = std::max(last_script, *web.objects()[i].completed_at);
    }
    (access == 0 ? r.css_js_s : r.repeat_css_js_s) = to_seconds(last_script - *web.started_at());
    if (access == 0) {
      r.html_s = to_seconds(*web.html_time());
      r.page_s = to_seconds(*web.page_time());
    }
  }
  const auto stats = s.server(pair).connection().stats().ensemble;
  r.lost = stats.packets_lost;
  r.rtos = stats.rto_count;
  return r;
}

double mean_ratio(const std::vector<PageRun>& runs, const std::string& name, int from = 0,
                  int to = kShapes, bool repeat = false) {
  double sum = 0;
  int n = 0;
  for (const PageRun& r : runs) {
    if (r.name != name || r.shape < from || r.shape >= to) continue;
    sum += (repeat ? r.repeat_css_js_s : r.css_js_s) / r.bound_s;
    ++n;
  }
  return n ? sum / n : 0;
}

double mean_page_s(const std::vector<PageRun>& runs, const std::string& name) {
  double sum = 0;
  int n = 0;
  for (const PageRun& r : runs) {
    if (r.name != name) continue;
    sum += r.page_s;
    ++n;
  }
  return n ? sum / n : 0;
}

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v{
      {"direct", CouplingMode::none, SchedulingPolicy::fair},
      {"defaults", CouplingMode::single, SchedulingPolicy::content},
      {"shares", CouplingMode::single, SchedulingPolicy::content, 0},
      {"cap90", CouplingMode::single, SchedulingPolicy::content, 90},
      {"preempt", CouplingMode::single, SchedulingPolicy::preempt}};
  return v;
}

std::vector<PageRun> run_all(WindowLawKind law, sim::LinkDiscovery links) {
  std::vector<PageRun> v;
  for (int shape = 0; shape < kShapes; ++shape) {
    for (const Variant& var : variants()) v.push_back(fetch(var, law, links, shape));
  }
  std::ostringstream report;
  report << "modern page, " << law_name(law) << " law, links "
         << (links == sim::LinkDiscovery::while_parsing ? "while parsing" : "after the html")
         << ", 6 connections, 10 Mbit/s 40 ms RTT queue 40; CSS+JS time / its bound (repeat "
            "after 1 s idle), page ms, packets lost\n";
  char line[160];
  for (const PageRun& r : v) {
    std::snprintf(line, sizeof line,
                  "  shape %d %-8s css+js %6.1f ms %5.3fx (repeat %5.3fx)  page %6.1f ms  lost %3llu%s\n",
                  r.shape, r.name.c_str(), r.css_js_s * 1e3, r.css_js_s / r.bound_s,
                  r.repeat_css_js_s / r.bound_s, r.page_s * 1e3,
                  static_cast<unsigned long long>(r.lost), r.complete ? "" : "  INCOMPLETE");
    report << line;
  }
  for (const Variant& var : variants()) {
    for (int half = 0; half < 2; ++half) {
      std::snprintf(line, sizeof line, "  mean %-8s %s css+js %5.3fx, repeat %5.3fx\n",
                    var.name.c_str(), half ? "scripts late (8-15)" : "scripts in head (0-7)",
                    mean_ratio(v, var.name, half * 8, half * 8 + 8),
                    mean_ratio(v, var.name, half * 8, half * 8 + 8, true));
      report << line;
    }
    std::snprintf(line, sizeof line, "  mean %-8s css+js %5.3fx  page %6.1f ms\n",
                  var.name.c_str(), mean_ratio(v, var.name), mean_page_s(v, var.name) * 1e3);
    report << line;
  }
  std::cout << report.str();
  return v;
}

class ScenarioModernPage : public ::testing::TestWithParam<WindowLawKind> {};

TEST_P(ScenarioModernPage, RenderBlockingCssJsOnAverageNotBehindDirect) {
  const std::vector<PageRun> all = run_all(GetParam(), sim::LinkDiscovery::while_parsing);
  for (const PageRun& r : all) EXPECT_TRUE(r.complete) << r.name << " " << r.shape;
  for (const char* gateway : {"defaults", "shares", "preempt"}) {
    SCOPED_TRACE(gateway);
    EXPECT_LE(mean_ratio(all, gateway), mean_ratio(all, "direct"));
    EXPECT_LE(mean_page_s(all, gateway), mean_page_s(all, "direct"));
  }
  EXPECT_LE(mean_ratio(all, "defaults", 0, 8), 1.30);  // 1.282x measured, 1.359x before
  EXPECT_LT(mean_ratio(all, "defaults", 0, 8), mean_ratio(all, "shares", 0, 8));
}

// The lab's client (bench/lab/webload.py) requests the other objects once the
// root HTML is complete, and each page starts a new busy period after the
// root: the requests reach the hub about when the root's last ACK does.
// Before the ensemble lingered (tunnel/connection.cc) it retired there and
// the CSS+JS began a second slow start from the cache's window, the model
// law's startup rate from IW again (the lab's 1.53x).
TEST_P(ScenarioModernPage, LinksAfterTheHtmlKeepTheRootsWindow) {
  const std::vector<PageRun> all = run_all(GetParam(), sim::LinkDiscovery::html_complete);
  for (const PageRun& r : all) EXPECT_TRUE(r.complete) << r.name << " " << r.shape;
  const bool model = GetParam() == WindowLawKind::model;
  // Head shapes, first access: NewReno 1.573x -> 1.482x, the model 1.577x -> 1.320x;
  // repeat: 1.673x -> 1.268x, 1.482x -> 1.272x.
  EXPECT_LE(mean_ratio(all, "defaults", 0, 8), model ? 1.40 : 1.52);
  EXPECT_LE(mean_ratio(all, "defaults", 0, 8, true), 1.35);
  EXPECT_LT(mean_ratio(all, "defaults", 0, 8), mean_ratio(all, "shares", 0, 8));
}

INSTANTIATE_TEST_SUITE_P(Laws, ScenarioModernPage, kBothLaws, law_param_name);

}  // namespace
}  // namespace egw::scenarios
