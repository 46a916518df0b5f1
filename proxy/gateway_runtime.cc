#include "proxy/gateway_runtime.h"

#include <utility>  // before Boost 1.74 asio (see tunnel_socket.h)
#include <boost/asio.hpp>

#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "proxy/gateway.h"
#include "proxy/metrics_exporter.h"
#include "proxy/nft_table.h"
#include "proxy/status_socket.h"

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

int print_status(const std::string& socket_path) {
  const StatusReply reply = query_status(socket_path, std::chrono::milliseconds(3000));
  if (reply.error) {
    std::fprintf(stderr, "ensemble-gw status: %s\n", reply.error->c_str());
    return 1;
  }
  std::fputs(reply.text.c_str(), stdout);
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

int run_gateway(const config::GatewayConfig& initial) {
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(initial.reloadable.log_level));
  raise_descriptor_limit();
  asio::io_context io(1);
  Gateway gateway(io, initial);
  std::unique_ptr<StatusServer> status;
  std::unique_ptr<MetricsExporter> metrics;
  bool table_installed = false;
  try {
    gateway.start();
    if (!initial.status_socket.empty()) {
      std::error_code ignored;
      std::filesystem::create_directories(std::filesystem::path(initial.status_socket).parent_path(), ignored);
      status = std::make_unique<StatusServer>(io, initial.status_socket, [&] { return gateway.snapshot(); });
    }
    if (!initial.metrics_listen.empty()) {
      metrics = std::make_unique<MetricsExporter>(initial.metrics_listen);
      metrics->publish(gateway.snapshot());
      gateway.set_on_tick([&] { metrics->publish(gateway.snapshot()); });
      spdlog::info("metrics on http://{}/metrics", metrics->listen_address());
    }
    if (!initial.is_hub && initial.interception.mode != config::InterceptionMode::none) {
      const InterceptionRules rules = interception_rules(initial);
      if (auto err = check_rules(rules)) throw std::runtime_error("interception: " + *err);
      if (initial.interception.mode == config::InterceptionMode::print) {
        spdlog::info("interception mode print: apply these rules yourself:\n{}", render_nft_script(rules));
      } else {
        if (auto err = NftTable::install(rules)) throw std::runtime_error("interception: " + *err);
        table_installed = true;
        spdlog::info("nftables table inet {} installed: TCP from the LAN to port {}", rules.table,
                     rules.redirect_port);
      }
    }
  } catch (const std::exception& e) {
    spdlog::error("cannot start: {}", e.what());
    return 1;
  }
  const auto remove_table = [&] {
    if (!table_installed) return;
    table_installed = false;
    if (auto err = NftTable::remove(initial.interception.table)) spdlog::warn("removing the nftables table: {}", *err);
    else spdlog::info("nftables table inet {} removed", initial.interception.table);
  };
  // The table stays while the drain runs (NftTable::stop_new): the
  // connections it redirected keep their translation until they end.
  const auto stop_intercepting_new = [&] {
    if (!table_installed) return;
    if (auto err = NftTable::stop_new(initial.interception.table)) {
      spdlog::warn("nftables: cannot stop intercepting new connections, removing the table: {}", *err);
      remove_table();
      return;
    }
    spdlog::info("nftables table inet {}: new connections no longer intercepted", initial.interception.table);
  };
  asio::signal_set signals(io, SIGINT, SIGTERM, SIGHUP);
  bool stopping = false;
  std::function<void(const boost::system::error_code&, int)> on_signal =
      [&](const boost::system::error_code& ec, int signal) {
        if (ec) return;
        if (signal == SIGHUP) {
          auto next = config::load_gateway_config(initial.path);
          if (auto* err = std::get_if<std::string>(&next)) {
            gateway.count_reload_failure();
            spdlog::error("reload failed, keeping the running config: {}", *err);
          } else {
            gateway.reload(std::get<config::GatewayConfig>(next));
          }
        } else if (!stopping) {
          stopping = true;
          spdlog::info("{}: draining", signal == SIGINT ? "SIGINT" : "SIGTERM");
          stop_intercepting_new();  // new connections go straight to their servers again
          gateway.drain([&] { io.stop(); });
        } else {
          spdlog::warn("second {}: exiting now", signal == SIGINT ? "SIGINT" : "SIGTERM");
          io.stop();
        }
        signals.async_wait(on_signal);
      };
  signals.async_wait(on_signal);
  io.run();
  remove_table();
  status.reset();
  if (auto err = gateway.save_cache()) spdlog::warn("temporal cache: {}", *err);
  spdlog::info("stopped");
  return 0;
}

}  // namespace egw::proxy
