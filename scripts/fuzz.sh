#!/usr/bin/env bash
# Builds the libFuzzer targets in the clang ASan+UBSan tree (build-asan/, the
# one scripts/build.sh asan makes) and runs each for N seconds. Exit status
# non-zero on a crash, a hang (-timeout) or a leak.
#
#   scripts/fuzz.sh [SECONDS]                   every target, default 60 s each, on a
#                                               scratch copy of its committed seeds (CI)
#   scripts/fuzz.sh --long SECONDS [TARGETS...] a campaign: each target (default all)
#                                               grows a scratch corpus beside its seeds,
#                                               then the inputs that add coverage are
#                                               merged (-merge=1) into the committed
#                                               corpus directory (commit them)
#
# Each run appends one line of figures to build-asan/fuzz-figures.txt:
#   DATE TARGET SECONDS execs=N exec/s=N cov=N ft=N corpus=BEFORE->AFTER
# (cov: coverage edges, ft: features, corpus: files in the committed directory).
set -euo pipefail
cd "$(dirname "$0")/.."

long=0
if [[ ${1:-} == --long ]]; then
  long=1
  shift
  [[ $# -ge 1 ]] || { echo "usage: $0 --long SECONDS [targets...]" >&2; exit 2; }
fi
seconds=${1:-60}
shift || true
dir=build-asan
all=(frame_parse_fuzz frame_roundtrip_fuzz connection_fuzz noise_message_fuzz handshake_datagram_fuzz
     classifier_fuzz quic_initial_fuzz config_fuzz)
targets=("${all[@]}")
if [[ $long -eq 1 && $# -gt 0 ]]; then targets=("$@"); fi
scripts/build.sh asan "${targets[@]}"

# The committed seed corpus of a target.
seeds_of() {
  case $1 in
    handshake_datagram_fuzz) echo tests/fuzz/handshake_corpus ;;  # one datagram of each type and exact size
    classifier_fuzz) echo tests/fuzz/classifier_corpus ;;  # a split point (2 bytes), then a stream's first bytes
    quic_initial_fuzz) echo tests/fuzz/quic_initial_corpus ;;  # [flags][u16 length][bytes] per datagram
    config_fuzz) echo tests/fuzz/config_corpus ;;  # config texts (key files: /tmp/egw-config-fuzz)
    # connection_fuzz reads scripts, not frame payloads (written by
    # tunnel_tests with EGW_HOSTILE_SEED_DIR set).
    connection_fuzz) echo tests/fuzz/connection_corpus ;;
    *) echo tests/fuzz/corpus ;;
  esac
}

# Options every run of a target needs (-timeout: an input slower than 30 s is a hang).
options_of() {
  local options=(-timeout=30)
  # scripts of 2000 STREAM_OPENs are ~22 KB
  [[ $1 == connection_fuzz ]] && options+=(-rss_limit_mb=2048 -max_len=32768)
  # frame type bytes and the datagram-flow frames' shapes
  [[ $1 == frame_parse_fuzz || $1 == frame_roundtrip_fuzz ]] && options+=(-dict=tests/fuzz/frames.dict)
  echo "${options[@]}"
}

# One line of figures from a libFuzzer log.
figures() {
  local target=$1 log=$2 before=$3 after=$4
  local last execs rate
  last=$(grep -aE '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
  execs=$(grep -aoE 'stat::number_of_executed_units: +[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  rate=$(grep -aoE 'stat::average_exec_per_sec: +[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  printf '%s %s %ss execs=%s exec/s=%s cov=%s ft=%s corpus=%s->%s\n' "$(date -u +%FT%TZ)" "$target" "$seconds" \
    "$execs" "$rate" "$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo "?")" \
    "$(grep -oE 'ft: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo "?")" "$before" "$after" |
    tee -a "$dir/fuzz-figures.txt"
}

for target in "${targets[@]}"; do
  seeds=$(seeds_of "$target")
  read -r -a extra <<<"$(options_of "$target")"
  binary="$dir/tests/fuzz/$target"
  # A campaign logs apart, so a CI run beside it does not truncate its log.
  log="$dir/$target.log"
  [[ $long -eq 1 ]] && log="$dir/$target.long.log"
  before=$(find "$seeds" -type f | wc -l)
  scratch=$(mktemp -d)
  echo "== $target for ${seconds}s$([[ $long -eq 1 ]] && echo ", merging into $seeds")"
  status=0
  if [[ $long -eq 1 ]]; then
    # New inputs go to the scratch directory (the first one); the seeds are read.
    "$binary" -max_total_time="$seconds" -print_final_stats=1 "${extra[@]}" \
      -artifact_prefix="$dir/$target-" "$scratch" "$seeds" >"$log" 2>&1 || status=$?
  else
    cp "$seeds"/* "$scratch"/
    "$binary" -max_total_time="$seconds" -print_final_stats=1 "${extra[@]}" \
      -artifact_prefix="$dir/$target-" "$scratch" >"$log" 2>&1 || status=$?
  fi
  grep -aE "^(Done|==[0-9]+==|SUMMARY)" "$log" || true
  if [[ $status -eq 0 && $long -eq 1 ]]; then
    "$binary" -merge=1 "${extra[@]}" "$seeds" "$scratch" >"$dir/$target.merge.log" 2>&1 || status=$?
    grep -E "MERGE-OUTER: [0-9]+ new files" "$dir/$target.merge.log" || true
  fi
  rm -rf "$scratch"
  if [[ $status -ne 0 ]]; then
    echo "fuzz: $target failed (exit $status); reproducer in $dir/$target-*, log $log" >&2
    exit 1
  fi
  figures "$target" "$log" "$before" "$(find "$seeds" -type f | wc -l)"
done
