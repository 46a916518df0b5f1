#!/usr/bin/env bash
# The demo: installs every dependency, builds, then
#  1. runs two gateways in two network namespaces over a veth on real UDP
#     (Noise IKpsk2, keys from wg genkey) and moves verified data through the
#     secure tunnel (tests/proxy/netns_tunnel_test.sh; needs root);
#  2. runs the papers' experiments on the real tunnel core and congestion
#     library over the simulated WAN, printing our numbers next to the
#     papers' and the uncoupled baselines'.
# (The full gateway, with capture and relay, replaces step 1 when it lands.)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh release
if [[ $(id -u) -eq 0 ]]; then
  echo "== two gateways across network namespaces (secure tunnel on real UDP)"
  tests/proxy/netns_tunnel_test.sh build/bench/tunnel_perf
else
  echo "== (skipping the two-gateway run: ip netns needs root)"
fi
echo "== the papers' experiments on the simulator"
exec build/tests/paper_experiments "$@"
