// The gateway's defences against one client taking every slot (issue 19):
// reclaiming the heaviest client's idle connections when the gateway is
// full, idle and half-closed timeouts, TCP keepalive, rate-limited logs.
// Members of Gateway (gateway.h); admission itself is in gateway.cc.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <algorithm>

#include "proxy/gateway.h"
#include "tunnel/error_codes.h"

namespace egw::proxy {

namespace {
// Reclaiming: connections idle at least this long, this many at a time (one
// scan of the heaviest client's relays makes room for the next newcomers too).
constexpr Duration kMinIdleToReclaim = std::chrono::seconds(1);
constexpr std::size_t kReclaimBatch = 64;
// A scan that found nothing to reclaim is not repeated for this long: a
// flood of newcomers while the heaviest client is busy costs one scan, not
// one per connection.
constexpr Duration kReclaimRescanAfter = std::chrono::milliseconds(250);
// Log lines of one kind a second; the rest are summed up once a second.
constexpr std::uint32_t kLogLinesPerSecond = 10;
}  // namespace

// Resets up to kReclaimBatch of the heaviest client's connections, longest
// idle first (idle kMinIdleToReclaim at least, nothing in flight), if that
// client has more connections than `client` would with this one.
std::size_t Gateway::reclaim_for(RelayTable& relays, const config::Ip16& client) {
  const auto own = clients_.find(client);
  const std::uint32_t mine = own == clients_.end() ? 0 : own->second.connections;
  const auto heaviest = std::max_element(clients_.begin(), clients_.end(), [](const auto& a, const auto& b) {
    return a.second.connections < b.second.connections;
  });
  if (heaviest == clients_.end() || heaviest->second.connections <= mine + 1) return 0;
  const Instant t = now();
  if (t < reclaim_barren_until_) return 0;
  const config::Ip16 victim = heaviest->first;  // the entry may go while its relays end
  const std::uint32_t had = heaviest->second.connections;
  std::vector<Relay*> idle;
  for (const auto& [r, relay] : relays) {
    if (r->client_address() == victim && r->has_stream() && t - r->last_activity() >= kMinIdleToReclaim) {
      idle.push_back(r);
    }
  }
  std::sort(idle.begin(), idle.end(), [](Relay* a, Relay* b) { return a->last_activity() < b->last_activity(); });
  std::size_t reclaimed = 0;
  for (Relay* r : idle) {
    if (reclaimed == kReclaimBatch) break;
    if (!r->nothing_in_flight()) continue;
    r->abort(tunnel::kErrorGatewayLimit);
    ++reclaimed;
  }
  counters_.closed["reclaimed"] += reclaimed;
  if (reclaimed == 0) reclaim_barren_until_ = t + kReclaimRescanAfter;
  if (reclaimed > 0 && log_allowed("reclaim")) {
    spdlog::warn("gateway full ({} connections): reset {} idle connections of {} ({} open) for {}",
                 config_.reloadable.limits.connections_per_peer, reclaimed, config::ip16_to_string(victim), had,
                 config::ip16_to_string(client));
  }
  return reclaimed;
}

// Relays idle past their timeout are closed only with nothing in flight, so
// no byte is dropped unseen; one log line per reason a second. Also sums
// each branch client's memory (admission reads it until the next sweep).
void Gateway::sweep_relays(RelayTable& relays, const tunnel::Connection* c) {
  const config::Limits& l = config_.reloadable.limits;
  const Instant t = now();
  std::vector<std::pair<Relay*, const char*>> expired;
  for (const auto& [r, relay] : relays) {
    const std::uint64_t buffered = c && r->has_stream() ? c->stream_buffered_bytes(r->stream_id()) : 0;
    if (r->side() == Relay::Side::branch) {
      if (auto it = clients_.find(r->client_address()); it != clients_.end()) {
        it->second.memory_bytes += buffered;
      }
    }
    if (!r->has_stream()) continue;  // connecting: its own deadlines
    const bool half = r->half_closed();
    const std::uint32_t timeout_ms = half ? l.half_closed_timeout_ms : l.idle_timeout_ms;
    if (timeout_ms > 0 && t - r->last_activity() >= ms(timeout_ms)) {
      expired.emplace_back(r, half ? "half_closed_timeout" : "idle_timeout");
    }
  }
  std::map<std::string, std::size_t> closed;
  for (const auto& [r, reason] : expired) {  // closing one erases it from `relays`: not iterated here
    if (r->finished() || !r->nothing_in_flight()) continue;
    r->close_quietly(tunnel::kErrorGatewayLimit);
    ++counters_.closed[reason];
    ++closed[reason];
  }
  for (const auto& [reason, n] : closed) spdlog::info("closed {} idle connection{}: {}", n, n == 1 ? "" : "s", reason);
}

void Gateway::set_keepalive(boost::asio::ip::tcp::socket& socket) const {
  const config::Limits& l = config_.reloadable.limits;
  const int fd = socket.native_handle();
  const int on = l.keepalive_idle_ms > 0 ? 1 : 0;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  if (on == 0) return;
  const auto seconds = [](std::uint32_t ms) { return static_cast<int>((ms + 999) / 1000); };
  const int idle = seconds(l.keepalive_idle_ms);
  const int interval = seconds(l.keepalive_interval_ms);
  const int probes = static_cast<int>(l.keepalive_probes);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

bool Gateway::log_allowed(const std::string& kind) {
  LogLimit& l = log_limits_[kind];
  if (l.lines < kLogLinesPerSecond) {
    ++l.lines;
    return true;
  }
  ++l.held_back;
  return false;
}

void Gateway::log_held_back() {
  for (auto& [kind, l] : log_limits_) {
    if (l.held_back > 0) spdlog::info("{} more \"{}\" events in the last second, not logged one by one", l.held_back, kind);
    l = {};
  }
}

}  // namespace egw::proxy
