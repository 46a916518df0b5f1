// The process around a Gateway: logging, signals (SIGHUP reload, SIGTERM /
// SIGINT drain), the branch's nftables table (installed at start, replaced
// on a reload that changes its rules, removed at exit or after a failed
// start, a crash leftover replaced), privileges (dropped after start), the
// metrics endpoint, the status socket and the temporal cache file. ensemble_gw_main.cc parses the command line
// and calls these.
#pragma once

#include <string>

#include "config/gateway_config.h"

namespace egw::proxy {

// main's first line for `run`: SIGHUP, SIGTERM and SIGINT wait (pending)
// until run_gateway has its handlers, so none kills a half-started gateway.
void block_control_signals();
void unblock_control_signals();
// Runs until SIGTERM/SIGINT and the drain that follows; returns the exit code.
// Drops privileges after start (proxy/privileges.h).
int run_gateway(const config::GatewayConfig& config);
// `ensemble-gw rules`: the nftables script a branch installs (stdout).
int print_interception_rules(const config::GatewayConfig& config);

}  // namespace egw::proxy
