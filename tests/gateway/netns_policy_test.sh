#!/usr/bin/env bash
# The gateway as a process, across scripts/gateway-lab.sh's namespaces
# (client -> branch -> hub -> server): what issue 19 found in its start,
# its privileges, its reloads and the hub's own addresses. One PASS / FAIL
# line per check; exit 1 if any failed, 77 if it cannot run here.
#
#   usage: netns_policy_test.sh [path/to/ensemble-gw]     (default build/ensemble-gw)
#   EGW_POLICY_TEST_NET=73   the lab's address number (10.NET.x.y)
#   EGW_POLICY_TEST_KEEP=1   keep the lab's directory (configs, logs)
#
#   privileges  the branch runs with `user: nobody`, the hub as root without
#               `user`: both keep CAP_NET_ADMIN only (effective, permitted,
#               bounding), no_new_privs; the branch as uid 65534 (item 11)
#   key mode    the hub's private key is 0644: its log warns (item 9)
#   own address an address added to the hub after start, with a service of
#               the hub's on it, inside the allow list: refused (item 5)
#   reload      after the drop, SIGHUP with interception.lan, reject_quic and
#               ensemble.window_law changed: the table is replaced, window_law
#               named in "restart needed for" (item 7); traffic still flows
#   early signal SIGHUP 10, 25 and 40 ms after start (while it loads 200,000
#               cache entries): the branch lives and its table comes; SIGTERM
#               25 ms after start: it exits and its table is gone (item 8)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tests/support/netns_test.sh"
bin=$(netns_abs_path "${1:-$root/build/ensemble-gw}")
lab=$root/scripts/gateway-lab.sh
N=${EGW_POLICY_TEST_NET:-73}
P=egwp$$
t_start=$SECONDS
export PYTHONDONTWRITEBYTECODE=1

netns_require netns_policy_test ip nft wg python3 curl timeout
[[ -x $bin ]] || { echo "netns_policy_test: no gateway binary at $bin"; exit 1; }
getent passwd nobody >/dev/null || netns_skip netns_policy_test "no user nobody"

tmp=$(mktemp -d /tmp/egw-policytest.XXXXXX)
D=$tmp/lab
service_pid=
cleanup() {
  trap - EXIT INT TERM
  netns_watchdog_stop
  [[ -n $service_pid ]] && kill "$service_pid" 2>/dev/null
  netns_http_server_stop
  netns_lab_down "$lab" "$P" "$D"
  netns_keep_or_remove "${EGW_POLICY_TEST_KEEP:-0}" "$tmp"
}
trap cleanup EXIT
trap 'echo "FAIL: interrupted"; exit 1' INT TERM
netns_watchdog 150 "FAIL: the test ran out of its 150 s"

log_tail() {
  for role in branch hub; do
    echo "--- $role.log (last 12 lines)"
    tail -n 12 "$D/$role.log" 2>/dev/null | sed 's/^/    /'
  done
}
pid_of() { cat "$D/$1.pid" 2>/dev/null; }
field() { awk -v k="$2:" '$1 == k { $1 = ""; print substr($0, 2) }' "/proc/$1/status" 2>/dev/null; }
table_in() { in_ns "$1" 10 nft list table inet ensemble_gw 2>/dev/null; }

# ------------------------------------------------------------------ the lab
echo "lab $P (10.$N.x.y) in $tmp, gateway $bin"
if ! timeout 60 "$lab" up "$P" "$N" "$D" "$bin" >"$tmp/lab-up.log" 2>&1; then
  echo "FAIL: gateway-lab.sh up"; cat "$tmp/lab-up.log"; exit 1
