#!/usr/bin/env bash
# wanem's real binary between two namespaces, set up by bench/wanem/wan-ns.sh:
#
#   left 10.94.1.2 [lw] --- [wl] wan [wr] --- [rw] 10.94.2.2 right
#                          wl -> TUN wa -> wanem a2b -> TUN wb -> wr
#
# and checks that the link behaves as configured, with UDP probes
# (udp_tool.py: no ping or iperf3 needed):
#   1 RTT: delay 20 ms each way -> min of 20 round trips within 1 ms of 40 ms
#   2 rate: 10 Mbit/s, offered 12 Mbit/s of 1400-byte IP packets for 4 s ->
#     IP bytes per second at the right within 3 % of 10 Mbit/s
#   3 queue: queue=10p on a 100 kbit/s link, a burst of 50 -> exactly 11
#     arrive (10 waiting + 1 on the wire), and the stats line says so
#   4 control: `set a2b loss=1` takes the link down, `loss=0` back up; stdin
#     closed and wanem still forwards; SIGTERM -> a final stats line, exit 0
#   5 no sanitizer reports in wanem's stderr (the ASan+UBSan tree)
# Prints PASS/FAIL per check; exit 1 if any failed, 77 if it cannot run here.
#
#   usage: netns_wanem_test.sh [path/to/wanem]      (default build/bench/wanem)
#   EGW_WANEM_TEST_KEEP=1   keep the temporary directory (wanem's output, trace)
#   EGW_WANEM_TEST_NET=94   the address number (10.NET.x.y)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tests/support/netns_test.sh"
bin=${1:-$root/build/bench/wanem}
helper=$root/bench/wanem/wan-ns.sh
tool=$here/udp_tool.py
N=${EGW_WANEM_TEST_NET:-94}
P=egwm$$
t_start=$SECONDS

netns_require netns_wanem_test ip ethtool python3 timeout
[[ -e /dev/net/tun ]] || netns_skip netns_wanem_test "no /dev/net/tun"
[[ -x $bin ]] || { echo "netns_wanem_test: no wanem binary at $bin"; exit 1; }

tmp=$(mktemp -d /tmp/egw-wanemtest.XXXXXX)
wanem_pid=
cleanup() {
  trap - EXIT INT TERM
  exec 3>&- 2>/dev/null
  netns_watchdog_stop
  [[ -n $wanem_pid ]] && kill "$wanem_pid" 2>/dev/null
  netns_kill_in "$P" left wan right
  [[ -n $wanem_pid ]] && wait "$wanem_pid" 2>/dev/null
  netns_delete "$P" left wan right
  netns_keep_or_remove "${EGW_WANEM_TEST_KEEP:-0}" "$tmp"
}
trap cleanup EXIT
trap 'echo "FAIL: interrupted"; exit 1' INT TERM

# Bounded: every command has its own timeout; the watchdog ends the test at 100 s.
netns_watchdog 100 "FAIL: the test ran out of its 100 s"

failed=0
passed=0
check() {  # check OK_EXPR_RESULT(0/1) NAME TEXT
  if [[ $1 == 0 ]]; then echo "PASS $2: $3"; passed=$((passed + 1))
  else echo "FAIL $2: $3"; failed=1; fi
}
py() { python3 -c "import sys; $1" "${@:2}"; }  # py 'CODE' ARGS...: small arithmetic

# ------------------------------------------------------------------ the lab
for role in left wan right; do
  ip netns add "$P-$role" || { echo "FAIL: ip netns add"; exit 1; }
  in_ns "$role" 5 ip link set lo up
done
ip link add lw netns "$P-left" type veth peer name wl netns "$P-wan"
ip link add rw netns "$P-right" type veth peer name wr netns "$P-wan"
in_ns left 5 ip addr add 10.$N.1.2/24 dev lw
in_ns wan 5 ip addr add 10.$N.1.1/24 dev wl
in_ns wan 5 ip addr add 10.$N.2.1/24 dev wr
in_ns right 5 ip addr add 10.$N.2.2/24 dev rw
for pair in "left lw" "wan wl" "wan wr" "right rw"; do
  read -r role dev <<<"$pair"
  in_ns "$role" 5 ethtool -K "$dev" tso off gso off gro off >/dev/null 2>&1
  in_ns "$role" 5 ip link set "$dev" up
done
in_ns left 5 ip route add default via 10.$N.1.1
in_ns right 5 ip route add default via 10.$N.2.1
timeout 20 "$helper" up "$P-wan" wl wr wa wb || { echo "FAIL: wan-ns.sh up"; exit 1; }

# wanem reads its commands from a FIFO we hold open on fd 3.
mkfifo "$tmp/ctl"
link="rate=10M,delay=20,queue=100p"
ip netns exec "$P-wan" timeout 110 "$bin" --dev-a wa --dev-b wb --a2b "$link" --b2a "$link" \
  --trace "$tmp/trace.txt" <"$tmp/ctl" >"$tmp/wanem.out" 2>"$tmp/wanem.err" &
wanem_pid=$!
exec 3>"$tmp/ctl"
wait_for "$tmp/wanem.out" '^ready' 5 || { echo "FAIL: wanem did not start"; cat "$tmp/wanem.err"; exit 1; }
echo "lab $P (10.$N.x.y), wanem $bin: $(head -n1 "$tmp/wanem.err")"

# ctl LINE: one command, its one answer line on stdout.
ctl() {
  local before
  before=$(wc -l <"$tmp/wanem.out")
  echo "$1" >&3
  for _ in $(seq 50); do (($(wc -l <"$tmp/wanem.out") > before)) && break; sleep 0.05; done
  tail -n1 "$tmp/wanem.out"
}
stat() { py 'import json; print(json.loads(sys.argv[1])[sys.argv[2]][sys.argv[3]])' "$1" "$2" "$3"; }

