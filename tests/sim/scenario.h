// Scenario: the papers' experiments as a few lines of setup.
//
//            client hosts (branch gateways)            server hosts (hub gateways)
//   pair 0:  left(0) ----\                                  /---- right(0)
//   pair 1:  left(1) -----+=== forward: rate, delay, queue ==+----- right(1)
//     ...        ... ----+=== reverse: rate, delay, queue ==+----- ...
//   pair K-1:left(K-1) -/                                   \---- right(K-1)
//
//   Each pair is one tunnel Connection (client on the left, server on the
//   right); its streams share one ensemble. Both bottleneck directions get
//   the same PathConfig unless reverse_* overrides are set. Access links are
//   ideal. Bulk downloads and web responses flow right -> left (reverse).
//
// Typical use (E-TCP section 4: 800 kbit/s, 50 ms, queue 10, MSS 512):
//   PathConfig path{.bottleneck_bits_per_second = 800'000, .one_way_delay = ms(50),
//                   .queue_limit_packets = 10, .packet_bytes = 512};
//   Scenario s(path);
//   const auto pair = s.add_pair({.coupling = CouplingMode::single});
//   auto& web = s.add_web(pair, page, {.max_concurrent = 4}, instant_at(ms(0)));
//   ASSERT_TRUE(s.run_until_done(instant_at(ms(60'000))));
//   use web.html_time(), web.page_time(), s.network().reverse().stats() ...
// Tests should print s.describe() (parameters and seed) so a failure can be replayed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "congestion/ensemble.h"
#include "congestion/temporal_cache.h"
#include "tests/sim/bulk_transfer.h"
#include "tests/sim/event_loop.h"
#include "tests/sim/network.h"
#include "tests/sim/tunnel_host.h"
#include "tests/sim/web.h"
#include "tunnel/connection.h"

namespace egw::sim {

struct PathConfig {
  std::uint64_t bottleneck_bits_per_second = 10'000'000;
  Duration one_way_delay = ms(50);
  std::size_t queue_limit_packets = 0;  // 0 = unlimited
  ByteCount packet_bytes = 1200;        // the tunnel's max datagram (the "MSS" unit)
  ByteCount overhead_bytes = 28;        // IPv4 + UDP on the wire
  double loss_probability = 0.0;        // i.i.d., each direction
  Duration max_jitter = ms(0);
  bool priority_drop = false;
  double low_priority_queue_fraction = 0.5;
  std::size_t max_pairs = 4;            // hosts per side
  std::uint64_t seed = 1;
  // Reverse (right -> left) overrides; unset = same as forward.
  std::optional<std::uint64_t> reverse_bits_per_second;
  std::optional<std::size_t> reverse_queue_limit_packets;
};

struct PairConfig {
  congestion::CouplingMode coupling = congestion::CouplingMode::single;
  congestion::JoinMode join = congestion::JoinMode::ack_clocked;
  congestion::WindowLawKind law = congestion::WindowLawKind::newreno;
  std::uint32_t initial_window_packets = 10;
  congestion::SchedulingPolicy policy = congestion::SchedulingPolicy::content;
  // Temporal sharing: each side may keep its own cache (it must outlive the
  // pair); successive pairs with the same cache and cache_key resume.
  congestion::TemporalCache* client_cache = nullptr;
  congestion::TemporalCache* server_cache = nullptr;
  std::string cache_key = "peer";
  // Both ends stamp their ACKs, as two current gateways agree in the
  // handshake (kFlagAckTimestamps).
  bool ack_timestamps = true;
  // Last word on anything else (flow-control windows, ack policy, ...).
  std::function<void(tunnel::ConnectionConfig&)> customize;
};

LinkConfig forward_link_config(const PathConfig& path);
LinkConfig reverse_link_config(const PathConfig& path);
tunnel::ConnectionConfig make_connection_config(const PairConfig& pair, const PathConfig& path,
                                                bool is_client);

class Scenario {
 public:
  explicit Scenario(const PathConfig& path);
  ~Scenario();
  Scenario(const Scenario&) = delete;
  Scenario& operator=(const Scenario&) = delete;

  EventLoop& loop() { return loop_; }
  Dumbbell& network() { return network_; }
  Instant now() const { return loop_.now(); }
  const PathConfig& path() const { return path_; }

  // Creates a connection pair now on the lowest free host index; returns it.
  std::size_t add_pair(const PairConfig& config = {});
  TunnelHost& client(std::size_t pair);
  TunnelHost& server(std::size_t pair);
  // Closes both connections (CONNECTION_CLOSE goes out now).
  void close_pair(std::size_t pair);
  // Destroys the pair's hosts and servers. Apps that use it must be finished.
  void remove_pair(std::size_t pair);

  BulkTransfer& add_bulk(std::size_t pair, const BulkConfig& config, Instant start);
  // A download and an upload of `bytes` each from `start` (the upload on
  // port 5002): the link loaded both ways.
  struct BulkBothWays {
    BulkTransfer& download;
    BulkTransfer& upload;
  };
  BulkBothWays add_bulk_both_ways(std::size_t pair, ByteCount bytes, Instant start);
  // Starts a page fetch; a WebServer on the pair's server host is created on first use.
  WebClient& add_web(std::size_t pair, Page page, const WebClientConfig& config, Instant start);

  // Runs until every app added so far is complete, or `deadline`; returns
  // whether all completed.
  bool run_until_done(Instant deadline);
  void run_until(Instant deadline) { loop_.run_until(deadline); }
  bool all_done() const;

  // Parameters and seed, one line, for test logs.
  std::string describe() const;

 private:
  struct Pair {
    std::unique_ptr<TunnelHost> client;
    std::unique_ptr<TunnelHost> server;
    std::map<std::uint16_t, std::unique_ptr<WebServer>> web_servers;
  };
  Pair& pair_at(std::size_t pair);

  PathConfig path_;
  EventLoop loop_;
  Dumbbell network_;
  std::vector<Pair> pairs_;  // index = host index; empty slots are free
  std::vector<std::unique_ptr<BulkTransfer>> bulks_;
  std::vector<std::unique_ptr<WebClient>> webs_;
};

}  // namespace egw::sim