fi
# Restarted with this test's configs: the branch as nobody (its files its
# own, no cache file in a directory it cannot write), the hub's key 0644.
timeout 30 "$lab" stop-branch "$P" "$D"
timeout 30 "$lab" stop-hub "$P" "$D"
sed -i '/^temporal_cache:/,+1d' "$D/branch.yaml"
echo "user: nobody" >>"$D/branch.yaml"
chown nobody "$D/branch.yaml" "$D/branch.key"
chmod 711 "$D" "$tmp"
chmod 644 "$D/hub.key"
: >"$D/branch.log"
: >"$D/hub.log"
timeout 30 "$lab" start-hub "$P" "$D" "$bin"
timeout 30 "$lab" start-branch "$P" "$D" "$bin"
netns_http_server 140 "$tmp/server.log" --http-port 80 --raw-port 7000
wait_for "$tmp/server.log" ready 10 || { echo "FAIL: the test server did not start"; cat "$tmp/server.log"; exit 1; }
if ! wait_for "$D/branch.log" "tunnel to hub up" 20; then
  echo "FAIL: the tunnel did not come up within 20 s"; log_tail; exit 1
fi
wait_for "$D/branch.log" "nftables table inet ensemble_gw installed" 5
get() { in_ns client 20 curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "http://10.$N.2.2/bytes/1000.bin?seed=p"; }

# ------------------------------------------------------------------ item 11
check_privileges() {  # ROLE WANT_UID
  local role=$1 want_uid=$2 pid uid eff prm bnd nnp
  pid=$(pid_of "$role")
  uid=$(field "$pid" Uid | tr -s '\t ' ' ')
  eff=$(field "$pid" CapEff) prm=$(field "$pid" CapPrm) bnd=$(field "$pid" CapBnd) nnp=$(field "$pid" NoNewPrivs)
  local figures="Uid '$uid', CapEff $eff, CapPrm $prm, CapBnd $bnd, NoNewPrivs $nnp"
  if [[ $uid == "$want_uid $want_uid $want_uid $want_uid" && $eff == 0000000000001000 && $prm == 0000000000001000 &&
    $bnd == 0000000000001000 && $nnp == 1 ]]; then
    line PASS "privileges $role" "$figures"
  else
    line FAIL "privileges $role" "$figures (want uid $want_uid, cap_net_admin 0x1000 only, no_new_privs 1)"
  fi
}
check_privileges branch 65534
check_privileges hub 0

# ------------------------------------------------------------------ item 9
checked=$(timeout 10 "$bin" check -c "$D/hub.yaml" 2>&1)
if logged=$(grep -m1 "private_key_file: .*group/world-accessible" "$D/hub.log") &&
  [[ $checked == *"warning: "*"private_key_file: "*"mode 0644"* ]]; then
  line PASS "key mode warning" "hub: '${logged#* * }'; check says it too"
else
  line FAIL "key mode warning" "for its 0644 key: hub.log '${logged:-}', check '$checked'"
fi

# ------------------------------------------------------------------ item 5
# 10.N.2.77 inside the hub's allow list (10.N.2.0/24), added after start,
# with a service of the hub's own listening on it.
in_ns hub 10 ip addr add "10.$N.2.77/24" dev dc0
(exec timeout 60 ip netns exec "$P-hub" python3 -m http.server --bind "10.$N.2.77" 8077 >"$tmp/service.log" 2>&1) &
service_pid=$!
sleep 0.5
out=$(in_ns client 15 python3 "$here/client.py" expect-reset "10.$N.2.77" 8077 3 2>&1)
rc=$?
wait_for "$D/hub.log" "refused branch -> 10.$N.2.77:8077: own_address" 2
if [[ $rc -eq 0 ]] && grep -q "refused branch -> 10.$N.2.77:8077: own_address" "$D/hub.log"; then
  line PASS "address added after start" "client: $out; hub: own_address"
else
  line FAIL "address added after start" "client: $out; hub log: $(grep -m1 "10.$N.2.77" "$D/hub.log" | cut -d' ' -f3-)"
fi
kill "$service_pid" 2>/dev/null
wait "$service_pid" 2>/dev/null
service_pid=