in_ns right 100 python3 "$tool" echo 7000 >"$tmp/echo.out" 2>&1 &
wait_for "$tmp/echo.out" ready 5

# ------------------------------------------------------------------ 1 RTT
# First without delay or rate: what the probes and the namespaces add alone.
ctl "set both delay=0,rate=0" >/dev/null
read -r base_ms _ < <(in_ns left 30 python3 "$tool" rtt 10.$N.2.2 7000 10 0.02)
ctl "set both $link" >/dev/null
read -r min_ms median_ms got < <(in_ns left 30 python3 "$tool" rtt 10.$N.2.2 7000 20 0.05)
ok=$(py 'print(0 if sys.argv[1] != "nan" and abs(float(sys.argv[1]) - 40) <= 1 else 1)' "$min_ms")
check "$ok" "1 RTT" "min ${min_ms} ms, median ${median_ms} ms of $got/20 round trips; configured 2 x 20 ms = 40 ms (+- 1 ms); without delay and rate: min ${base_ms} ms"

# ------------------------------------------------------------------ 2 rate
ctl reset >/dev/null
in_ns right 30 python3 "$tool" sink 9001 15 1.0 >"$tmp/sink1.out" 2>&1 &
sink_pid=$!
sleep 0.3
offered=$(in_ns left 20 python3 "$tool" blast 10.$N.2.2 9001 1372 12e6 4)
wait "$sink_pid"
read -r packets ip_bytes _ span_s < <(tail -n1 "$tmp/sink1.out")
s=$(ctl stats)
# Each arrival after the first is one more 1400-byte packet off the saturated wire.
rate=$(py 'n, b, t = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]); print("%.0f" % ((b - b / n) * 8 / t) if n > 1 and t > 0 else 0)' \
  "$packets" "$ip_bytes" "$span_s")
ok=$(py 'print(0 if abs(float(sys.argv[1]) - 10e6) <= 0.03 * 10e6 else 1)' "$rate")
err=$(py 'print("%+.2f" % ((float(sys.argv[1]) / 10e6 - 1) * 100))' "$rate")
check "$ok" "2 rate" "$rate bit/s of IP bytes (${err} % of 10 Mbit/s): $packets packets in ${span_s} s at the right; offered $offered packets at 12 Mbit/s; wanem a2b dropped_queue $(stat "$s" a2b dropped_queue), max_queue_packets $(stat "$s" a2b max_queue_packets)"

# ------------------------------------------------------------------ 3 queue
# 1028-byte IP packets at 100 kbit/s: 82 ms each, so the burst of 50 (sent in
# well under a millisecond) finds one on the wire and 10 waiting.
ctl "set a2b rate=100k,queue=10p" >/dev/null
sleep 0.2
ctl reset >/dev/null
in_ns right 30 python3 "$tool" sink 9002 10 2.0 >"$tmp/sink2.out" 2>&1 &
sink_pid=$!
sleep 0.3
in_ns left 10 python3 "$tool" burst 10.$N.2.2 9002 1000 50 >/dev/null
wait "$sink_pid"
read -r packets _ < <(tail -n1 "$tmp/sink2.out")
s=$(ctl stats)
summary="in $(stat "$s" a2b in_packets), out $(stat "$s" a2b out_packets), dropped_queue $(stat "$s" a2b dropped_queue), max_queue_packets $(stat "$s" a2b max_queue_packets)"
want="in 50, out 11, dropped_queue 39, max_queue_packets 10"
[[ $packets == 11 && $summary == "$want" ]]
check $? "3 queue" "$packets of a burst of 50 arrived (want 11: queue=10p waiting + 1 on the wire); stats: $summary"

# ------------------------------------------------------------------ 4 control
ctl "set both rate=10M,queue=100p" >/dev/null
answer=$(ctl "set a2b loss=1")
read -r _ _ down_got < <(in_ns left 10 python3 "$tool" rtt 10.$N.2.2 7000 3 0.05)
ctl "set a2b loss=0" >/dev/null
bad=$(ctl "set a2b colour=red")
exec 3>&-  # stdin EOF: wanem must keep running
sleep 0.3
read -r _ _ up_got < <(in_ns left 10 python3 "$tool" rtt 10.$N.2.2 7000 3 0.05)
kill -TERM "$wanem_pid"
wait "$wanem_pid"
rc=$?
wanem_pid=
final=$(tail -n1 "$tmp/wanem.out")
final_ok=$(py 'import json; d = json.loads(sys.argv[1]); print("ok" if {"a2b", "b2a"} <= d.keys() else "no")' "$final" 2>/dev/null)
trace_lines=$(grep -c ' deq ' "$tmp/trace.txt" 2>/dev/null)
[[ $answer == ok && $down_got == 0 && $bad == error:* && $up_got == 3 && $rc == 0 && $final_ok == ok && $trace_lines -gt 0 ]]
check $? "4 control" "set: '$answer'; loss=1: $down_got/3 answered; bad option: '${bad:0:60}'; after stdin EOF: $up_got/3; SIGTERM: exit $rc, final stats line: ${final_ok:-none}; trace: $trace_lines deq lines"

# The sanitizer tree runs this test with an ASan+UBSan wanem.
reports=$(grep -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$tmp/wanem.err")
[[ -z $reports ]]
check $? "5 sanitizer reports" "${reports:-none in the stderr of wanem}"

echo "== netns_wanem_test: $passed passed, failed=$failed in $((SECONDS - t_start)) s"
exit $failed
