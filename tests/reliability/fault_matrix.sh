#!/usr/bin/env bash
# The fault matrix: the gateway pair under the faults a branch office meets,
# each case asserting what the user sees. Every transfer either arrives
# intact (SHA-256 of the client's bytes = the server's) or the client sees a
# reset, and then what did arrive is an exact prefix of what the server sent;
# never a clean EOF before the end (a silent truncation), never a stall
# beyond the configured timeouts. Each case prints one PASS / FAIL line with
# its figures; the exit status is 1 if any failed, 77 if the test cannot run
# here (not root, no network namespaces), else 0.
#
#   usage: fault_matrix.sh [path/to/ensemble-gw]      (default build/ensemble-gw)
#   EGW_FAULT_ONLY="1 4"   run only these cases
#   EGW_FAULT_KEEP=1       keep the labs' directories (configs, logs) at the end
#   EGW_FAULT_LIMIT=200    seconds before the watchdog ends the run
#   EGW_FAULT_NETS="81 82" the two labs' address numbers (10.NET.x.y), as below
#
# Cases (fault_cases.sh), on two labs at once (scripts/gateway-lab.sh: client,
# branch, hub, server namespaces), so the run takes ~2 min, not ~3:
#   lab 10.81.x.y: 3 WAN down 30 s, 5 loss burst 30 % for 10 s, 4 NAT rebinding
#                  mid-transfer, 8 a server that never answers, 9 a server
#                  that resets mid-response
#   lab 10.82.x.y: 1 hub SIGKILLed and restarted, 2 branch restarted (temporal
#                  cache restored), 6 cache file corrupt / on a full disk /
#                  unreadable, 7 SIGHUP with a broken config
# The WAN faults are nftables rules in the hub's namespace (drop, random drop,
# a stateless address rewrite): the hub's side of the WAN is where a link, a
# lossy path or a NAT in front of the branch shows.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tests/support/netns_test.sh"
bin=$(netns_abs_path "${1:-$root/build/ensemble-gw}")
lab_sh=$root/scripts/gateway-lab.sh
only=" ${EGW_FAULT_ONLY:-1 2 3 4 5 6 7 8 9} "
limit_s=${EGW_FAULT_LIMIT:-200}
read -r net_a net_b <<<"${EGW_FAULT_NETS:-81 82}"
t_start=$SECONDS
export PYTHONDONTWRITEBYTECODE=1  # nothing written into the source tree
# The product's timeouts the cases' bounds derive from (docs/config.md,
# tunnel/session/session.h): a silent peer is dead after 15 s; a new client
# waits limits.connect_timeout_ms (default 5 s) for a tunnel that is down.
dead_peer_s=15
connect_timeout_s=5
slack_s=5  # scheduling on a loaded 2-core machine

netns_require fault_matrix ip nft wg python3 curl timeout ethtool sha256sum mount
[[ -x $bin ]] || { echo "fault_matrix: no gateway binary at $bin"; exit 1; }

tmp=$(mktemp -d /tmp/egw-faults.XXXXXX)
group_pids=()
cleanup() {
  trap - EXIT INT TERM
  netns_watchdog_stop
  local pid net
  for pid in "${group_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for net in $net_a $net_b; do
    netns_lab_down "$lab_sh" "egwf$net-$$" "$tmp/$net/lab"
    mountpoint -q "$tmp/$net/full" 2>/dev/null && umount "$tmp/$net/full"
  done
  netns_keep_or_remove "${EGW_FAULT_KEEP:-0}" "$tmp"
}
trap cleanup EXIT
trap 'echo "FAIL: interrupted"; exit 1' INT TERM

# The watchdog: past limit_s it ends the groups (their commands each have
# their own timeout too) and the run; then the cleanup (the gateways' drain,
# at most ~15 s each). ctest allows 300 s.
netns_watchdog "$limit_s" "FAIL watchdog: the fault matrix ran out of its $limit_s s"

# ------------------------------------------------------------------ helpers
# (used by fault_cases.sh; P, N, D and W are the running group's lab)