# ------------------------------------------------------------------ item 7
before=$(get)
sed -i -e "s|lan: \[10.$N.1.0/24, \"fd$N:1::/64\"\]|lan: [10.$N.1.0/24, 10.$N.5.0/24, \"fd$N:1::/64\"]|" \
  -e 's/reject_quic: true/reject_quic: false/' "$D/branch.yaml"
printf 'ensemble: {window_law: cubic}\n' >>"$D/branch.yaml"
kill -HUP "$(pid_of branch)"
wait_for "$D/branch.log" "reloaded" 5
table=$(table_in branch)
after=$(get)
restart=$(grep -m1 "restart needed for" "$D/branch.log" | cut -d' ' -f3-)
if [[ $table == *"10.$N.5.0/24"* && $table != *"chain forward"* && $restart == *"ensemble.window_law"* &&
  $restart != *interception* && $before == 200 && $after == 200 ]] &&
  grep -q "replaced with the reloaded rules" "$D/branch.log"; then
  line PASS "reload applies the table" "new LAN prefix in the table, QUIC reject chain gone, warning: '$restart'; GET before/after: $before/$after"
else
  line FAIL "reload applies the table" "GET $before/$after; warning '$restart'; table: $(tr -s '\n\t ' ' ' <<<"$table" | head -c 400)"
  log_tail
fi

# ------------------------------------------------------------------ item 11, as deployed
# The image and the systemd unit start it unprivileged, with cap_net_admin
# as a file capability: the drop must be a no-op there, not a failure.
timeout 30 "$lab" stop-branch "$P" "$D"
mkdir -p "$tmp/nobody"
chown nobody "$tmp/nobody"
cp "$bin" "$tmp/nobody/ensemble-gw"
sed -i "s|^status_socket: .*|status_socket: $tmp/nobody/branch.sock|" "$D/branch.yaml"
if setcap cap_net_admin=ep "$tmp/nobody/ensemble-gw" 2>"$tmp/setcap.err"; then
  : >"$D/branch.log"
  (exec ip netns exec "$P-branch" setpriv --reuid nobody --regid nogroup --clear-groups \
    "$tmp/nobody/ensemble-gw" run -c "$D/branch.yaml" >>"$D/branch.log" 2>&1) &
  filecap_pid=$!
  wait_for "$D/branch.log" "tunnel to hub up" 20
  wait_for "$D/branch.log" "nftables table inet ensemble_gw installed" 5
  uid=$(field "$filecap_pid" Uid | tr -s '\t ' ' ') eff=$(field "$filecap_pid" CapEff) bnd=$(field "$filecap_pid" CapBnd)
  got=$(get)
  if [[ $uid == "65534 65534 65534 65534" && $eff == 0000000000001000 && $got == 200 ]] && table_in branch >/dev/null &&
    grep -q "privileges: .*bounding set as started" "$D/branch.log"; then
    line PASS "privileges, file capability" "as nobody with cap_net_admin=ep: started, table installed, GET $got; CapEff $eff, CapBnd $bnd (left)"
  else
    line FAIL "privileges, file capability" "Uid '$uid', CapEff $eff, GET $got, table $(table_in branch >/dev/null && echo yes || echo no)"
    log_tail
  fi
  kill -TERM "$filecap_pid"
  for _ in $(seq 1 150); do kill -0 "$filecap_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$filecap_pid" 2>/dev/null
  wait "$filecap_pid" 2>/dev/null
else
  line SKIP "privileges, file capability" "setcap on $tmp: $(head -c 100 "$tmp/setcap.err")"
fi

