#!/usr/bin/env bash
# The gateway under load, end to end: scripts/gateway-lab.sh's four
# namespaces (client -> branch -> hub -> server), real sockets, the test HTTP
# server (http_server.py) and load_client.py. Each scenario prints one PASS /
# FAIL line with its figures; exit 1 if any failed, 77 if it cannot run here.
#
#   usage: netns_load_test.sh [path/to/ensemble-gw]     (default build/ensemble-gw)
#   EGW_LOAD_TEST_ONLY="1 3"   run only these scenarios
#   EGW_LOAD_TEST_NET=84       the lab's address number (10.NET.x.y)
#   EGW_LOAD_TEST_KEEP=1       keep the lab's directory (configs, logs)
#   EGW_LOAD_TEST_RSS_SLACK_MIB=64  RSS growth allowed beyond the buffers' bound
#                              (scenario 3; ASan's quarantine needs more)
#
# Scenarios (limits set by SIGHUP reloads, as an operator would):
#   1  connection limit at the branch (connections_per_peer: 20): 20 slow
#      downloads hold it, 30 more connections each get a reset within 2 s,
#      egw_connections_refused_total{reason="limit_connections"} counts each,
#      the log says so (rate-limited: at most 10 lines a second per reason,
#      the rest summed up), the 20 complete with their SHA-256 right
#   2  the same limit at the hub: the client still sees a reset
#   3  slow readers: 200 clients ask for 4 MB each and never read; 10
#      downloads of 2 MB beside them complete, SHA-256 checked, the slowest
#      within 4x its time alone (10 s at least); the gateways' buffers stay within 200 x (stream buffer + one
#      relay write) and their RSS bounded
#   4  memory limit (memory_bytes 16 MiB): 2 downloads running, then 200 clients that never read fill the
#      buffers past the limit; 10 new connections at once: each gets a reset
#      (limit_memory, counted and logged) or, in a moment the buffers dipped
#      below the limit, an answer; none hangs 5 s; the 2 running complete
#      (SHA-256)
#   5  600 clients that never read (150 MiB of stream buffers per side if
#      nothing bounded them), the gateways restarted with memory_bytes 32 MiB
#      (connection windows 8 MiB) in a 96 MiB cgroup: buffers bounded, no OOM
#      kill, both alive; 10 new connections at once: refused (limit_memory)
#      or answered, none hangs 5 s
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tests/support/netns_test.sh"
bin=$(netns_abs_path "${1:-$root/build/ensemble-gw}")
lab=$root/scripts/gateway-lab.sh
N=${EGW_LOAD_TEST_NET:-84}
P=egwo$$
only=" ${EGW_LOAD_TEST_ONLY:-1 2 3 4 5} "
t_start=$SECONDS
export PYTHONDONTWRITEBYTECODE=1

netns_require netns_load_test ip nft wg python3 curl timeout ethtool
[[ -x $bin ]] || { echo "netns_load_test: no gateway binary at $bin"; exit 1; }

tmp=$(mktemp -d /tmp/egwo-load.XXXXXX)
D=$tmp/lab
CG=/sys/fs/cgroup/memory/$P
cleanup() {
  trap - EXIT INT TERM
  netns_watchdog_stop
  netns_http_server_stop
  netns_lab_down "$lab" "$P" "$D"
  [[ -d $CG ]] && rmdir "$CG" 2>/dev/null
  netns_keep_or_remove "${EGW_LOAD_TEST_KEEP:-0}" "$tmp"
}
trap cleanup EXIT
trap 'echo "FAIL: interrupted"; exit 1' INT TERM

limit=${EGW_LOAD_TEST_LIMIT:-200}
netns_watchdog "$limit" "FAIL: the test ran out of its $limit s"

