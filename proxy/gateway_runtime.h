// The process around a Gateway: logging, signals (SIGHUP reload, SIGTERM /
// SIGINT drain), the branch's nftables table (installed at start, removed at
// exit, a crash leftover replaced), the metrics endpoint, the status socket
// and the temporal cache file. ensemble_gw_main.cc parses the command line
// and calls these.
#pragma once

#include <string>

#include "config/gateway_config.h"

namespace egw::proxy {

// Runs until SIGTERM/SIGINT and the drain that follows; returns the exit code.
int run_gateway(const config::GatewayConfig& config);
// `ensemble-gw rules`: the nftables script a branch installs (stdout).
int print_interception_rules(const config::GatewayConfig& config);
// `ensemble-gw status`: asks the running gateway over its status socket.
int print_status(const std::string& socket_path);

}  // namespace egw::proxy
