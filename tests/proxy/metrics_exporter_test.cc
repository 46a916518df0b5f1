// The Prometheus exposition of a GatewaySnapshot: families, types, labels and
// values as text, then served over real HTTP by the exporter.
#include "proxy/metrics_exporter.h"

#include "common/build_info.h"

// <utility> first: Boost 1.74's asio/awaitable.hpp uses std::exchange without it (C++20).
#include <utility>
#include <boost/asio.hpp>

#include <chrono>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

namespace egw::proxy {
namespace {

namespace asio = boost::asio;

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << part << "\" not in:\n" << text;
}

GatewaySnapshot snapshot() {
  GatewaySnapshot s;
  s.role = "branch";
  s.uptime_seconds = 3600.5;
  EnsembleSnapshot e;
  e.peer = "hub-1";
  e.key = "k1";
  e.up = true;
  e.cwnd_bytes = 96'000;
  e.ssthresh_bytes = 48'000;
  e.bytes_in_flight = 12'000;
  e.srtt_seconds = 0.125;
  e.min_rtt_seconds = 0.0625;
  e.law_state = "probe_bw/up";
  e.pacing_rate_bytes_per_s = 2.5e6;
  e.bottleneck_bytes_per_s = 2e6;
  e.ack_path_delay_seconds = 0.03;
  e.ack_decimating = true;
  e.packets_sent = 1200;
  e.packets_lost = 3;
  e.loss_rounds = 2;
  e.random_loss_rounds = 1;
  e.tail_probes = 5;
  e.small_packets_sent = 7;
  e.urgent_packets_sent = 8;
  e.rtos = 6;
  e.stream_bytes_retransmitted = 3600;
  e.handshakes = 4;
  e.ensembles_started = 2;
  e.ensembles_resumed = 1;
  e.streams_by_class[static_cast<int>(ContentClass::html)] = 2;
  e.bytes_by_class[static_cast<int>(ContentClass::image)] = 5'000'000;
  e.streams_total = 40;
  e.cipher = "aes-256-gcm";
  s.ensembles.push_back(e);
  s.connections_open = 7;
  s.connections_accepted = 123;
  s.connections_refused["connect_timeout"] = 3;
  s.connections_closed["reclaimed"] = 64;
  s.clients = 2;
  s.client_connections_max = 1000;
  s.datagrams_dropped["bad_mac1"] = 9;
  s.cookie_replies_sent = 490;
  s.handshake_aead_mismatches = 2;
  s.tunnel_send_blocked = 11;
  s.cache_hits = 5;
  s.cache_misses = 2;
  s.cache_entries = 3;
  s.memory_in_use_bytes = 1 << 20;
  s.memory_limit_bytes = 256 << 20;
  s.config_reloads = 1;
  return s;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool has_line(const std::string& text, const std::string& line) {
  for (const auto& l : lines(text)) {
    if (l == line) return true;
  }
  return false;
}

TEST(RenderPrometheus, TypesLabelsAndValues) {
  const auto text = render_prometheus(snapshot());
  for (const char* line : {
           "# TYPE egw_info gauge",
           "egw_info{role=\"branch\"} 1",
           "# TYPE egw_connections_closed_total counter",
           "egw_connections_closed_total{reason=\"reclaimed\"} 64",
           "egw_clients 2",
           "egw_client_connections_max 1000",
           "# TYPE egw_uptime_seconds gauge",
           "egw_uptime_seconds 3600.5",
           "# TYPE egw_ensemble_cwnd_bytes gauge",
           "egw_ensemble_cwnd_bytes{peer=\"hub-1\",key=\"k1\"} 96000",
           "egw_ensemble_ssthresh_bytes{peer=\"hub-1\",key=\"k1\"} 48000",
           "egw_ensemble_bytes_in_flight{peer=\"hub-1\",key=\"k1\"} 12000",
           "egw_ensemble_srtt_seconds{peer=\"hub-1\",key=\"k1\"} 0.125",
           "egw_ensemble_min_rtt_seconds{peer=\"hub-1\",key=\"k1\"} 0.0625",
           "egw_ensemble_up{peer=\"hub-1\",key=\"k1\"} 1",
           "egw_ensemble_pacing_rate_bytes_per_second{peer=\"hub-1\",key=\"k1\"} 2500000",
           "egw_ensemble_bottleneck_bytes_per_second{peer=\"hub-1\",key=\"k1\"} 2000000",
           "egw_ensemble_ack_path_delay_seconds{peer=\"hub-1\",key=\"k1\"} 0.03",
           "egw_ensemble_ack_decimating{peer=\"hub-1\",key=\"k1\"} 1",
           "# TYPE egw_ensemble_packets_sent_total counter",
           "egw_ensemble_packets_sent_total{peer=\"hub-1\",key=\"k1\"} 1200",
           "egw_ensemble_packets_lost_total{peer=\"hub-1\",key=\"k1\"} 3",
           "egw_ensemble_loss_rounds_total{peer=\"hub-1\",key=\"k1\"} 2",
           "egw_ensemble_random_loss_rounds_total{peer=\"hub-1\",key=\"k1\"} 1",
           "egw_ensemble_tail_probes_total{peer=\"hub-1\",key=\"k1\"} 5",
           "egw_ensemble_timeouts_total{peer=\"hub-1\",key=\"k1\"} 6",
           "egw_ensemble_small_packets_total{peer=\"hub-1\",key=\"k1\"} 7",
           "egw_ensemble_urgent_packets_sent_total{peer=\"hub-1\",key=\"k1\"} 8",
           "egw_ensemble_retransmitted_bytes_total{peer=\"hub-1\",key=\"k1\"} 3600",
           "egw_ensemble_handshakes_total{peer=\"hub-1\",key=\"k1\"} 4",
           "egw_ensemble_started_total{peer=\"hub-1\",key=\"k1\"} 2",
           "egw_ensemble_resumed_total{peer=\"hub-1\",key=\"k1\"} 1",
           "# TYPE egw_streams_open gauge",
           "egw_streams_open{peer=\"hub-1\",class=\"html\"} 2",
           "egw_streams_open{peer=\"hub-1\",class=\"bulk\"} 0",
           "# TYPE egw_stream_bytes_total counter",
           "egw_stream_bytes_total{peer=\"hub-1\",class=\"image\"} 5000000",
           "egw_streams_opened_total{peer=\"hub-1\"} 40",
           "egw_connections_open 7",
           "# TYPE egw_connections_accepted_total counter",
           "egw_connections_accepted_total 123",
           "egw_connections_refused_total{reason=\"connect_timeout\"} 3",
           "# TYPE egw_destinations_refused_total counter",  // no samples, still declared
           "egw_datagrams_dropped_total{reason=\"bad_mac1\"} 9",
           "egw_handshake_initiations_processed_total 0",
           "egw_cookie_replies_total 490",
           "egw_handshake_aead_mismatches_total 2",
           "# TYPE egw_tunnel_cipher gauge",
           "egw_tunnel_cipher{peer=\"hub-1\",key=\"k1\",cipher=\"aes-256-gcm\"} 1",
           "egw_tunnel_send_blocked_total 11",
           "egw_cache_hits_total 5",
           "egw_cache_misses_total 2",
           "egw_cache_entries 3",
           "egw_memory_in_use_bytes 1048576",
           "egw_memory_limit_bytes 268435456",
           "egw_config_reloads_total 1",
           "egw_config_reload_failures_total 0",
       }) {
    EXPECT_TRUE(has_line(text, line)) << "missing: " << line << "\nin:\n" << text;
  }
}

TEST(RenderPrometheus, EveryFamilyHasHelpAndTypeAndTheEgwPrefix) {
  std::set<std::string> help;
  std::set<std::string> type;
  for (const auto& l : lines(render_prometheus(snapshot()))) {
    std::istringstream in(l);
    std::string hash, kind, name;
    in >> hash >> kind >> name;
    if (hash != "#") continue;
    EXPECT_TRUE(name.starts_with("egw_")) << l;
    (kind == "HELP" ? help : type).insert(name);
  }
  EXPECT_EQ(help, type);
  // egw_info, egw_build_info + 20 gateway + 6 by reason + 3 classification + 23 ensemble (thin-stream copies, small packets, ACK path, ACKs decimated, urgent packets) + egw_tunnel_cipher + 3 stream
  EXPECT_EQ(type.size(), 58u);
}

TEST(RenderPrometheus, BuildInfoNamesVersionAndCommit) {
  const std::string version(build_version());
  const std::string commit(build_commit());
  EXPECT_TRUE(std::regex_match(version, std::regex("[0-9]+\\.[0-9]+\\.[0-9]+"))) << version;
  EXPECT_TRUE(std::regex_match(commit, std::regex("[0-9a-f]{7,40}|unknown"))) << commit;
  const auto text = render_prometheus(snapshot());
  EXPECT_TRUE(has_line(text, "# TYPE egw_build_info gauge")) << text;
  EXPECT_TRUE(has_line(text, "egw_build_info{version=\"" + version + "\",commit=\"" + commit + "\"} 1")) << text;
}

TEST(RenderPrometheus, EscapesLabelValues) {
  auto s = snapshot();
  s.ensembles[0].peer = "hub \"east\"\\1";
  EXPECT_TRUE(contains(render_prometheus(s), "egw_ensemble_up{peer=\"hub \\\"east\\\"\\\\1\",key=\"k1\"} 1"));
}

TEST(RenderPrometheus, StreamSeriesAreSummedPerPeer) {
  auto s = snapshot();
  s.ensembles.push_back(s.ensembles[0]);
  s.ensembles[1].key = "k2";
  const auto text = render_prometheus(s);
  EXPECT_TRUE(has_line(text, "egw_streams_open{peer=\"hub-1\",class=\"html\"} 4")) << text;
  EXPECT_TRUE(has_line(text, "egw_streams_opened_total{peer=\"hub-1\"} 80")) << text;
  EXPECT_TRUE(has_line(text, "egw_ensemble_up{peer=\"hub-1\",key=\"k2\"} 1")) << text;
}

// A plain HTTP/1.0 GET (the server closes after the response), bounded in time.
std::string http_get(const std::string& address, const std::string& target,
                     std::chrono::milliseconds within = std::chrono::seconds(10)) {
  const auto colon = address.rfind(':');
  std::string host = address.substr(0, colon);
  if (host.starts_with('[')) host = host.substr(1, host.size() - 2);
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  const asio::ip::tcp::endpoint server(asio::ip::make_address(host),
                                       static_cast<unsigned short>(std::stoi(address.substr(colon + 1))));
  const std::string request = "GET " + target + " HTTP/1.0\r\nHost: test\r\n\r\n";
  std::string response;
  boost::system::error_code result = asio::error::timed_out;
  socket.async_connect(server, [&](boost::system::error_code ec) {
    if (ec) {
      result = ec;
      return;
    }
    asio::async_write(socket, asio::buffer(request), [&](boost::system::error_code ec, std::size_t) {
      if (ec) {
        result = ec;
        return;
      }
      asio::async_read(socket, asio::dynamic_buffer(response),
                       [&](boost::system::error_code ec, std::size_t) { result = ec; });
    });
  });
  io.run_for(within);
  if (result != asio::error::eof) throw std::runtime_error("GET " + address + target + ": " + result.message());
  return response;
}

TEST(MetricsExporter, ServesTheLatestSnapshotOverHttp) {
  MetricsExporter exporter("127.0.0.1:0");
  const auto address = exporter.listen_address();
  ASSERT_TRUE(address.starts_with("127.0.0.1:")) << address;
  EXPECT_NE(address, "127.0.0.1:0");

  const auto before = http_get(address, "/metrics");
  EXPECT_TRUE(contains(before, "200 OK"));
  EXPECT_FALSE(contains(before, "egw_"));  // nothing published yet

  auto s = snapshot();
  exporter.publish(s);
  const auto first = http_get(address, "/metrics");
  EXPECT_TRUE(contains(first, "200 OK"));
  EXPECT_TRUE(contains(first, "text/plain"));
  EXPECT_TRUE(contains(first, "\negw_ensemble_cwnd_bytes{peer=\"hub-1\",key=\"k1\"} 96000\n"));
  EXPECT_TRUE(contains(first, "\negw_connections_accepted_total 123\n"));

  s.ensembles[0].cwnd_bytes = 120'000;
  s.connections_accepted = 124;
  exporter.publish(s);
  const auto second = http_get(address, "/metrics");
  EXPECT_TRUE(contains(second, "\negw_ensemble_cwnd_bytes{peer=\"hub-1\",key=\"k1\"} 120000\n"));
  EXPECT_TRUE(contains(second, "\negw_connections_accepted_total 124\n"));
  // The body is render_prometheus, nothing else.
  EXPECT_TRUE(second.ends_with("\n" + render_prometheus(s))) << second;
}

// A gateway's SIGTERM and every restart wait for the exporter to stop.
TEST(MetricsExporter, StopsWithinAQuarterSecondAndFreesItsPort) {
  for (int i = 0; i < 3; ++i) {
    std::string address;
    std::chrono::steady_clock::duration stop_took{};
    {
      auto exporter = std::make_unique<MetricsExporter>("127.0.0.1:0");
      address = exporter->listen_address();
      exporter->publish(snapshot());
      EXPECT_TRUE(contains(http_get(address, "/metrics"), "200 OK"));
      const auto t0 = std::chrono::steady_clock::now();
      exporter.reset();
      stop_took = std::chrono::steady_clock::now() - t0;
    }
    EXPECT_LT(stop_took, std::chrono::milliseconds(250));
    MetricsExporter again(address);  // the same port is free again
    EXPECT_EQ(again.listen_address(), address);
  }
}

std::string construction_error(const std::string& listen) {
  try {
    MetricsExporter exporter(listen);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MetricsExporter, MalformedAddressesThrowNamingThem) {
  for (const char* bad : {"garbage", "127.0.0.1", "127.0.0.1:", "127.0.0.1:99999", "127.0.0.1:http",
                          "localhost:9470", "::1:9470", "[::1]9470", "[127.0.0.1]:9470"}) {
    const auto error = construction_error(bad);
    EXPECT_TRUE(contains(error, std::string("\"") + bad + "\" is not IPv4:PORT or [IPv6]:PORT"));
  }
}

TEST(MetricsExporter, PortInUseThrowsWithTheReason) {
  MetricsExporter first("127.0.0.1:0");
  const auto error = construction_error(first.listen_address());
  EXPECT_TRUE(contains(error, "cannot serve metrics on " + first.listen_address() + ": "));
  EXPECT_TRUE(contains(error, "Address already in use"));
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

TEST(MetricsExporter, Ipv6IsServedOrRefusedClearly) {
  try {
    MetricsExporter exporter("[::1]:0");
    EXPECT_TRUE(exporter.listen_address().starts_with("[::1]:")) << exporter.listen_address();
    exporter.publish(snapshot());
    EXPECT_TRUE(contains(http_get(exporter.listen_address(), "/metrics"), "egw_connections_open 7"));
  } catch (const std::runtime_error& e) {
    // A host without ::1 (IPv6 disabled).
    EXPECT_TRUE(contains(std::string(e.what()), "cannot serve metrics on [::1]:0: "));
  }
}

// Connections that never send a request (or never finish one) must not hold
// the server: with civetweb's two worker threads and its 5 s request
// timeout, four idle local connections stalled every scrape. Now an idle
// connection holds no worker, and beyond 32 the oldest makes room.
TEST(MetricsExporter, IdleConnectionsDoNotStallAScrape) {
  MetricsExporter exporter("127.0.0.1:0");
  exporter.publish(snapshot());
  const auto address = exporter.listen_address();
  const auto port = static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  asio::io_context io;
  std::vector<asio::ip::tcp::socket> idle;
  for (int i = 0; i < 100; ++i) {
    auto& s = idle.emplace_back(io);
    s.connect({asio::ip::make_address("127.0.0.1"), port});
    if (i % 2 == 1) asio::write(s, asio::buffer(std::string("GET /metrics HTTP/1.1\r\n")));  // never ends
  }
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto response = http_get(address, "/metrics", std::chrono::milliseconds(1000));
    EXPECT_TRUE(contains(response, "\negw_connections_open 7\n"));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
  }
}

// A connection that sends nothing is closed after the request timeout (2 s);
// unknown paths get a 404.
TEST(MetricsExporter, ClosesASilentConnectionAndAnswersOtherPathsWith404) {
  MetricsExporter exporter("127.0.0.1:0");
  const auto address = exporter.listen_address();
  EXPECT_TRUE(contains(http_get(address, "/"), "404 Not Found"));
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"),
             static_cast<std::uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)))});
  const auto t0 = std::chrono::steady_clock::now();
  char byte = 0;
  boost::system::error_code ec;
  timeval tv{5, 0};
  setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::size_t n = s.read_some(asio::buffer(&byte, 1), ec);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(ec, asio::error::eof) << ec.message();
  EXPECT_GT(took, std::chrono::milliseconds(1500));
  EXPECT_LT(took, std::chrono::milliseconds(3500));
}

}  // namespace
}  // namespace egw::proxy
