#include "proxy/gateway_runtime.h"

#include <utility>  // before Boost 1.74 asio (see tunnel_socket.h)
#include <boost/asio.hpp>

#include <spdlog/spdlog.h>

#include <linux/capability.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "proxy/gateway.h"
#include "proxy/metrics_exporter.h"
#include "proxy/nft_table.h"
#include "proxy/privileges.h"
#include "proxy/status_socket.h"
#include "proxy/udp_route.h"

namespace egw::proxy {

namespace asio = boost::asio;

namespace {

// The branch's nftables table, from its config: LAN clients' TCP to the
// interception listener; the hub's own address is never intercepted.
InterceptionRules interception_rules(const config::GatewayConfig& c) {
  InterceptionRules r;
  r.table = c.interception.table;
  r.lan = c.interception.lan;
  r.ports = c.interception.ports;
  r.reject_quic = c.interception.reject_quic;
  r.bypass = c.interception.bypass;
  const auto colon = c.interception.listen.rfind(':');
  r.redirect_port = static_cast<std::uint16_t>(std::stoi(c.interception.listen.substr(colon + 1)));
  if (c.udp.intercepts()) {
    r.udp_ports = c.udp.ports;
    if (c.udp.carry_quic) {  // QUIC as datagrams (classified as udp.class) instead of rejected
      r.udp_ports.ranges.emplace_back(443, 443);
      r.reject_quic = false;
    }
    r.udp_tproxy_port = static_cast<std::uint16_t>(std::stoi(c.udp.listen.substr(c.udp.listen.rfind(':') + 1)));
    r.udp_mark = kUdpFwmark;
  }
  for (const auto& peer : c.endpoint.peers) {
    if (!peer.endpoint) continue;
    config::IpPrefix host;
    host.address = peer.endpoint->ip;
    host.bits = 128;
    r.bypass.push_back(host);
  }
  return r;
}

}  // namespace

int print_interception_rules(const config::GatewayConfig& config) {
  if (config.is_hub) {
    std::fprintf(stderr, "ensemble-gw rules: %s is a hub; only a branch intercepts\n", config.path.c_str());
    return 1;
  }
  const InterceptionRules rules = interception_rules(config);
  if (auto err = check_rules(rules)) {
    std::fprintf(stderr, "ensemble-gw rules: %s\n", err->c_str());
    return 1;
  }
  std::fputs(render_nft_script(rules).c_str(), stdout);
  return 0;
}

// One descriptor per proxied connection: the soft limit (often 1,024) would
// cap the gateway long before its own limits do.
void raise_descriptor_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < 65536) {
    spdlog::warn("descriptor limit {}: at most ~{} connections (raise LimitNOFILE / ulimit -n)", r.rlim_cur,
                 r.rlim_cur - 64);
  }
}

namespace {

// The branch's nftables table, as the runtime keeps it through start,
// reloads and stop.
class Interception {
 public:
  explicit Interception(const config::GatewayConfig& c) : table_(c.interception.table) {}

  // At start: installs (mode nftables) or prints (mode print) the rules.
  void start(const config::GatewayConfig& c) {
    if (c.is_hub || c.interception.mode == config::InterceptionMode::none) return;
    const InterceptionRules rules = interception_rules(c);
    if (auto err = check_rules(rules)) throw std::runtime_error("interception: " + *err);
    if (c.interception.mode == config::InterceptionMode::print) {
      spdlog::info("interception mode print: apply these rules yourself:\n{}", render_nft_script(rules));
      return;
    }
    // One batch: on failure the kernel applied none of it.
    if (auto err = NftTable::install(rules)) throw std::runtime_error("interception: " + *err);
    installed_ = true;
    if (rules.udp_tproxy_port != 0) {
      if (auto err = install_udp_route()) throw std::runtime_error("interception: " + *err);
      udp_route_ = true;
      spdlog::info("UDP to ports {} from the LAN to port {} (TPROXY, fwmark {:#x} -> table {})",
                   rules.udp_ports.to_string(), rules.udp_tproxy_port, kUdpFwmark, kUdpRouteTable);
    }
    spdlog::info("nftables table inet {} installed: TCP from the LAN to port {}", rules.table, rules.redirect_port);
  }

  // SIGHUP: the rules of plan.applied replace the table in one transaction
  // (nft_table.h); if that fails, the running rules stay in plan.applied.
  void reload(config::ReloadPlan& plan, const config::GatewayConfig& running, bool draining) {
    if (!plan.interception_changed) return;
    const InterceptionRules rules = interception_rules(plan.applied);
    std::optional<std::string> err = check_rules(rules);
    if (!err && draining) err = "draining";
    if (!err && plan.applied.interception.mode == config::InterceptionMode::print) {
      spdlog::info("interception mode print: apply the new rules yourself:\n{}", render_nft_script(rules));
      return;
    }
    if (!err && installed_) err = NftTable::install(rules);
    if (err) {
      plan.applied.interception = running.interception;
      plan.restart_needed.push_back("interception.lan/ports/bypass/reject_quic (" + *err + ")");
      return;
    }
    if (installed_) spdlog::info("nftables table inet {} replaced with the reloaded rules", rules.table);
  }

  // SIGTERM: the table stays while the drain runs (NftTable::stop_new): the
  // connections it redirected keep their translation until they end.
  void stop_new() {
    if (!installed_) return;
    if (auto err = NftTable::stop_new(table_)) {
      spdlog::warn("nftables: cannot stop intercepting new connections, removing the table: {}", *err);
      remove();
      return;
    }
    spdlog::info("nftables table inet {}: new connections no longer intercepted", table_);
  }