# ------------------------------------------------------------------ item 8
# start_early: the branch started; returns once the process is the gateway
# (not `ip netns exec` any more) and the dynamic loader has mapped its
# libraries (libnftables): the signal then goes ms after the gateway's own
# code starts, not while a loaded machine still links it (a signal there
# kills any program). A sanitizer build spends longer before main (its
# runtime's start), so there start_early also waits until SIGHUP is
# blocked or caught (/proc/PID/status SigBlk, SigCgt).
sanitized=0
grep -qa __asan_init "$bin" && sanitized=1
start_early() {
  ip netns exec "$P-branch" "$bin" run -c "$D/branch.yaml" >>"$D/branch.log" 2>&1 &
  early_pid=$!
  local blk cgt until=$((${EPOCHREALTIME/./} + 3000000))  # microseconds
  while ((${EPOCHREALTIME/./} < until)); do
    if [[ $(readlink "/proc/$early_pid/exe" 2>/dev/null) == "$bin" ]] && grep -q libnftables "/proc/$early_pid/maps" 2>/dev/null; then
      ((sanitized)) || return 0
      blk=$(field "$early_pid" SigBlk) cgt=$(field "$early_pid" SigCgt)
      (((0x${blk:-0} | 0x${cgt:-0}) & 1)) && return 0
    fi
  done
  return 1
}
stop_early() {
  kill -TERM "$early_pid" 2>/dev/null
  for _ in $(seq 1 150); do kill -0 "$early_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$early_pid" 2>/dev/null
  wait "$early_pid" 2>/dev/null
}
# A start that takes a while, deterministically: 200,000 temporal-cache
# entries to load (~0.35 s), before the nftables table. The signals below
# land inside it.
python3 - "$tmp/nobody/branch.cache" <<'PY'
import sys, time
now = int(time.time() * 1e6)
with open(sys.argv[1], "w") as f:
    f.write("egw-temporal-cache v1\n")
    for i in range(200000):
        f.write("k%d 14720 18446744073709551615 5143 1705 186 1472 %d\n" % (i, now))
    f.write("end 200000\n")
PY
chown nobody "$tmp/nobody/branch.cache"
printf 'temporal_cache: {file: %s, capacity: 200000}\n' "$tmp/nobody/branch.cache" >>"$D/branch.yaml"
bad=()
for ms in 10 25 40; do
  start_early || { bad+=("+${ms}ms: the gateway did not start within 3 s"); continue; }
  sleep "0.0$(printf %02d "$ms")"
  kill -HUP "$early_pid"
  for _ in $(seq 1 100); do
    kill -0 "$early_pid" 2>/dev/null && ! table_in branch >/dev/null || break
    sleep 0.05
  done
  if ! kill -0 "$early_pid" 2>/dev/null; then
    wait "$early_pid"
    bad+=("SIGHUP +${ms}ms: gone (status $?), table $(table_in branch >/dev/null && echo left || echo absent)")
  elif ! table_in branch >/dev/null; then
    bad+=("SIGHUP +${ms}ms: running without its table")
  fi
  stop_early
  table_in branch >/dev/null && bad+=("SIGHUP +${ms}ms: table left after SIGTERM")
done
start_early || bad+=("SIGTERM: the gateway did not start within 3 s")
sleep 0.025
kill -TERM "$early_pid"
for _ in $(seq 1 120); do kill -0 "$early_pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$early_pid" 2>/dev/null; then bad+=("SIGTERM +25ms: still running after 12 s"); fi
stop_early
table_in branch >/dev/null && bad+=("SIGTERM +25ms: table left behind")
if ((${#bad[@]} == 0)); then
  line PASS "early signals" "SIGHUP at +10/25/40 ms after start: running with its table; SIGTERM at +25 ms: exited, no table left"
else
  line FAIL "early signals" "$(printf '%s; ' "${bad[@]}")"
  tail -n 8 "$D/branch.log" | sed 's/^/    /'
fi

reports=$(sanitizer_reports "$D/branch.log" "$D/hub.log")
if [[ -z $reports ]]; then line PASS "sanitizer reports" "none"
else line FAIL "sanitizer reports" "$(head -n 3 <<<"$reports" | tr '\n' ' ')"; fi

netns_summary netns_policy_test
netns_list_failures
exit $failed
