// `ensemble-gw status --json`: the snapshot as one JSON object, checked by a
// real parser (python3's json module, strict: no NaN), its structure and
// values; hostile names stay valid JSON; a long listing shrinks and stays valid.
#include "proxy/status_json.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include "common/build_info.h"
#include "tests/support/shell.h"

namespace egw::proxy {
namespace {

namespace fs = std::filesystem;

GatewaySnapshot snapshot() {
  GatewaySnapshot s;
  s.role = "hub";
  s.uptime_seconds = 12.5;
  s.connections_open = 7;
  s.connections_accepted = 123;
  s.connections_refused["connect_timeout"] = 3;
  s.datagrams_dropped["bad_mac1"] = 9;
  s.config_reloads = 2;
  s.config_reload_failures = 1;
  s.rate_window_seconds = 2.0;
  EnsembleSnapshot e;
  e.peer = "b1";
  e.key = "b1";
  e.up = true;
  e.cwnd_bytes = 96000;
  e.ssthresh_bytes = kNoSsthresh;
  e.srtt_seconds = 0.125;
  e.law_state = "startup";
  e.cipher = "chacha20-poly1305";
  e.ciphers_offered = "aes-256-gcm,chacha20-poly1305";
  e.pacing_rate_bytes_per_s = 1.5e6;
  e.tail_probes = 5;
  e.rtos = 6;
  e.streams_by_class = {2, 0, 1, 5};
  e.bytes_by_class = {1000, 0, 5000000, 7};
  e.bytes_per_second_by_class = {500.5, 0, 250000, 0};
  s.ensembles.push_back(e);
  StreamSnapshot st;
  st.stream_id = 4;
  st.client = "10.1.0.5:51234";
  st.destination = "93.184.216.34:443";
  st.content_class = ContentClass::image;
  st.state = "open";
  st.bytes_to_client = 4096;
  st.age_seconds = 1.5;
  s.streams.push_back(st);
  return s;
}

// Runs python3 on `json` with `checks` (Python statements on `d`, the parsed
// object; `assert`s): "ok", or what python3 said.
std::string python_checks(const std::string& json, const std::string& checks) {
  std::string dir = (fs::temp_directory_path() / "egw-status-json-XXXXXX").string();
  if (!::mkdtemp(dir.data())) return "mkdtemp failed";
  std::ofstream(dir + "/status.json") << json;
  std::ofstream(dir + "/check.py") << "import json, sys\n"
                                      "def no_constants(name): raise ValueError('not JSON: ' + name)\n"
                                      "d = json.load(open(sys.argv[1], encoding='utf-8', errors='strict'),\n"
                                      "              parse_constant=no_constants)\n"
                                   << checks << "\nprint('ok')\n";
  const std::string out =
      test_support::run_command("/usr/bin/python3 " + dir + "/check.py " + dir + "/status.json 2>&1");
  fs::remove_all(dir);
  return out;
}

TEST(StatusJson, StructureAndValues) {
  const std::string json = render_status_json(snapshot(), 1 << 20);
  ASSERT_TRUE(json.ends_with("}\n"));
  EXPECT_EQ(python_checks(json, R"(
assert d['version'] == ')" + std::string(build_version()) + R"('
assert d['commit'] == ')" + std::string(build_commit()) + R"('
assert d['role'] == 'hub' and d['uptime_seconds'] == 12.5
assert d['connections_open'] == 7 and d['connections_accepted'] == 123
assert d['connections_refused'] == {'connect_timeout': 3}
assert d['streams_classified'] == {} and d['streams_by_application'] == {} and d['streams_decayed_to_bulk'] == 0
assert d['destinations_refused'] == {}
assert d['datagrams_dropped'] == {'bad_mac1': 9}
assert d['config_reloads'] == 2 and d['config_reload_failures'] == 1
assert d['rate_window_seconds'] == 2.0
[e] = d['ensembles']
assert e['peer'] == 'b1' and e['up'] is True and e['cwnd_bytes'] == 96000
assert e['ssthresh_bytes'] is None
assert e['cipher'] == 'chacha20-poly1305' and e['ciphers_offered'] == 'aes-256-gcm,chacha20-poly1305'
assert d['handshake_aead_mismatches'] == 0
assert e['srtt_seconds'] == 0.125 and e['tail_probes'] == 5 and e['timeouts'] == 6
assert e['law_state'] == 'startup' and e['pacing_rate_bytes_per_second'] == 1500000
assert e['bottleneck_bytes_per_second'] == 0 and e['probe_extensions'] == 0 and e['ack_path_delay_seconds'] == 0
assert e['ack_decimating'] is False
assert e['streams_by_class'] == {'html': 2, 'script': 0, 'image': 1, 'bulk': 5, 'realtime': 0, 'interactive': 0, 'web': 0, 'streaming': 0}
assert e['bytes_by_class'] == {'html': 1000, 'script': 0, 'image': 5000000, 'bulk': 7, 'realtime': 0, 'interactive': 0, 'web': 0, 'streaming': 0}
assert e['bytes_per_second_by_class'] == {'html': 500.5, 'script': 0, 'image': 250000, 'bulk': 0, 'realtime': 0, 'interactive': 0, 'web': 0, 'streaming': 0}
[st] = d['streams']
assert st == {'stream_id': 4, 'client': '10.1.0.5:51234', 'destination': '93.184.216.34:443',
              'class': 'image', 'state': 'open', 'bytes_to_server': 0, 'bytes_to_client': 4096,
              'age_seconds': 1.5}, st
assert d['streams_omitted'] == 0
)"),
            "ok");
}

TEST(StatusJson, HostileNamesAndNumbersStayValid) {
  auto s = snapshot();
  s.ensembles[0].peer = std::string("q\"b\\s\n\t\x01\x7f") + "\xff\xc3(" + "\xed\xa0\x80" + "é€😀";
  s.ensembles[0].srtt_seconds = std::numeric_limits<double>::quiet_NaN();
  s.ensembles[0].min_rtt_seconds = std::numeric_limits<double>::infinity();
  EXPECT_EQ(python_checks(render_status_json(s, 1 << 20), R"(
e = d['ensembles'][0]
assert e['peer'] == 'q"b\\s\n\t\x01\x7f\ufffd\ufffd(\ufffd\ufffd\ufffdé€😀', repr(e['peer'])
assert e['srtt_seconds'] is None and e['min_rtt_seconds'] is None
)"),
            "ok");
}

TEST(StatusJson, UdpFlows) {
  auto s = snapshot();
  s.udp_flows_open = 1;
  s.udp_flows_opened = 3;
  s.udp_datagrams_dropped["deadline"] = 12;
  UdpFlowSnapshot f;
  f.peer = "b1";
  f.flow_id = 2;
  f.source = "192.0.2.1:40123";
  f.destination = "198.51.100.7:3478";
  f.content_class = ContentClass::realtime;
  f.datagrams_sent = 10;
  f.bytes_sent = 1600;
  f.datagrams_received = 9;
  f.bytes_received = 1440;
  f.dropped_deadline = 12;
  f.dropped_queue = 1;
  f.idle_seconds = 0.5;
  s.udp_flows.push_back(f);
  EXPECT_EQ(python_checks(render_status_json(s, 64 * 1024), R"(
assert d['udp_flows_open'] == 1 and d['udp_flows_opened'] == 3
assert d['udp_datagrams_dropped'] == {'deadline': 12}
assert d['udp_flows_omitted'] == 0
assert d['udp_flows'] == [{'peer': 'b1', 'flow_id': 2, 'source': '192.0.2.1:40123',
  'destination': '198.51.100.7:3478', 'class': 'realtime', 'datagrams_sent': 10, 'bytes_sent': 1600,
  'datagrams_received': 9, 'bytes_received': 1440, 'dropped_deadline': 12, 'dropped_queue': 1,
  'idle_seconds': 0.5}], d['udp_flows']
)"),
            "ok");
  // Thousands of flows shrink like streams, and it stays valid.
  for (int i = 0; i < 5000; ++i) s.udp_flows.push_back(f);
  const std::string json = render_status_json(s, 64 * 1024);
  EXPECT_LE(json.size(), 64u * 1024);
  EXPECT_EQ(python_checks(json, R"(
assert 0 < len(d['udp_flows']) < 5001
assert len(d['udp_flows']) + d['udp_flows_omitted'] == 5001
assert len(d['streams']) == 1
)"),
            "ok");
}

TEST(StatusJson, TooManyStreamsAreOmittedAndItStaysValid) {
  auto s = snapshot();
  for (int i = 0; i < 5000; ++i) s.streams.push_back(s.streams[0]);
  const std::string json = render_status_json(s, 64 * 1024);
  EXPECT_LE(json.size(), 64u * 1024);
  EXPECT_EQ(python_checks(json, R"(
assert 0 < len(d['streams']) < 5001
assert len(d['streams']) + d['streams_omitted'] == 5001
)"),
            "ok");
}

}  // namespace
}  // namespace egw::proxy
