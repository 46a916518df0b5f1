#!/usr/bin/env bash
# Configures and builds one build tree. Usage: scripts/build.sh [release|asan] [ninja targets...]
#   release  build/       the default compiler (gcc), optimised: the fast test run and the demo
#   asan     build-asan/  clang, ASan+UBSan, product libraries with -fsanitize=fuzzer-no-link:
#                         the unit tests under the sanitizers and the libFuzzer targets
# Without targets it builds everything in the tree.
set -euo pipefail
cd "$(dirname "$0")/.."

flavour=${1:-release}
shift || true
jobs=${JOBS:-$(nproc)}
case "$flavour" in
  release) dir=build;      compiler=(); flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan)    dir=build-asan; compiler=(CC=clang CXX=clang++)
           flags=(-DCMAKE_BUILD_TYPE=Debug -DEGW_SANITIZE=ON -DEGW_FUZZ=ON) ;;
  *) echo "usage: $0 [release|asan] [targets...]" >&2; exit 2 ;;
esac

# A tree configured with another compiler (build-asan/ used to be gcc's)
# cannot be switched in place: start it again.
if [[ $flavour == asan && -f $dir/CMakeCache.txt ]] &&
   ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang++' "$dir/CMakeCache.txt"; then
  echo "build: $dir was configured with another compiler; reconfiguring from scratch"
  rm -rf "$dir"
fi

env "${compiler[@]}" cmake -S . -B "$dir" -G Ninja "${flags[@]}" >/dev/null
ninja -C "$dir" -j "$jobs" "$@"