wanted() { [[ $only == *" $1 "* ]]; }
load() { local limit=$1; shift; in_ns client "$limit" python3 "$here/load_client.py" "$@"; }
field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, d))" "$1" "$2"; }
metric() {  # metric ROLE 'NAME{labels}' -> value (0 when absent)
  in_ns "$1" 5 curl -s --max-time 4 http://127.0.0.1:9470/metrics |
    awk -v m="$2" '$1 == m { v = $2 } END { printf "%d\n", v + 0 }'
}
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$(cat "$D/$1.pid")/status" 2>/dev/null || echo 0; }
log_tail() {
  for role in branch hub; do
    echo "--- $role.log (last 10 lines)"
    tail -n 10 "$D/$role.log" 2>/dev/null | sed 's/^/    /'
  done
}
# set_limits ROLE YAML: the lab's config plus `limits: YAML`, applied by SIGHUP
# (limits at admission are reloadable); waits for the reload to be counted.
set_limits() {
  local role=$1 yaml=$2 before
  [[ -f $D/$role.yaml.orig ]] || cp "$D/$role.yaml" "$D/$role.yaml.orig"
  cp "$D/$role.yaml.orig" "$D/$role.yaml"
  [[ -n $yaml ]] && echo "limits: $yaml" >>"$D/$role.yaml"
  before=$(metric "$role" egw_config_reloads_total)
  kill -HUP "$(cat "$D/$role.pid")"
  for _ in $(seq 50); do (($(metric "$role" egw_config_reloads_total) > before)) && return 0; sleep 0.1; done
  echo "reload of $role.yaml not applied"; return 1
}
wait_open() {  # wait_open ROLE COUNT SECONDS: until egw_connections_open >= COUNT
  local i
  for ((i = 0; i < $3 * 10; i++)); do (($(metric "$1" egw_connections_open) >= $2)) && return 0; sleep 0.1; done
  return 1
}

# stall SECONDS COUNT OUT: COUNT clients in the background that ask for 4 MB
# each and never read, for at most SECONDS; their subshell's pid in
# $stall_pid. Their stdin is a pipe from a sleep: stop_clients ends the
# sleep, the pipe closes and they close their connections.
stall() {
  (sleep "$1" | load $(($1 + 5)) stall "$V4" 80 "$2" 4000000 >"$3" 2>&1) &
  stall_pid=$!
}
# stop_clients PID...: every client in the client namespace TERMed, the
# stalls' sleeps ended, and PID... waited for.
stop_clients() {
  local pid
  for pid in $(ip netns pids "$P-client"); do kill -TERM "$pid" 2>/dev/null; done
  for pid in "$@"; do pkill -PIPE -P "$pid" -x sleep 2>/dev/null; done  # PIPE: bash reports no death by it
  wait "$@" 2>/dev/null
}

V4=10.$N.2.2
echo "lab $P (10.$N.x.y) in $tmp, gateway $bin"
if ! LAB_LOG_LEVEL=info timeout 60 "$lab" up "$P" "$N" "$D" "$bin" >"$tmp/lab-up.log" 2>&1; then
  echo "FAIL: gateway-lab.sh up"; cat "$tmp/lab-up.log"; exit 1
fi
netns_http_server $((limit + 10)) "$tmp/server.log" --http-port 80 --raw-port 7000
for _ in $(seq 100); do grep -q ready "$tmp/server.log" && grep -q "tunnel to hub up" "$D/branch.log" && break; sleep 0.1; done
grep -q ready "$tmp/server.log" || { echo "FAIL: the test server did not start"; exit 1; }
grep -q "tunnel to hub up" "$D/branch.log" || { echo "FAIL: the tunnel did not come up"; log_tail; exit 1; }
baseline=$(load 60 downloads "$V4" 80 10 2000000 base)
echo "baseline: 10 downloads of 2 MB at once: $baseline"

