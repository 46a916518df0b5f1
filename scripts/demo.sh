#!/usr/bin/env bash
# The demo: installs every dependency, builds, and runs the papers' experiments
# on the real tunnel core and congestion library over the simulated WAN,
# printing our numbers next to the papers' and the uncoupled baselines'.
# (The gateway on real sockets replaces this demo when it lands.)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh release
exec build/tests/paper_experiments "$@"
