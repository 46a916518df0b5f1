// ensemble-gw: the gateway binary, branch or hub (the config's role).
//
//   ensemble-gw run -c FILE       run until SIGTERM/SIGINT (drain) ; SIGHUP reloads FILE
//   ensemble-gw check -c FILE     validate the config and exit (0 valid, 1 not)
//   ensemble-gw rules -c FILE     print the nftables rules a branch would install
//   ensemble-gw status [-c FILE | --socket PATH] [--json]   the live ensembles, rates and streams
//   ensemble-gw --version         version and git commit
// The man page (man/ensemble-gw.8) says the same at length; keep them together.
#include <utility>  // before Boost 1.74 asio (see proxy/tunnel_socket.h)
#include <boost/asio.hpp>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>
#include <optional>

#include "common/build_info.h"
#include "config/gateway_config.h"
#include "proxy/gateway.h"
#include "proxy/gateway_runtime.h"
#include "proxy/status_socket.h"

namespace {

using namespace egw;

std::optional<config::GatewayConfig> load_or_print(const std::string& path) {
  auto loaded = config::load_gateway_config(path);
  if (auto* err = std::get_if<std::string>(&loaded)) {
    std::fprintf(stderr, "ensemble-gw: %s\n", err->c_str());
    return std::nullopt;
  }
  return std::get<config::GatewayConfig>(std::move(loaded));
}

int check(const std::string& path) {
  const auto c = load_or_print(path);
  if (!c) return 1;
  for (const auto& w : c->warnings) std::fprintf(stderr, "ensemble-gw: warning: %s\n", w.c_str());
  std::printf("%s: ok (%s, %zu peer%s)\n", path.c_str(), c->is_hub ? "hub" : "branch", c->endpoint.peers.size(),
              c->endpoint.peers.size() == 1 ? "" : "s");
  return 0;
}

int print_status(const std::string& socket_path, bool json) {
  const auto reply = proxy::query_status(socket_path, std::chrono::milliseconds(3000),
                                         json ? proxy::StatusFormat::json : proxy::StatusFormat::text);
  if (reply.error) {
    std::fprintf(stderr, "ensemble-gw status: %s\n", reply.error->c_str());
    return 1;
  }
  std::fputs(reply.text.c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything else: a SIGHUP or SIGTERM while `run` starts waits for
  // its handlers (unblocked again for the other commands).
  proxy::block_control_signals();
  CLI::App app{"ensemble-gw: many TCP connections between two sites as one prioritised, encrypted transport"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "ensemble-gw " + std::string(build_version()) + " (commit " +
                                        std::string(build_commit()) + ")");
  app.footer("Configuration keys: /usr/share/doc/ensemble-gw (docs/config.md); manual: man 8 ensemble-gw");
  std::string config_path;
  std::string socket_path;

  auto* run = app.add_subcommand("run", "run the gateway (SIGHUP reloads, SIGTERM drains and exits)");
  run->add_option("-c,--config", config_path, "YAML config file")->required();
  auto* chk = app.add_subcommand("check", "validate a config file and exit");
  chk->add_option("-c,--config", config_path, "YAML config file")->required();
  auto* rules = app.add_subcommand("rules", "print the nftables rules a branch installs");
  rules->add_option("-c,--config", config_path, "YAML config file")->required();
  auto* status = app.add_subcommand("status", "show a running gateway's ensembles, rates per class and streams");
  status->add_option("-c,--config", config_path, "the running gateway's config (for its status_socket)");
  status->add_option("--socket", socket_path, "the status socket (default: from the config)");
  bool json = false;
  status->add_flag("--json", json, "one JSON object instead of tables (for scripts)");
  CLI11_PARSE(app, argc, argv);
  if (!run->parsed()) proxy::unblock_control_signals();

  if (chk->parsed()) return check(config_path);
  if (rules->parsed()) {
    const auto c = load_or_print(config_path);
    if (!c) return 1;
    return proxy::print_interception_rules(*c);
  }
  if (status->parsed()) {
    if (socket_path.empty()) {
      if (config_path.empty()) {
        std::fprintf(stderr, "ensemble-gw status: give -c FILE or --socket PATH\n");
        return 2;
      }
      const auto c = load_or_print(config_path);
      if (!c) return 1;
      socket_path = c->status_socket;
    }
    return print_status(socket_path, json);
  }
  const auto c = load_or_print(config_path);
  if (!c) return 1;
  return proxy::run_gateway(*c);
}