# connection_limit ID ROLE LOG_PATTERN: scenario 1 or 2.
connection_limit() {
  local id=$1 role=$2 pattern=$3 tag=${1%% *} refused0 logged0 held refused refused_n logged
  set_limits "$role" "{connections_per_peer: 20}" || { line FAIL "$id" "reload failed"; return; }
  refused0=$(metric "$role" 'egw_connections_refused_total{reason="limit_connections"}')
  logged0=$(grep -c -- "$pattern" "$D/$role.log")
  load 60 downloads "$V4" 80 20 2000000 "held$tag&seconds=4" /slow >"$tmp/held$tag.out" 2>&1 &
  local held_pid=$!
  if ! wait_open "$role" 20 10; then
    line FAIL "$id" "the 20 held downloads did not open ($(metric "$role" egw_connections_open) open)"
    wait $held_pid; set_limits "$role" ""; return
  fi
  refused=$(load 60 refused "$V4" 80 30 2)
  local refused_rc=$?
  wait $held_pid
  local held_rc=$?
  held=$(cat "$tmp/held$tag.out")
  refused_n=$(($(metric "$role" 'egw_connections_refused_total{reason="limit_connections"}') - refused0))
  logged=$(($(grep -c -- "$pattern" "$D/$role.log") - logged0))
  set_limits "$role" ""
  if [[ $refused_rc -eq 0 && $held_rc -eq 0 && $refused_n -eq 30 && $logged -ge 1 && $logged -le 30 ]]; then
    line PASS "$id" "30 of 30 refused with a reset (slowest $(field "$refused" slowest_s) s), metric +$refused_n, $logged log lines ('$(grep -- "$pattern" "$D/$role.log" | tail -n1 | cut -d' ' -f3-)'); the 20 held: $(field "$held" ok) of 20 SHA-256 right, slowest $(field "$held" slowest_s) s"
  else
    line FAIL "$id" "refused: $refused; metric +$refused_n (want 30), log lines +$logged (want 1..30); held: $held"
    log_tail
  fi
}

if wanted 1; then
  connection_limit "1 connection limit at the branch" branch ": limit_connections"
fi
if wanted 2; then
  connection_limit "2 connection limit at the hub" hub ": limit_connections"
fi

if wanted 3; then
  id="3 200 slow readers"
  rss0_b=$(rss_kb branch) rss0_h=$(rss_kb hub)
  stall 40 200 "$tmp/stall.out"
  wait_for "$tmp/stall.out" stalled 15
  sleep 3  # their buffers fill
  mem_b=$(metric branch egw_memory_in_use_bytes) mem_h=$(metric hub egw_memory_in_use_bytes)
  dl=$(load 60 downloads "$V4" 80 10 2000000 beside)
  dl_rc=$?
  rss_b=$(rss_kb branch) rss_h=$(rss_kb hub)
  mem_b2=$(metric branch egw_memory_in_use_bytes) mem_h2=$(metric hub egw_memory_in_use_bytes)
  open_b=$(metric branch egw_connections_open)
  stop_clients "$stall_pid"
  # Bound: each stalled stream holds at most its stream buffer (256 KiB) in
  # the tunnel and one relay write (64 KiB) at the branch.
  bound=$((200 * (262144 + 65536) + 4 * 1048576))
  # Fair: beside them, the slowest download within 4x its time alone (10 s at least).
  allowed_s=$(python3 -c "print(max(10, 4 * $(field "$baseline" slowest_s)))")
  mem_max=$((mem_b > mem_b2 ? mem_b : mem_b2))
  summary_text="beside 200 stalled ($(head -c 40 "$tmp/stall.out"), $open_b open): $(field "$dl" ok) of 10 downloads of 2 MB right, median $(field "$dl" mbit_s_median) Mbit/s, slowest $(field "$dl" slowest_s) s, allowed $allowed_s s (alone: median $(field "$baseline" mbit_s_median) Mbit/s, slowest $(field "$baseline" slowest_s) s); buffered: branch $((mem_max / 1048576)) MiB, hub $((mem_h / 1048576)) MiB (bound $((bound / 1048576)) MiB); RSS branch $((rss0_b / 1024)) -> $((rss_b / 1024)) MiB, hub $((rss0_h / 1024)) -> $((rss_h / 1024)) MiB"
  if [[ $dl_rc -eq 0 && $(python3 -c "print(int($(field "$dl" slowest_s) <= $allowed_s))") -eq 1 &&
    $mem_max -le $bound && $mem_h -le $bound &&
    $rss_b -lt $((rss0_b + bound / 1024 + ${EGW_LOAD_TEST_RSS_SLACK_MIB:-64} * 1024)) ]]; then
    line PASS "$id" "$summary_text"
  else
    line FAIL "$id" "$summary_text"
    log_tail
  fi