wanted() { [[ $only == *" $1 "* ]]; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
at_most() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
line() {  # STATUS "ID TITLE" TEXT; run by the groups' subshells: counted in their own files
  echo "$1 $2: $3"
  echo "$1 $2" >>"$W/summary"
}
lab() { timeout 60 "$lab_sh" "$1" "$P" "$D" "${@:2}"; }
fc() { local limit=$1; shift; in_ns client "$limit" python3 "$here/fault_client.py" "$@"; }
fc_bg() {  # fc_bg OUT LIMIT ARGS...: a client in the background; its pid in $bg_pid
  local out=$1 limit=$2
  shift 2
  (exec timeout "$limit" ip netns exec "$P-client" python3 "$here/fault_client.py" "$@" >"$out" 2>&1) &
  bg_pid=$!
}
field() { grep -o "$1=[^ ]*" "$2" 2>/dev/null | tail -n1 | cut -d= -f2; }  # field NAME FILE
figures() { grep -v '^receiving' "$1" | tail -n1 | sed 's/; end=.*//'; }
metric() {  # metric ROLE NAME: the sum of NAME's samples on ROLE's /metrics
  in_ns "$1" 5 curl -s --max-time 3 http://127.0.0.1:9470/metrics |
    awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $2 } END { print s + 0 }'
}
metric_is() {  # metric_is ROLE NAME WANT: waits up to 3 s (the exporter's snapshot lags); the value
  local i v
  for i in $(seq 30); do
    v=$(metric "$1" "$2")
    [[ $v == "$3" ]] && break
    sleep 0.1
  done
  echo "$v"
}
peer_address() { timeout 5 "$bin" status -c "$D/hub.yaml" 2>/dev/null | awk '$1 == "branch" { print $4 }'; }
tunnel_ups() { grep -c "tunnel to hub up" "$D/branch.log" 2>/dev/null; }
restart_branch() {  # restart_branch: start it, wait for a new "tunnel up"; seconds taken
  local ups t0
  ups=$(tunnel_ups)
  t0=$(now)
  lab start-branch "$bin"
  wait_for "$D/branch.log" "tunnel to hub up" 15 $((ups + 1)) || return 1
  since "$t0" "$(now)"
}
log_tail() {  # for a failure: what the gateways said last
  local role
  for role in branch hub; do
    tail -n 8 "$D/$role.log" 2>/dev/null | sed "s/^/    $N $role: /"
  done
}
retry_intact() {  # retry_intact DEADLINE_S SEED: GET 1 MB until intact; figures
  local t0 tries=0 seen=() o
  t0=$(now)
  while at_most "$(since "$t0" "$(now)")" "$1"; do
    tries=$((tries + 1))
    fc $((dead_peer_s + slack_s + 5)) get "10.$N.2.2" 80 "/bytes/1000000.bin?seed=$2$tries" 1000000 "$2$tries" \
      $((dead_peer_s + slack_s)) intact >"$W/retry.out" 2>&1
    o=$(field outcome "$W/retry.out")
    if [[ $o == intact ]]; then
      echo "intact after $(since "$t0" "$(now)") s ($tries tries${seen[*]:+, before: ${seen[*]}})"
      return 0
    fi
    seen+=("${o:-none}")
    [[ $o == reset ]] || { echo "a try ended '${o:-?}': $(figures "$W/retry.out")"; return 1; }
    sleep 0.5
  done
  echo "nothing intact within $1 s ($tries tries: ${seen[*]})"
  return 1
}

# ------------------------------------------------------------------ groups
source "$here/fault_cases.sh"

run_group() {  # run_group NET CASE...: a lab of its own, its cases in order
  N=$1
  shift
  P=egwf$N-$$
  W=$tmp/$N
  D=$W/lab
  mkdir -p "$W"
  : >"$W/summary"
  local todo=() c
  for c in "$@"; do wanted "$c" && todo+=("$c"); done
  ((${#todo[@]})) || return 0
  if ! timeout 60 "$lab_sh" up "$P" "$N" "$D" "$bin" >"$W/lab-up.log" 2>&1; then
    line FAIL "lab $N" "gateway-lab.sh up: $(tail -n 3 "$W/lab-up.log" | tr '\n' ' ')"
    return 1
  fi
  netns_http_server $((limit_s + 30)) "$W/server.log" --http-port 80 --raw-port 7000 --silent-port 7001
  if ! wait_for "$W/server.log" ready 10 || ! wait_for "$D/branch.log" "tunnel to hub up" 20; then
    line FAIL "lab $N" "the test server or the tunnel did not start"
    log_tail
    return 1
  fi
  for c in "${todo[@]}"; do "case_$c"; done
  # After the cases: both gateways alive (whatever they went through).
  local role dead=()
  for role in branch hub; do
    kill -0 "$(cat "$D/$role.pid" 2>/dev/null)" 2>/dev/null || dead+=("$role")
  done
  if ((${#dead[@]})); then
    line FAIL "lab $N gateways" "not running at the end: ${dead[*]}"
    log_tail
  fi
}

echo "fault matrix: gateway $bin, labs egwf$net_a-$$ (10.$net_a.x.y) and egwf$net_b-$$ (10.$net_b.x.y) in $tmp"
run_group "$net_a" 3 5 4 8 9 &
group_pids+=($!)
run_group "$net_b" 1 2 6 7 &
group_pids+=($!)
wait "${group_pids[@]}"
group_pids=()

summaries=("$tmp/$net_a/summary" "$tmp/$net_b/summary")
passed=$(cat "${summaries[@]}" 2>/dev/null | grep -c '^PASS')
failed=$(cat "${summaries[@]}" 2>/dev/null | grep -c '^FAIL')
echo "== fault_matrix: $passed passed, $failed failed in $((SECONDS - t_start)) s"
grep -h '^FAIL' "${summaries[@]}" 2>/dev/null | sed 's/^/   /'
((failed == 0 && passed > 0))
