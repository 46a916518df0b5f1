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
passed=0
failed=0
for dir in build build-asan; do
  echo "== ctest in $dir"
  log="$dir/ctest.log"
  ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" 2>&1 | tee "$log" || true
  # ctest's own summary: "NN% tests passed, F tests failed out of T".
  summary=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -n 1)
  if [[ -z $summary ]]; then
    echo "test: no ctest summary in $dir" >&2
    status=1
    continue
  fi
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
  bad=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$summary")
  passed=$((passed + total - bad))
  failed=$((failed + bad))
  ((bad == 0)) || status=1
done
# The parsers' and the connection's libFuzzer targets: build with clang, run briefly.
echo "== fuzz smoke run"
scripts/fuzz.sh "${FUZZ_SECONDS:-20}" || status=1
echo "tests: $passed passed, $failed failed"
exit $status
