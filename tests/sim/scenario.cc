#include "tests/sim/scenario.h"

#include <sstream>
#include <stdexcept>

#include "tests/support/test_protection.h"

namespace egw::sim {

namespace {
DumbbellConfig dumbbell_config(const PathConfig& path) {
  DumbbellConfig c;
  c.hosts_per_side = path.max_pairs;
  c.forward = forward_link_config(path);
  c.reverse = reverse_link_config(path);
  c.seed = path.seed;
  return c;
}
}  // namespace

LinkConfig forward_link_config(const PathConfig& path) {
  LinkConfig c;
  c.rate_bits_per_second = path.bottleneck_bits_per_second;
  c.propagation_delay = path.one_way_delay;
  c.queue_limit_packets = path.queue_limit_packets;
  c.overhead_bytes = path.overhead_bytes;
  c.loss_probability = path.loss_probability;
  c.priority_drop = path.priority_drop;
  c.low_priority_queue_fraction = path.low_priority_queue_fraction;
  c.max_jitter = path.max_jitter;
  return c;
}

LinkConfig reverse_link_config(const PathConfig& path) {
  LinkConfig c = forward_link_config(path);
  if (path.reverse_bits_per_second) c.rate_bits_per_second = *path.reverse_bits_per_second;
  if (path.reverse_queue_limit_packets) c.queue_limit_packets = *path.reverse_queue_limit_packets;
  return c;
}

tunnel::ConnectionConfig make_connection_config(const PairConfig& pair, const PathConfig& path,
                                                bool is_client) {
  tunnel::ConnectionConfig c;
  c.is_client = is_client;
  c.max_datagram_bytes = path.packet_bytes;
  c.cache_key = pair.cache_key;
  c.ensemble.max_datagram_bytes = path.packet_bytes;
  c.ensemble.coupling = pair.coupling;
  c.ensemble.join = pair.join;
  c.ensemble.law = pair.law;
  c.ensemble.initial_window_packets = pair.initial_window_packets;
  c.ensemble.scheduler.policy = pair.policy;
  c.peer_reads_ack_timestamps = pair.ack_timestamps;
  if (pair.customize) pair.customize(c);
  return c;
}

Scenario::Scenario(const PathConfig& path)
    : path_(path), network_(loop_, dumbbell_config(path)), pairs_(path.max_pairs) {}

Scenario::~Scenario() {
  // Apps refer to hosts: destroy them first.
  webs_.clear();
  bulks_.clear();
  pairs_.clear();
}

std::size_t Scenario::add_pair(const PairConfig& config) {
  for (std::size_t i = 0; i < pairs_.size(); ++i) {
    if (pairs_[i].client) continue;
    // Both ends share a key so TestProtection tags verify; distinct per slot and seed.
    const std::uint64_t key = path_.seed * 1'000'003 + i;
    const Address left = network_.left(i);
    const Address right = network_.right(i);
    pairs_[i].client = std::make_unique<TunnelHost>(
        loop_, network_, left, right, make_connection_config(config, path_, true),
        std::make_unique<tunnel::TestProtection>(key), config.client_cache);
    pairs_[i].server = std::make_unique<TunnelHost>(
        loop_, network_, right, left, make_connection_config(config, path_, false),
        std::make_unique<tunnel::TestProtection>(key), config.server_cache);
    return i;
  }
  throw std::out_of_range("Scenario::add_pair: all host slots in use (raise max_pairs)");
}

Scenario::Pair& Scenario::pair_at(std::size_t pair) {
  if (pair >= pairs_.size() || !pairs_[pair].client) throw std::out_of_range("Scenario: no such pair");
  return pairs_[pair];
}

TunnelHost& Scenario::client(std::size_t pair) { return *pair_at(pair).client; }
TunnelHost& Scenario::server(std::size_t pair) { return *pair_at(pair).server; }

void Scenario::close_pair(std::size_t pair) {
  Pair& p = pair_at(pair);
  for (TunnelHost* h : {p.client.get(), p.server.get()}) {
    h->connection().close(0, "scenario done", loop_.now());
    h->flush();
  }
}

void Scenario::remove_pair(std::size_t pair) {
  Pair& p = pair_at(pair);
  p.web_servers.clear();
  p.client.reset();
  p.server.reset();
}

BulkTransfer& Scenario::add_bulk(std::size_t pair, const BulkConfig& config, Instant start) {
  Pair& p = pair_at(pair);
  bulks_.push_back(std::make_unique<BulkTransfer>(config, *p.client, *p.server));
  bulks_.back()->start_at(loop_, start);
  return *bulks_.back();
}

Scenario::BulkBothWays Scenario::add_bulk_both_ways(std::size_t pair, ByteCount bytes, Instant start) {
  BulkConfig down;
  down.bytes = bytes;
  BulkConfig up = down;
  up.direction = BulkConfig::Direction::client_to_server;
  up.port = 5002;
  BulkTransfer& download = add_bulk(pair, down, start);
  return {download, add_bulk(pair, up, start)};
}

WebClient& Scenario::add_web(std::size_t pair, Page page, const WebClientConfig& config, Instant start) {
  Pair& p = pair_at(pair);
  auto& server = p.web_servers[config.port];
  if (!server) server = std::make_unique<WebServer>(*p.server, config.port);
  webs_.push_back(std::make_unique<WebClient>(*p.client, std::move(page), config));
  webs_.back()->start_at(loop_, start);
  return *webs_.back();
}

bool Scenario::all_done() const {
  for (const auto& b : bulks_) {
    if (!b->complete()) return false;
  }
  for (const auto& w : webs_) {
    if (!w->complete()) return false;
  }
  return true;
}

bool Scenario::run_until_done(Instant deadline) {
  return loop_.run_until([this] { return all_done(); }, deadline);
}

std::string Scenario::describe() const {
  std::ostringstream out;
  out << "dumbbell: " << path_.bottleneck_bits_per_second << " bit/s";
  if (path_.reverse_bits_per_second) out << " (reverse " << *path_.reverse_bits_per_second << ")";
  out << ", one-way " << path_.one_way_delay.count() << " us, queue "
      << path_.queue_limit_packets << " pkts, packet " << path_.packet_bytes << " B + "
      << path_.overhead_bytes << " B, loss " << path_.loss_probability << ", jitter "
      << path_.max_jitter.count() << " us, priority_drop " << path_.priority_drop << ", seed "
      << path_.seed;
  return out.str();
}

}  // namespace egw::sim
