#include "tests/scenarios/temporal_sharing_iw10_experiment.h"

#include <cstdio>
#include <sstream>

#include "tests/scenarios/model_law_experiment.h"

namespace egw::scenarios {

namespace {
constexpr ByteCount kTunnelOverheadPerPacket = 36;  // header 13, tag 16, STREAM frame ~7
}

bool TemporalSharingIw10Page::never_slower() const {
  return run.second.html <= run.first.html && run.second.page <= run.first.page;
}
bool TemporalSharingIw10Page::needs_gap_closed() const {
  return run.first.html.count() * 10 > html_bound.count() * 12;
}
bool TemporalSharingIw10Page::gap_closed() const {
  return 2 * (run.second.html - html_bound) <= run.first.html - html_bound;
}

TemporalSharingParams temporal_sharing_iw10_params(bool rtt_check_first,
                                                  congestion::WindowLawKind law) {
  TemporalSharingParams p;
  p.web.law = law;
  p.web.initial_window_packets = 10;
  p.web.resume_rtt_check_first = rtt_check_first;
  return p;
}

Duration html_lower_bound(const WebPagesParams& web, EtcpPage page) {
  ByteCount html = 0;
  for (const auto& o : etcp_page(page)) {
    if (o.is_html) html += o.size_bytes;
  }
  const ByteCount per_packet = web.path.packet_bytes - kTunnelOverheadPerPacket;
  const ByteCount packets = (html + per_packet - 1) / per_packet;
  const double wire_bits = static_cast<double>(packets * (web.path.packet_bytes + 28)) * 8.0;
  const double seconds = wire_bits / static_cast<double>(web.path.bottleneck_bits_per_second);
  return 2 * web.path.one_way_delay + us(static_cast<std::int64_t>(seconds * 1e6));
}

TemporalSharingIw10Result run_temporal_sharing_iw10(bool rtt_check_first,
                                                    congestion::WindowLawKind law) {
  TemporalSharingIw10Result r;
  r.raw = run_temporal_sharing(temporal_sharing_iw10_params(rtt_check_first, law));
  for (const TemporalSharingRun& run : r.raw.runs) {
    TemporalSharingIw10Page pg;
    pg.page = run.page;
    pg.run = run;
    pg.html_bound = html_lower_bound(r.raw.params.web, run.page);
    r.pages.push_back(pg);
  }
  return r;
}

std::string report_temporal_sharing_iw10(const TemporalSharingIw10Result& r) {
  std::ostringstream out;
  out << report_temporal_sharing(r.raw);
  out << "window law: " << law_name(r.raw.params.web.law) << "\n";
  out << (r.raw.params.web.resume_rtt_check_first
              ? "careful resume with the RTT check first (product default)\n"
              : "cached window used at once, no RTT check first (as the papers did)\n");
  out << "IW 10 goals: second fetch never slower (HTML and page); where HTML1 > 1.2 x bound, "
         "HTML2 closes >= half the gap\n";
  char line[240];
  std::snprintf(line, sizeof line, "  %-9s %8s %8s %8s %8s %8s  %-12s %s\n", "page", "bound_ms",
                "html1", "html2", "page1", "page2", "never slower", "gap");
  out << line;
  for (const TemporalSharingIw10Page& p : r.pages) {
    std::snprintf(line, sizeof line, "  %-9s %8.1f %8.1f %8.1f %8.1f %8.1f  %-12s %s\n",
                  std::string(to_string(p.page)).c_str(), to_seconds(p.html_bound) * 1e3,
                  to_seconds(p.run.first.html) * 1e3, to_seconds(p.run.second.html) * 1e3,
                  to_seconds(p.run.first.page) * 1e3, to_seconds(p.run.second.page) * 1e3,
                  p.never_slower() ? "yes" : "NO",
                  !p.needs_gap_closed() ? "-" : p.gap_closed() ? "closed >= half" : "NOT closed");
    out << line;
  }
  return out.str();
}

}  // namespace egw::scenarios
