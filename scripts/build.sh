#!/usr/bin/env bash
# Configures and builds one build tree. Usage: scripts/build.sh [release|asan]
set -euo pipefail
cd "$(dirname "$0")/.."

flavour=${1:-release}
jobs=${JOBS:-$(nproc)}
case "$flavour" in
  release) dir=build;      flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan)    dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DEGW_SANITIZE=ON) ;;
  *) echo "usage: $0 [release|asan]" >&2; exit 2 ;;
esac

cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
ninja -C "$dir" -j "$jobs"