  void remove() {
    if (!installed_) return;
    installed_ = false;
    if (auto err = NftTable::remove(table_)) spdlog::warn("removing the nftables table: {}", *err);
    else spdlog::info("nftables table inet {} removed", table_);
    if (udp_route_) {
      udp_route_ = false;
      if (auto err = remove_udp_route()) spdlog::warn("{}", *err);
    }
  }

 private:
  std::string table_;
  bool installed_ = false;
  bool udp_route_ = false;  // proxy/udp_route.h, with the table
};

void log_warnings(const config::GatewayConfig& c) {
  for (const auto& w : c.warnings) spdlog::warn("{}", w);
}

// After the sockets, before any thread: only CAP_NET_ADMIN from here on.
void confine(const config::GatewayConfig& c) {
  // The branch's UDP replies leave from the original destination's port:
  // below 1024 (DNS, QUIC) binding it needs CAP_NET_BIND_SERVICE too.
  bool low_port = c.udp.intercepts() && c.udp.carry_quic;
  for (const auto& [lo, hi] : c.udp.intercepts() ? c.udp.ports.ranges : decltype(c.udp.ports.ranges){}) {
    low_port = low_port || lo < 1024;
  }
  const std::uint64_t also_keep = low_port ? std::uint64_t{1} << CAP_NET_BIND_SERVICE : 0;
  const PrivilegeDrop dropped = drop_privileges(c.user, also_keep);
  if (dropped.error) throw std::runtime_error(*dropped.error);
  spdlog::info("privileges: {}", dropped.summary);
  if (c.user.empty() && ::geteuid() == 0) {
    spdlog::warn("running as root (with CAP_NET_ADMIN only): set `user:` to run as an unprivileged user");
  }
}

// SIGHUP: the file as it is now, applied as far as it can be (plan_reload).
void reload_from_file(const std::string& path, Gateway& gateway, Interception& interception, bool draining) {
  auto next = config::load_gateway_config(path);
  if (auto* err = std::get_if<std::string>(&next)) {
    gateway.count_reload_failure();
    spdlog::error("reload failed, keeping the running config: {}", *err);
    return;
  }
  config::ReloadPlan plan = config::plan_reload(gateway.config(), std::get<config::GatewayConfig>(next));
  interception.reload(plan, gateway.config(), draining);
  gateway.reload(plan);
}

}  // namespace

void block_control_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int s : {SIGHUP, SIGTERM, SIGINT}) sigaddset(&set, s);
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
}

void unblock_control_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (const int s : {SIGHUP, SIGTERM, SIGINT}) sigaddset(&set, s);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

int run_gateway(const config::GatewayConfig& initial) {
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(initial.reloadable.log_level));
  log_warnings(initial);
  asio::io_context io(1);
  // The handlers exist before anything else happens (main blocked these
  // signals from its first line): a SIGHUP or SIGTERM during start waits
  // for io.run() instead of killing a half-started gateway, which left its
  // nftables table behind (LAN TCP redirected to nothing).
  asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
  unblock_control_signals();
  raise_descriptor_limit();
  std::unique_ptr<Gateway> gateway;
  std::unique_ptr<StatusServer> status;
  std::unique_ptr<MetricsExporter> metrics;
  Interception interception(initial);
  try {
    gateway = std::make_unique<Gateway>(io, initial);
    gateway->start();
    if (!initial.status_socket.empty()) {
      std::error_code ignored;
      std::filesystem::create_directories(std::filesystem::path(initial.status_socket).parent_path(), ignored);
      status = std::make_unique<StatusServer>(io, initial.status_socket, [&] { return gateway->snapshot(); });
    }
    confine(initial);  // before the metrics server's threads: capabilities are per thread
    if (!initial.metrics_listen.empty()) {
      metrics = std::make_unique<MetricsExporter>(initial.metrics_listen);
      metrics->publish(gateway->snapshot());
      gateway->set_on_tick([&] { metrics->publish(gateway->snapshot()); });
      spdlog::info("metrics on http://{}/metrics", metrics->listen_address());
    }
    interception.start(initial);  // last: nothing after it can fail the start
  } catch (const std::exception& e) {
    interception.remove();
    spdlog::error("cannot start: {}", e.what());
    return 1;
  }
  bool stopping = false;
  std::function<void(const boost::system::error_code&, int)> on_signal =
      [&](const boost::system::error_code& ec, int signal) {
        if (ec) return;
        if (signal == SIGHUP) {
          reload_from_file(initial.path, *gateway, interception, stopping);
        } else if (!stopping) {
          stopping = true;
          spdlog::info("{}: draining", signal == SIGINT ? "SIGINT" : "SIGTERM");
          interception.stop_new();  // new connections go straight to their servers again
          gateway->drain([&] { io.stop(); });
        } else {
          spdlog::warn("second {}: exiting now", signal == SIGINT ? "SIGINT" : "SIGTERM");
          io.stop();
        }
        signals.async_wait(on_signal);
      };
  signals.async_wait(on_signal);
  io.run();
  interception.remove();
  status.reset();
  if (auto err = gateway->save_cache()) spdlog::warn("temporal cache: {}", *err);
  spdlog::info("stopped");
  return 0;
}

}  // namespace egw::proxy
