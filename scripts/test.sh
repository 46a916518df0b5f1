#!/usr/bin/env bash
# The test command: builds what it needs, then runs the whole suite twice,
# optimised and under ASan+UBSan. Exit status is non-zero if anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
for flavour in release asan; do
  scripts/build.sh "$flavour"
done

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for dir in build build-asan; do
  echo "== ctest in $dir"
  ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" || status=1
done
# The wire parsers' libFuzzer targets: build with clang and run briefly.
echo "== fuzz smoke run"
scripts/fuzz.sh "${FUZZ_SECONDS:-20}" || status=1
exit $status
