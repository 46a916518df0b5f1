#!/usr/bin/env bash
# UDP flows through both gateways (issue 21 item 3), across
# scripts/gateway-lab.sh's namespaces (client -> branch -> hub -> server).
# One PASS / FAIL line per check; exit 1 if any failed, 77 if it cannot run.
#
#   usage: netns_udp_test.sh [path/to/ensemble-gw]     (default build/ensemble-gw)
#   EGW_UDP_TEST_NET=74   the lab's address number (10.NET.x.y)
#   EGW_UDP_TEST_KEEP=1   keep the lab's directory (configs, logs)
#
#   echo        the client's datagrams to the server's UDP port 7001 come back;
#               the reply's source is the server's address and port (the
#               branch answers from the original destination), and the server
#               saw the hub's address (the flow went through the tunnel)
#   quic        with udp.carry_quic, UDP 443 (rejected by the lab's reject_quic
#               otherwise) is carried as datagrams too
#   refused     port 7002 is intercepted but not in the hub's allow list: no
#               reply, the server saw nothing, the hub counts it refused
#   flow bound  one client opening 6 flows with flows_per_client 5: only the
#               room left is answered, the rest dropped as client_limit
#   metrics     flows open, datagrams sent / received on both gateways
#   status      `ensemble-gw status` lists the flows (hub JSON, branch table)
#   cleanup     SIGTERM: the branch's nftables table and fwmark rule are gone
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tests/support/netns_test.sh"
bin=$(netns_abs_path "${1:-$root/build/ensemble-gw}")
lab=$root/scripts/gateway-lab.sh
N=${EGW_UDP_TEST_NET:-74}
P=egwu$$
t_start=$SECONDS
export PYTHONDONTWRITEBYTECODE=1

netns_require netns_udp_test ip nft wg python3 curl timeout
[[ -x $bin ]] || { echo "netns_udp_test: no gateway binary at $bin"; exit 1; }
modprobe nft_tproxy 2>/dev/null
modprobe nf_tproxy_ipv4 2>/dev/null

tmp=$(mktemp -d /tmp/egw-udptest.XXXXXX)
D=$tmp/lab
echo_pid=
cleanup() {
  trap - EXIT INT TERM
  netns_watchdog_stop
  [[ -n $echo_pid ]] && kill "$echo_pid" 2>/dev/null
  netns_lab_down "$lab" "$P" "$D"
  netns_keep_or_remove "${EGW_UDP_TEST_KEEP:-0}" "$tmp"
}
trap cleanup EXIT
trap 'echo "FAIL: interrupted"; exit 1' INT TERM
netns_watchdog 120 "FAIL: the test ran out of its 120 s"

log_tail() {
  for role in branch hub; do
    echo "--- $role.log (last 12 lines)"
    tail -n 12 "$D/$role.log" 2>/dev/null | sed 's/^/    /'
  done
}
metric() {  # metric ROLE NAME_WITH_LABELS: its value, 0 if absent
  local v
  v=$(in_ns "$1" 5 curl -s 127.0.0.1:9470/metrics | awk -v m="$2" '$1 == m { print $2 }')
  echo "${v:-0}"
}

# ------------------------------------------------------------------ the lab
echo "lab $P (10.$N.x.y) in $tmp, gateway $bin"
if ! timeout 60 "$lab" up "$P" "$N" "$D" "$bin" >"$tmp/lab-up.log" 2>&1; then
  echo "FAIL: gateway-lab.sh up"; cat "$tmp/lab-up.log"; exit 1
fi
timeout 30 "$lab" stop-branch "$P" "$D"
timeout 30 "$lab" stop-hub "$P" "$D"
printf 'udp: {ports: [7001-7002], class: html, flows_per_client: 5, carry_quic: true}\n' >>"$D/branch.yaml"
sed -i "s|allow: \[10.$N.2.0/24, |allow: [\"10.$N.2.0/24:7001,443\", \"10.$N.2.0/24:80\", |" "$D/hub.yaml"
printf 'udp: {idle_timeout_s: 60}\n' >>"$D/hub.yaml"
: >"$D/branch.log"
: >"$D/hub.log"
timeout 30 "$lab" start-hub "$P" "$D" "$bin"
timeout 30 "$lab" start-branch "$P" "$D" "$bin"
(exec timeout 110 ip netns exec "$P-server" python3 "$here/udp_echo.py" server 7001 7002 443 >"$tmp/echo.log" 2>&1) &
echo_pid=$!
wait_for "$tmp/echo.log" ready 10 || { echo "FAIL: the echo server did not start"; cat "$tmp/echo.log"; exit 1; }
if ! wait_for "$D/branch.log" "tunnel to hub up" 20; then
  echo "FAIL: the tunnel did not come up within 20 s"; log_tail; exit 1
fi
if ! wait_for "$D/branch.log" "UDP to ports" 5; then
  echo "FAIL: no UDP interception"; log_tail; exit 1
fi

# ------------------------------------------------------------------ echo
out=$(in_ns client 20 python3 "$here/udp_echo.py" client "10.$N.2.2" 7001 20 2>&1)
if [[ $out == "replies 20 of 20 from 10.$N.2.2:7001, source seen 10.$N.2.1" ]]; then
  line PASS "echo" "$out"
elif [[ $out == "replies "[1-9]* && $out == *"from 10.$N.2.2:7001, source seen 10.$N.2.1" ]]; then
  line PASS "echo" "$out (the first may wait for the flow)"
else
  line FAIL "echo" "$out (want replies from 10.$N.2.2:7001 and the hub's 10.$N.2.1 seen by the server)"
  log_tail
fi

