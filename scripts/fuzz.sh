#!/usr/bin/env bash
# Builds the libFuzzer targets in the clang ASan+UBSan tree (build-asan/, the
# one scripts/build.sh asan makes) and runs each for N seconds (default 60) on
# a scratch copy of the checked-in seed corpus. Exit status non-zero on a crash.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
dir=build-asan
targets=(frame_parse_fuzz frame_roundtrip_fuzz connection_fuzz noise_message_fuzz handshake_datagram_fuzz
         classifier_fuzz)
scripts/build.sh asan "${targets[@]}"

for target in "${targets[@]}"; do
  corpus=$(mktemp -d)
  # connection_fuzz reads scripts, not frame payloads: it has its own seeds
  # (written by tunnel_tests with EGW_HOSTILE_SEED_DIR set).
  seeds=tests/fuzz/corpus
  extra=()
  if [[ $target == handshake_datagram_fuzz ]]; then
    seeds=tests/fuzz/handshake_corpus  # one datagram of each type and exact size
  fi
  if [[ $target == classifier_fuzz ]]; then
    seeds=tests/fuzz/classifier_corpus  # a split point (2 bytes), then a stream's first bytes
  fi
  if [[ $target == connection_fuzz ]]; then
    seeds=tests/fuzz/connection_corpus
    extra=(-rss_limit_mb=2048 -max_len=32768)  # scripts of 2000 STREAM_OPENs are ~22 KB
  fi
  cp "$seeds"/* "$corpus"/
  echo "== $target for ${seconds}s"
  log="$dir/$target.log"
  status=0
  "$dir/tests/fuzz/$target" -max_total_time="$seconds" -print_final_stats=1 "${extra[@]}" \
    -artifact_prefix="$dir/$target-" "$corpus" >"$log" 2>&1 || status=$?
  grep -E "^(Done|==[0-9]+==|SUMMARY)" "$log" || true
  rm -rf "$corpus"
  if [[ $status -ne 0 ]]; then
    echo "fuzz: $target failed (exit $status); reproducer in $dir/$target-*, log $log" >&2
    exit 1
  fi
done