fi

# in_cgroup MIB: both gateways into a fresh memory cgroup of MIB MiB (what
# they allocate from then on is charged to it: freshly started gateways, so
# that is nearly all); out_of_cgroup puts them back.
in_cgroup() {
  [[ -d /sys/fs/cgroup/memory ]] && mkdir "$CG" 2>/dev/null || return 1
  echo $(($1 << 20)) >"$CG/memory.limit_in_bytes"
  for role in branch hub; do cat "$D/$role.pid" >"$CG/cgroup.procs"; done
}
out_of_cgroup() {
  for role in branch hub; do cat "$D/$role.pid" >/sys/fs/cgroup/memory/cgroup.procs 2>/dev/null; done
  rmdir "$CG" 2>/dev/null
}
cgroup_text() {
  echo "cgroup peak $(($(cat "$CG/memory.max_usage_in_bytes") >> 20)) MiB of $1, oom_kill $(awk '/^oom_kill / { print $2 }' "$CG/memory.oom_control")"
}
oom_kills() { awk '/^oom_kill / { print $2 }' "$CG/memory.oom_control"; }
alive_count() {
  local n=0 role
  for role in branch hub; do kill -0 "$(cat "$D/$role.pid")" 2>/dev/null && n=$((n + 1)); done
  echo $n
}
refused_memory() {
  echo $(($(metric branch 'egw_connections_refused_total{reason="limit_memory"}') +
    $(metric hub 'egw_connections_refused_total{reason="limit_memory"}')))
}

if wanted 4; then
  id="4 memory limit (16 MiB) reached"
  if true; then
    for role in branch hub; do set_limits "$role" "{memory_bytes: 16777216}"; done
    refused0=$(refused_memory)
    logged0=$(cat "$D/branch.log" "$D/hub.log" | grep -c ": limit_memory")
    # Two downloads running before the limit is reached, 4 MB over 10 s.
    load 60 downloads "$V4" 80 2 4000000 "run4&seconds=8" /slow >"$tmp/run4.out" 2>&1 &
    run_pid=$!
    stall 30 200 "$tmp/stall4.out"
    wait_for "$tmp/stall4.out" stalled 20
    sleep 2
    refused=$(load 20 outcomes "$V4" 80 10 5)
    refused_rc=$?
    mem_b=$(metric branch egw_memory_in_use_bytes) mem_h=$(metric hub egw_memory_in_use_bytes)
    wait $run_pid
    run_rc=$?
    sleep 1.5  # /metrics is refreshed every second
    refused_n=$(($(refused_memory) - refused0))
    logged=$(($(cat "$D/branch.log" "$D/hub.log" | grep -c ": limit_memory") - logged0))
    stop_clients "$stall_pid"
    text="200 stalled: buffered branch $((mem_b >> 20)) MiB hub $((mem_h >> 20)) MiB; 10 new connections: $(field "$refused" outcomes), limit_memory refusals +$refused_n, log lines +$logged; the 2 running: $(field "$(cat "$tmp/run4.out")" ok) of 2 SHA-256 right, slowest $(field "$(cat "$tmp/run4.out")" slowest_s) s; $(alive_count) of 2 alive"
    for role in branch hub; do set_limits "$role" ""; done
    resets=$(field "$refused" 'outcomes.get("reset", 0)')
    if [[ $refused_rc -eq 0 && $resets -ge 1 && $refused_n -ge $resets && $logged -ge 1 && $run_rc -eq 0 &&
      $(alive_count) -eq 2 ]]; then
      line PASS "$id" "$text"
    else
      line FAIL "$id" "$text"
      log_tail
    fi
  fi
