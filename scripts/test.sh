#!/usr/bin/env bash
# The test command: builds two trees, runs the whole suite in each, then the
# container test (the images built by a real Docker engine, the compose demo
# run: tests/docker/compose_demo_test.sh) and a short fuzz run. Exit status is
# non-zero if anything fails.
#   build/       gcc, optimised: the fast ctest run
#   build-asan/  clang, ASan+UBSan (product libraries also with fuzzer-no-link):
#                the same suite under the sanitizers, and the libFuzzer targets
# Each stage prints its wall time; FUZZ_SECONDS sets the fuzz run per target.
set -euo pipefail
cd "$(dirname "$0")/.."

start_all=$SECONDS
stage_start=$SECONDS
stage_times=()
stage_done() {  # name: records the stage's wall time
  stage_times+=("$1 $((SECONDS - stage_start))s")
  echo "== $1: $((SECONDS - stage_start)) s"
  stage_start=$SECONDS
}

scripts/install-deps.sh
# The container test's engine and base image (tests/docker/compose_demo_test.sh):
# made meanwhile, in the background (mostly downloads: docker.io, debootstrap).
# The container test stops an engine started here (not one already running);
# so does the trap if the run ends before that stage.
mkdir -p build
if [[ ! -e /run/egw-docker-engine/started ]]; then
  export EGW_DOCKER_ENGINE_PREPARED=1
  trap 'kill "$engine_prep" 2>/dev/null || true; wait "$engine_prep" 2>/dev/null || true; scripts/docker-engine.sh down || true' EXIT
fi
scripts/docker-engine.sh up >build/docker-engine.log 2>&1 &
engine_prep=$!
# build/pyenv: Python with `noiseprotocol`, for crypto_tests' Noise interop
# test (cached; a no-op once made).
scripts/noise-interop-env.sh
for flavour in release asan; do
  echo "== build $flavour"
  scripts/build.sh "$flavour"
  stage_done "build $flavour"
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
  summary=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$log" | tail -n 1 || true)
  if [[ -z $summary ]]; then
    echo "test: no ctest summary in $dir" >&2
    status=1
  else
    total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
    bad=$(sed -E 's/.* ([0-9]+) tests? failed.*/\1/' <<<"$summary")
    passed=$((passed + total - bad))
    failed=$((failed + bad))
    ((bad == 0)) || status=1
  fi
  stage_done "ctest $dir"
done
# The images built by a real Docker engine and the compose demo run until the
# client prints the page through the tunnel: one test of the summary (a
# separate stage, once: it builds from the sources and wants both cores).
echo "== container test (tests/docker/compose_demo_test.sh)"
skipped=0
wait "$engine_prep" || true
rc=0
tests/docker/compose_demo_test.sh || rc=$?
case $rc in
  0) echo "PASS container test"; passed=$((passed + 1)) ;;
  77) echo "SKIP container test (no Docker engine can run here: build/docker-engine.log)"; skipped=1 ;;
  *) echo "FAIL container test"; failed=$((failed + 1)); status=1 ;;
esac
stage_done "container test"
# The parsers' and the connection's libFuzzer targets, from build-asan/: run briefly.
echo "== fuzz smoke run"
scripts/fuzz.sh "${FUZZ_SECONDS:-10}" || status=1
stage_done "fuzz"
echo "== stages: ${stage_times[*]}; total $((SECONDS - start_all)) s"
echo "tests: $passed passed, $failed failed$( ((skipped)) && echo ", $skipped skipped")"
exit $status
