#include "proxy/gateway_runtime.h"

#include <utility>  // before Boost 1.74 asio (see tunnel_socket.h)
#include <boost/asio.hpp>

#include <spdlog/spdlog.h>

#include <sys/resource.h>

#include <csignal>
#include <cstdio>

#include "proxy/gateway.h"

namespace egw::proxy {

namespace asio = boost::asio;

int print_interception_rules(const config::GatewayConfig& config) {
  if (config.is_hub) {
    std::fprintf(stderr, "ensemble-gw rules: %s is a hub; only a branch intercepts\n", config.path.c_str());
    return 1;
  }
  std::fprintf(stderr, "ensemble-gw rules: not available yet\n");
  return 1;
}

int print_status(const std::string& socket_path) {
  std::fprintf(stderr, "ensemble-gw status: not available yet (%s)\n", socket_path.c_str());
  return 1;
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
  try {
    gateway.start();
  } catch (const std::exception& e) {
    spdlog::error("cannot start: {}", e.what());
    return 1;
  }
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
          gateway.drain([&] { io.stop(); });
        } else {
          spdlog::warn("second {}: exiting now", signal == SIGINT ? "SIGINT" : "SIGTERM");
          io.stop();
        }
        signals.async_wait(on_signal);
      };
  signals.async_wait(on_signal);
  io.run();
  if (auto err = gateway.save_cache()) spdlog::warn("temporal cache: {}", *err);
  spdlog::info("stopped");
  return 0;
}

}  // namespace egw::proxy
