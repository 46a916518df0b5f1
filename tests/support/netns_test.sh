# What the namespace tests share (sourced, not run): the checks that decide
# whether a test can run here, its watchdog, the teardown of its namespaces
# and scripts/gateway-lab.sh labs, the test HTTP server, waiting for a log
# line, and its PASS / FAIL / SKIP lines.
# Uses the sourcing script's $P (its namespaces' prefix) and $t_start.
# shellcheck shell=bash

netns_tests=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)  # tests/

# netns_require NAME TOOL...: exits 77 with "NAME: skipped, WHY" unless we are
# root, every TOOL is installed and a network namespace can be created.
netns_require() {
  local name=$1 tool
  shift
  [[ $(id -u) -eq 0 ]] || netns_skip "$name" "needs root"
  for tool in "$@"; do
    command -v "$tool" >/dev/null || netns_skip "$name" "no $tool"
  done
  timeout 10 ip netns add "egwprobe$$" 2>/dev/null || netns_skip "$name" "cannot create network namespaces"
  timeout 10 ip netns del "egwprobe$$"
}
netns_skip() { echo "$1: skipped, $2"; exit 77; }

# netns_watchdog SECONDS LINE: bounds the whole test. Past SECONDS it prints
# LINE, TERMs the test's children (a foreground command would hold off the
# test's TERM trap until it ends) and then the test, whose trap cleans up.
# Its pid in watchdog_pid, for netns_watchdog_stop.
netns_watchdog() {
  local seconds=$1 text=$2 child
  (
    trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
    sleep "$seconds" &
    sleeper=$!
    wait "$sleeper"
    echo "$text"
    for child in $(ps -o pid= --ppid $$); do [[ $child != "$BASHPID" ]] && kill -TERM "$child" 2>/dev/null; done
    kill -TERM $$ 2>/dev/null
  ) &
  watchdog_pid=$!
}
netns_watchdog_stop() {
  [[ -n ${watchdog_pid:-} ]] && kill "$watchdog_pid" 2>/dev/null
  watchdog_pid=
}

# netns_kill_in PREFIX ROLE...: SIGKILL to every process in PREFIX-ROLE.
netns_kill_in() {
  local prefix=$1 role pid
  shift
  for role in "$@"; do
    for pid in $(ip netns pids "$prefix-$role" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  done
}
# netns_delete PREFIX ROLE...: what is left in PREFIX-ROLE killed, the namespaces deleted.
netns_delete() {
  local prefix=$1 role
  shift
  for role in "$@"; do
    netns_kill_in "$prefix" "$role"
    ip netns del "$prefix-$role" 2>/dev/null
  done
}
# netns_lab_down LAB_SH PREFIX DIR: a gateway-lab.sh lab gone. Our clients
# and servers first (the lab stops the gateways, gracefully), then the lab,
# then whatever is left.
netns_lab_down() {
  local lab_sh=$1 prefix=$2 dir=$3
  netns_kill_in "$prefix" client server
  [[ -d $dir ]] && timeout 60 "$lab_sh" down "$prefix" "$dir" >/dev/null 2>&1
  netns_delete "$prefix" client branch hub server
}
# netns_keep_or_remove KEEP DIR: DIR removed unless KEEP is 1.
netns_keep_or_remove() {
  if [[ $1 == 1 ]]; then echo "kept $2"; else rm -rf "$2"; fi
}

# in_ns ROLE LIMIT CMD...: CMD in $P-ROLE, for at most LIMIT seconds.
in_ns() { local role=$1 limit=$2; shift 2; timeout "$limit" ip netns exec "$P-$role" "$@"; }
# netns_http_server LIMIT LOG ARGS...: tests/gateway/http_server.py ARGS in
# $P-server, for at most LIMIT seconds; its pid (timeout's: exec, so it passes
# a TERM on to the server, not a subshell) in server_pid.
netns_http_server() {
  local limit=$1 log=$2
  shift 2
  (exec timeout "$limit" ip netns exec "$P-server" python3 "$netns_tests/gateway/http_server.py" "$@" >"$log" 2>&1) &
  server_pid=$!
}
# netns_http_server_stop: the server TERMed and waited for, if it runs.
netns_http_server_stop() {
  [[ -n ${server_pid:-} ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  server_pid=
}
# wait_for FILE PATTERN SECONDS [COUNT]: until COUNT lines of FILE match.
wait_for() {
  local i n
  for ((i = 0; i < $3 * 10; i++)); do
    n=$(grep -c -- "$2" "$1" 2>/dev/null)
    ((${n:-0} >= ${4:-1})) && return 0
    sleep 0.1
  done
  return 1
}
# netns_abs_path PATH: PATH from /, for a binary run from other directories.
netns_abs_path() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }

# Sanitizer reports in the gateways' (or any) logs, with file and line.
sanitizer_reports() {
  grep -nE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: (Address|Undefined|Leak)" "$@" 2>/dev/null
}

# line STATUS ID TEXT: one result line, counted for netns_summary; a FAIL
# makes the exit status ($failed) 1.
failed=0
summary=()
line() {
  echo "$1 $2: $3"
  summary+=("$1 $2")
  [[ $1 == FAIL ]] && failed=1
  return 0
}
count() { local n=0 s; for s in "${summary[@]}"; do [[ $s == "$1 "* ]] && n=$((n + 1)); done; echo $n; }
# netns_summary NAME: "== NAME: N passed, M failed, K skipped in S s".
netns_summary() {
  echo "== $1: $(count PASS) passed, $(count FAIL) failed, $(count SKIP) skipped in $((SECONDS - t_start)) s"
}
# The failed lines' IDs again, under the summary.
netns_list_failures() {
  local s
  for s in "${summary[@]}"; do [[ $s == FAIL* ]] && echo "   $s"; done
  return 0
}
