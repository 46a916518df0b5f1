// `ensemble-gw status` text: the header, one line per ensemble, one per
// listed stream, and the count of those left out.
#include "proxy/status_text.h"

#include <gtest/gtest.h>

namespace egw::proxy {
namespace {

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << part << "\" not in:\n" << text;
}

GatewaySnapshot snapshot() {
  GatewaySnapshot s;
  s.role = "branch";
  s.uptime_seconds = 3 * 3600 + 125;
  s.connections_open = 7;
  s.connections_accepted = 123;
  s.connections_refused["connect_timeout"] = 3;
  s.connections_refused["limit_memory"] = 0;
  s.datagrams_dropped["bad_mac1"] = 9;
  s.initiations_processed = 4;
  s.cookie_replies_sent = 490;
  s.memory_in_use_bytes = 3 << 20;
  s.memory_limit_bytes = 256 << 20;
  s.cache_entries = 3;
  s.cache_hits = 5;
  s.cache_misses = 2;
  s.config_reloads = 2;
  s.config_reload_failures = 1;
  EnsembleSnapshot e;
  e.peer = "hub-1";
  e.key = "k1";
  e.up = true;
  e.peer_address = "203.0.113.7:51900";
  e.cipher = "aes-256-gcm";
  e.law_state = "avoidance";
  e.cwnd_bytes = 96 * 1024;
  e.ssthresh_bytes = 48 * 1024;
  e.bytes_in_flight = 12 * 1024;
  e.srtt_seconds = 0.1012;
  e.packets_sent = 1200;
  e.packets_lost = 3;
  e.loss_rounds = 2;
  e.streams_by_class = {2, 0, 1, 5};
  s.ensembles.push_back(e);
  StreamSnapshot st;
  st.stream_id = 4;
  st.client = "10.1.0.5:51234";
  st.destination = "93.184.216.34:443";
  st.content_class = ContentClass::html;
  st.state = "open";
  st.bytes_to_server = 1200;
  st.bytes_to_client = 34 * 1024 + 512;
  st.age_seconds = 12.34;
  s.streams.push_back(st);
  s.streams_omitted = 7;
  return s;
}

TEST(StatusText, HeaderEnsemblesAndStreams) {
  const auto text = render_status(snapshot());
  EXPECT_TRUE(contains(text, "ensemble-gw branch: up 3h02m, 7 connections open (123 accepted), "
                             "memory 3.0 MiB of 256.0 MiB\n"));
  EXPECT_TRUE(contains(text, "  connections refused: connect_timeout 3\n"));  // zero counts left out
  EXPECT_TRUE(contains(text, "  datagrams dropped: bad_mac1 9\n"));
  EXPECT_TRUE(contains(text, "  handshake initiations: 4 processed, 490 answered with a cookie\n"));
  EXPECT_FALSE(contains(text, "destinations refused"));
  EXPECT_TRUE(contains(text, "  temporal cache: 3 entries, 5 hits, 2 misses; config reloads: 2 (1 failed)\n"));
  EXPECT_TRUE(contains(text, "PEER   KEY  STATE  ADDRESS            CIPHER       LAW        CWND      SSTHRESH  SRTT      INFLIGHT"));
  EXPECT_TRUE(contains(text, "hub-1  k1   up     203.0.113.7:51900  aes-256-gcm  avoidance  96.0 KiB  48.0 KiB  101.2 ms  12.0 KiB  "
                             "3/1200     2            2/0/1/5/0/0/0/0" + std::string(52, ' ') + "-\n"));  // no rates yet
  EXPECT_TRUE(contains(text, "ID  CLIENT          DESTINATION        CLASS  STATE  TO SERVER  TO CLIENT  AGE\n"));
  EXPECT_TRUE(contains(text, "4   10.1.0.5:51234  93.184.216.34:443  html   open   1.2 KiB    34.5 KiB   12.3s\n"));
  EXPECT_TRUE(text.ends_with("\n... and 7 more\n")) << text;
}

TEST(StatusText, RatesPerClassInTheLastColumn) {
  auto s = snapshot();
  s.rate_window_seconds = 2.04;
  s.ensembles[0].bytes_per_second_by_class = {1.25 * 1024 * 1024, 0, 9.5 * 1024, 512};
  const auto text = render_status(s);
  EXPECT_TRUE(contains(text, "\nrates: bytes/s per class over the last 2.0 s\nPEER   KEY  STATE"));
  const std::string classes = "html/script/image/bulk/realtime/interactive/web/streaming";
  EXPECT_TRUE(contains(text, "LOSS ROUNDS  STREAMS " + classes + "  RATE " + classes + "\n"));
  EXPECT_TRUE(contains(text, "2/0/1/5/0/0/0/0" + std::string(52, ' ') + "1.2M/0/9.5K/512/0/0/0/0\n"));
}

TEST(StatusText, ClassificationByApplicationAndStage) {
  auto s = snapshot();
  s.streams_by_application = {{"YouTube", 2}, {"Zoom", 3}};
  s.streams_classified = {{"learned", 1}, {"sni_detector", 5}};
  s.streams_decayed_to_bulk = 1;
  const auto text = render_status(s);
  EXPECT_TRUE(contains(text, "\n  streams by application: YouTube 2, Zoom 3\n"
                             "  streams classified by: learned 1, sni_detector 5\n"
                             "  streams decayed to bulk: 1\n"));
}

TEST(StatusText, EmptyGateway) {
  GatewaySnapshot s;
  s.role = "hub";
  const auto text = render_status(s);
  EXPECT_TRUE(contains(text, "ensemble-gw hub: up 0.0s, 0 connections open (0 accepted), memory 0 B (no limit)\n"));
  EXPECT_TRUE(contains(text, "\nno ensembles\n"));
  EXPECT_TRUE(text.ends_with("\nno open streams\n")) << text;
}

UdpFlowSnapshot udp_flow() {
  UdpFlowSnapshot f;
  f.peer = "hub-1";
  f.flow_id = 6;
  f.source = "10.1.0.9:5060";
  f.destination = "[2001:db8::7]:3478";
  f.content_class = ContentClass::realtime;
  f.datagrams_sent = 1500;
  f.bytes_sent = 240 * 1024;
  f.datagrams_received = 1490;
  f.bytes_received = 238 * 1024;
  f.dropped_deadline = 12;
  f.dropped_queue = 1;
  f.idle_seconds = 0.02;
  return f;
}

// The UDP flows after the streams: 5-tuple, class, each way, drops, idle;
// bounded like the streams.
TEST(StatusText, UdpFlowsAfterTheStreams) {
  auto s = snapshot();
  s.udp_flows_opened = 40;
  s.udp_flows.push_back(udp_flow());
  s.udp_flows_omitted = 38;
  const auto text = render_status(s);
  EXPECT_TRUE(contains(text, "\n... and 7 more\n\nPEER   FLOW  SOURCE         DESTINATION         CLASS     SENT              "
                             "RECEIVED          LATE/FULL  IDLE\n"));
  EXPECT_TRUE(contains(text, "hub-1  6     10.1.0.9:5060  [2001:db8::7]:3478  realtime  1500 (240.0 KiB)  "
                             "1490 (238.0 KiB)  12/1       0.0s\n"));
  EXPECT_TRUE(text.ends_with("\n... and 38 more UDP flows\n")) << text;
  // None open, but some were: said so; never any (no `udp`): nothing.
  s.udp_flows.clear();
  s.udp_flows_omitted = 0;
  EXPECT_TRUE(render_status(s).ends_with("\n... and 7 more\n\nno open UDP flows\n"));
  s.udp_flows_opened = 0;
  EXPECT_TRUE(render_status(s).ends_with("\n... and 7 more\n"));
}

TEST(StatusText, ControlCharactersDoNotReachTheTerminal) {
  auto s = snapshot();
  s.ensembles[0].peer = "evil\x1b[2Jpeer";
  s.streams[0].destination = "a\nb";
  const auto text = render_status(s);
  EXPECT_FALSE(contains(text, "\x1b"));
  EXPECT_TRUE(contains(text, "evil?[2Jpeer"));
  EXPECT_TRUE(contains(text, "a?b"));
}

TEST(StatusText, Durations) {
  auto s = snapshot();
  s.uptime_seconds = 2 * 86400 + 5 * 3600 + 7;
  s.streams[0].age_seconds = 5 * 60 + 2.9;
  const auto text = render_status(s);
  EXPECT_TRUE(contains(text, ": up 2d05h,"));
  EXPECT_TRUE(contains(text, "  5m02s\n"));
}

}  // namespace
}  // namespace egw::proxy