# ------------------------------------------------------------------ quic
out=$(in_ns client 20 python3 "$here/udp_echo.py" client "10.$N.2.2" 443 5 2>&1)
if [[ $out == "replies "[1-5]" of 5 from 10.$N.2.2:443, source seen 10.$N.2.1" ]] &&
  ! in_ns branch 5 nft list table inet ensemble_gw | grep -q "udp dport 443 reject"; then
  line PASS "quic carried" "$out; no reject rule"
else
  line FAIL "quic carried" "$out (want replies through the hub); branch: $(in_ns branch 5 curl -s 127.0.0.1:9470/metrics | grep -E "^egw_udp_(datagrams_dropped|datagrams_sent)" | tr "\n" " "); table: $(in_ns branch 5 nft list table inet ensemble_gw | grep -E 'tproxy|reject' | tr -s '\t\n' ' ')"
fi

# ------------------------------------------------------------------ refused
before=$(grep -c "^7002 " "$tmp/echo.log")
out=$(in_ns client 20 python3 "$here/udp_echo.py" client "10.$N.2.2" 7002 3 2>&1)
after=$(grep -c "^7002 " "$tmp/echo.log")
wait_for "$D/hub.log" "refused UDP flow to 10.$N.2.2:7002" 3
refused=$(metric hub 'egw_udp_datagrams_dropped_total{reason="refused"}')
if [[ $out == "replies 0 of 3"* && $before == "$after" && $refused -ge 1 ]] &&
  grep -q "refused UDP flow to 10.$N.2.2:7002: not_allowed" "$D/hub.log"; then
  line PASS "refused destination" "$out; the server saw nothing; hub refused $refused"
else
  line FAIL "refused destination" "$out; server datagrams on 7002 $before -> $after; hub refused $refused"
  log_tail
fi

# ------------------------------------------------------------------ flow bound
open=$(metric branch egw_udp_flows_open)
room=$((5 - ${open%.*}))
out=$(in_ns client 20 python3 "$here/udp_echo.py" flows "10.$N.2.2" 7001 6 2>&1)
limited=$(metric branch 'egw_udp_datagrams_dropped_total{reason="client_limit"}')
if [[ $out == "answered $room of 6" && ${limited%.*} -ge $((6 - room)) ]]; then
  line PASS "flow bound" "$out with $open flows open of flows_per_client 5; client_limit drops $limited"
else
  line FAIL "flow bound" "$out (want $room of 6); flows open before $open; client_limit drops $limited"
fi

# ------------------------------------------------------------------ metrics
b_sent=$(metric branch egw_udp_datagrams_sent_total) b_recv=$(metric branch egw_udp_datagrams_received_total)
h_sent=$(metric hub egw_udp_datagrams_sent_total) h_recv=$(metric hub egw_udp_datagrams_received_total)
h_open=$(metric hub egw_udp_flows_open)
if [[ ${b_sent%.*} -ge 20 && ${b_recv%.*} -ge 20 && ${h_sent%.*} -ge 20 && ${h_recv%.*} -ge 20 && ${h_open%.*} -ge 1 ]]; then
  line PASS "metrics" "branch sent $b_sent received $b_recv; hub sent $h_sent received $h_recv, flows open $h_open"
else
  line FAIL "metrics" "branch sent $b_sent received $b_recv; hub sent $h_sent received $h_recv, flows open $h_open"
fi

# ------------------------------------------------------------------ status
# `ensemble-gw status` lists the flows: the hub's JSON has a flow to the echo
# port with datagrams and bytes both ways; the branch's table a row for it.
st_hub=$(timeout 10 "$bin" status --json -c "$D/hub.yaml" 2>&1)
st_branch=$(timeout 10 "$bin" status -c "$D/branch.yaml" 2>&1)
if python3 -c '
import json, sys
d = json.loads(sys.argv[1])
f = [f for f in d["udp_flows"] if f["destination"] == sys.argv[2] and f["datagrams_sent"] and f["datagrams_received"]]
assert f and f[0]["bytes_sent"] > 0 and f[0]["bytes_received"] > 0, d["udp_flows"]
' "$st_hub" "10.$N.2.2:7001" 2>/dev/null &&
  grep -Eq "^hub +[0-9]+ +[0-9.]+:[0-9]+ +10\.$N\.2\.2:7001 " <<<"$st_branch"; then
  line PASS "status" "hub: $(grep -o '"udp_flows_open":[0-9]*' <<<"$st_hub"); branch: '$(grep -Em1 "10\.$N\.2\.2:7001 " <<<"$st_branch" | tr -s ' ')'"
else
  line FAIL "status" "hub: $(head -c 400 <<<"$st_hub"); branch: $(tail -n 4 <<<"$st_branch" | tr '\n' ' ')"
fi

# ------------------------------------------------------------------ cleanup
rule_before=$(in_ns branch 5 ip rule list | grep -c "fwmark 0x4547")
timeout 30 "$lab" stop-branch "$P" "$D"
rule_after=$(in_ns branch 5 ip rule list | grep -c "fwmark 0x4547")
if [[ $rule_before == 1 && $rule_after == 0 ]] && ! in_ns branch 5 nft list table inet ensemble_gw >/dev/null 2>&1; then
  line PASS "cleanup" "fwmark rule installed, and gone with the table after SIGTERM"
else
  line FAIL "cleanup" "fwmark rules before/after: $rule_before/$rule_after; table: $(in_ns branch 5 nft list table inet ensemble_gw 2>&1 | head -c 200)"
fi

reports=$(sanitizer_reports "$D/branch.log" "$D/hub.log")
[[ -n $reports ]] && line FAIL "sanitizers" "$reports"
netns_summary netns_udp_test
netns_list_failures
exit $failed