fi

# restart_with_limits YAML: both gateways restarted with `limits: YAML` (the
# connection windows are sized from memory_bytes at start only).
restart_with_limits() {
  local ups role
  ups=$(grep -c "tunnel to hub up" "$D/branch.log")
  for role in branch hub; do
    [[ -f $D/$role.yaml.orig ]] || cp "$D/$role.yaml" "$D/$role.yaml.orig"
    cp "$D/$role.yaml.orig" "$D/$role.yaml"
    echo "limits: $1" >>"$D/$role.yaml"
  done
  timeout 30 "$lab" stop-branch "$P" "$D" && timeout 30 "$lab" stop-hub "$P" "$D" &&
    timeout 10 "$lab" start-hub "$P" "$D" "$bin" && sleep 0.5 && timeout 10 "$lab" start-branch "$P" "$D" "$bin" ||
    return 1
  for _ in $(seq 100); do (($(grep -c "tunnel to hub up" "$D/branch.log") > ups)) && return 0; sleep 0.1; done
  return 1
}

if wanted 5; then
  id="5 600 slow readers in a 96 MiB cgroup"
  if ! restart_with_limits "{memory_bytes: 33554432}"; then
    line FAIL "$id" "the gateways did not restart with memory_bytes 32 MiB"; log_tail
  elif ! in_cgroup 96; then
    line SKIP "$id" "no cgroup v1 memory controller to create $CG"
  else
    refused0=$(refused_memory)
    stall 30 600 "$tmp/stall5.out"
    wait_for "$tmp/stall5.out" stalled 20
    sleep 3
    refused=$(load 20 outcomes "$V4" 80 10 5)
    refused_rc=$?
    mem_b=$(metric branch egw_memory_in_use_bytes) mem_h=$(metric hub egw_memory_in_use_bytes)
    rss_b=$(rss_kb branch) rss_h=$(rss_kb hub)
    sleep 1.5  # /metrics is refreshed every second
    refused_n=$(($(refused_memory) - refused0))
    stop_clients "$stall_pid"
    text="$(head -c 40 "$tmp/stall5.out") (150 MiB of stream buffers per side if nothing bounded them); buffered branch $((mem_b >> 20)) MiB hub $((mem_h >> 20)) MiB; RSS branch $((rss_b >> 10)) MiB hub $((rss_h >> 10)) MiB; 10 new connections: $(field "$refused" outcomes) (limit_memory refusals +$refused_n); $(cgroup_text 96), $(alive_count) of 2 alive"
    oom=$(oom_kills)
    out_of_cgroup
    if [[ $refused_rc -eq 0 && $refused_n -ge 1 && ${oom:-0} -eq 0 && $(alive_count) -eq 2 ]]; then
      line PASS "$id" "$text"
    else
      line FAIL "$id" "$text"
      log_tail
    fi
  fi
fi

alive=()
for role in branch hub; do
  [[ -f $D/$role.pid ]] && kill -0 "$(cat "$D/$role.pid")" 2>/dev/null && alive+=("$role")
done
if ((${#alive[@]} == 2)); then line PASS "gateways alive" "branch and hub still running at the end"
else line FAIL "gateways alive" "running at the end: ${alive[*]:-none}"; log_tail; fi
reports=$(sanitizer_reports "$D/branch.log" "$D/hub.log")
if [[ -z $reports ]]; then line PASS "sanitizer reports" "none"
else line FAIL "sanitizer reports" "$(head -n 5 <<<"$reports" | tr '\n' ' ')"; fi

netns_summary netns_load_test
netns_list_failures
exit $failed
