#!/usr/bin/env bash
# A hub restart with a replayed handshake initiation, on the real binaries
# (issue 19 item 4): how long until the first GET through the gateways works
# again. scripts/gateway-lab.sh's four namespaces (client, branch, hub,
# server), a fresh lab for every run:
#
#   1. lab up (the hub with `handshake_state_file` in the "statefile" case,
#      set before the branch's first handshake), a GET through the gateways;
#   2. the branch restarted while a capture in the hub's namespace (python3,
#      AF_PACKET on the hub's wan0) keeps the first 175-byte UDP payload of
#      type 0x02 (a handshake initiation, tunnel/session/handshake_messages.h)
#      sent to the hub's tunnel port 51900; the tunnel up again, a GET, then
#      EGW_REPLAY_WARM_BYTES downloaded through the tunnel. That matters: a new
#      hub connection's packet numbers start at 0, and a branch that wrongly
#      kept its old connection drops each hub packet up to the greatest number
#      it had received as a duplicate; after a few packets only, the new
#      connection soon gets past them and the stall is short (daf7035: 4-6 s
#      with 0 bytes, 30 s with 4 MB);
#   3. the hub restarted: SIGTERM (gateway-lab.sh stop-hub), started again with
#      the same config; t0 = the new hub's start;
#   4. "replay" and "statefile": as soon as the new hub's UDP socket is bound
#      (ss), the captured datagram sent to it from the branch's namespace
#      (another source port; whether the hub answers it is noted); "plain":
#      nothing;
#   5. curl GET http://SERVER/health from the client in a loop (each try at
#      most 3 s, up to 60 s after t0): seconds from t0 to the first 200.
#
# Besides, per run: the handshakes seen on the hub's wan0 after t0 (the
# replay's marked), the branch's log lines about its tunnel and the growth of
# its egw_datagrams_dropped_total by reason. The branch notices a restarted
# hub by silence (5 s since it last heard the hub, session.h), so t0 to the
# first GET is ~3 s here: the 1 s pause and the hub's stop come before t0.
#
#   usage: netns_replay_bench.sh BINARY [LABEL]    (LABEL names the binary in the table)
#   EGW_REPLAY_CASES="plain replay statefile"   cases, in order ("statefile" needs
#                                               a binary that knows handshake_state_file)
#   EGW_REPLAY_RUNS=3        runs per case
#   EGW_REPLAY_NET=66        the lab's address number (10.NET.x.y)
#   EGW_REPLAY_WARM_BYTES=4000000  downloaded through the tunnel before the hub's
#                            restart (0: none), see step 2
#   EGW_REPLAY_LIMIT=900     seconds before the watchdog ends it all
#   EGW_REPLAY_KEEP=1        keep the runs' directories (configs, gateway logs)
#
# One line per run, then a table: case, binary, median / min / max seconds
# to the first GET (a run with no GET within 60 s counts as 60 and is marked).
# Needs root; all traffic stays inside the namespaces it creates.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tests/support/netns_test.sh"
[[ $# -ge 1 ]] || { echo "usage: netns_replay_bench.sh BINARY [LABEL]"; exit 2; }
bin=$(netns_abs_path "$1")
label=${2:-$bin}
lab_sh=$root/scripts/gateway-lab.sh
cases=${EGW_REPLAY_CASES:-plain replay statefile}
runs=${EGW_REPLAY_RUNS:-3}
N=${EGW_REPLAY_NET:-66}
limit_s=${EGW_REPLAY_LIMIT:-900}
get_deadline_s=60
warm_bytes=${EGW_REPLAY_WARM_BYTES:-4000000}
port=51900
t_start=$SECONDS
export PYTHONDONTWRITEBYTECODE=1

netns_require netns_replay_bench ip nft wg python3 curl timeout ethtool ss
[[ -x $bin ]] || { echo "netns_replay_bench: no gateway binary at $bin"; exit 1; }

tmp=$(mktemp -d /tmp/egw-replay.XXXXXX)
P=
D=
cap_pid=
cleanup() {
  trap - EXIT INT TERM
  netns_watchdog_stop
  [[ -n $cap_pid ]] && kill "$cap_pid" 2>/dev/null
  netns_http_server_stop
  [[ -n $P ]] && netns_lab_down "$lab_sh" "$P" "$D"
  netns_keep_or_remove "${EGW_REPLAY_KEEP:-0}" "$tmp"
}
trap cleanup EXIT
trap 'echo "interrupted"; exit 1' INT TERM
netns_watchdog "$limit_s" "netns_replay_bench: ran out of its $limit_s s"

# The capture: the first UDP payload to PORT of 175 bytes starting with 0x02
# (IPv4 or IPv6) seen on IFACE, written to OUT; prints its source.
cat >"$tmp/capture.py" <<'EOF'
import socket, struct, sys, time
iface, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind((iface, 0))
open(out + ".ready", "w").close()
while True:
    frame, addr = s.recvfrom(65535)
    if addr[2] == socket.PACKET_OUTGOING:
        continue
    ethertype = struct.unpack("!H", frame[12:14])[0]
    if ethertype == 0x0800:
        ihl = (frame[14] & 0x0F) * 4
        if frame[23] != 17:
            continue
        udp = 14 + ihl
        src = socket.inet_ntop(socket.AF_INET, frame[26:30])
    elif ethertype == 0x86DD:
        if frame[20] != 17:
            continue
        udp = 14 + 40
        src = socket.inet_ntop(socket.AF_INET6, frame[22:38])
    else:
        continue
    sport, dport, length = struct.unpack("!HHH", frame[udp:udp + 6])
    payload = frame[udp + 8:udp + length]
    if dport != port or len(payload) != 175 or payload[0] != 0x02:
        continue
    with open(out + ".tmp", "wb") as f:
        f.write(payload)
    import os
    os.rename(out + ".tmp", out)
    print(f"captured initiation from {src}:{sport} sender index {payload[1:5].hex()} at {time.time():.3f}", flush=True)
    break
EOF
# The replay: waits for the file GO, then sends FILE's bytes to HOST:PORT
# from BIND_ADDR (any port); notes whether anything comes back within 2 s (a
# 119-byte response: answered).
cat >"$tmp/replay.py" <<'EOF'
import os, socket, sys, time
bind_addr, host, port, path, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
data = open(path, "rb").read()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((bind_addr, 0))
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.002)
s.sendto(data, (host, port))
print(f"replayed {len(data)} bytes from port {s.getsockname()[1]} at {time.time():.3f}", flush=True)
s.settimeout(2.0)
try:
    reply, _ = s.recvfrom(2048)
    kind = {3: "response", 4: "cookie reply"}.get(reply[0], f"type {reply[0]}")
    print(f"answered: {len(reply)} bytes ({kind})", flush=True)
except socket.timeout:
    print("not answered within 2 s", flush=True)
EOF
# The handshake log: every initiation (0x02) to PORT and response (0x03)
# from PORT seen on IFACE, "EPOCH KIND SRC_PORT DST_PORT", until killed.
cat >"$tmp/hslog.py" <<'EOF'
import socket, struct, sys, time
iface, port = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
s.bind((iface, 0))
print("ready", flush=True)
while True:
    frame, addr = s.recvfrom(65535)
    if struct.unpack("!H", frame[12:14])[0] != 0x0800 or frame[23] != 17:
        continue
    udp = 14 + (frame[14] & 0x0F) * 4
    sport, dport, length = struct.unpack("!HHH", frame[udp:udp + 6])
    p = frame[udp + 8:udp + length]
    if dport == port and len(p) == 175 and p[0] == 2:
        print(f"{time.time():.3f} initiation {sport} {dport}", flush=True)
    elif sport == port and len(p) == 119 and p[0] == 3:
        print(f"{time.time():.3f} response {sport} {dport}", flush=True)
EOF

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
lab() { timeout 60 "$lab_sh" "$1" "$P" "$D" "${@:2}"; }
ups() { grep -c "tunnel to hub up" "$D/branch.log" 2>/dev/null; }
get_ok() {  # one GET from the client, at most $1 s: 0 on a 200 with "ok"
  local body
  body=$(in_ns client $(($1 + 2)) curl -s --connect-timeout "$1" --max-time "$1" "http://10.$N.2.2/health") &&
    [[ $body == ok ]]
}
drops() {  # the branch's egw_datagrams_dropped_total samples, "reason=N" each
  in_ns branch 5 curl -s --max-time 4 http://127.0.0.1:9470/metrics |
    awk '/^egw_datagrams_dropped_total\{/ { match($1, /reason="[^"]*"/); print substr($1, RSTART + 8, RLENGTH - 9) "=" $2 }'
}
drops_delta() {  # drops_delta BEFORE AFTER: the reasons that grew, "reason +N"
  awk -v b="$1" -v a="$2" 'BEGIN { n = split(b, x, " "); for (i = 1; i <= n; i++) { split(x[i], kv, "="); old[kv[1]] = kv[2] }
    n = split(a, y, " "); for (i = 1; i <= n; i++) { split(y[i], kv, "="); d = kv[2] - old[kv[1]]; if (d > 0) { printf "%s%s +%d", sep, kv[1], d; sep = ", " } } }'
}
hub_bound() { in_ns hub 3 ss -Hlun "sport = :$port" 2>/dev/null | grep -q .; }

results=()  # "case value timed_out"
run_one() {  # run_one CASE RUN: one line; appends to results
  local kase=$1 r=$2 w
  w=$tmp/$kase-$r
  P=egwr$$-$r
  D=$w/lab
  mkdir -p "$w"
  if ! LAB_LOG_LEVEL=info timeout 60 "$lab_sh" up "$P" "$N" "$D" "$bin" >"$w/lab-up.log" 2>&1; then
    echo "run $kase #$r: gateway-lab.sh up failed: $(tail -n 3 "$w/lab-up.log" | tr '\n' ' ')"
    return 1
  fi
  netns_http_server 600 "$w/server.log" --http-port 80 --raw-port 7000
  if [[ $kase == statefile ]]; then
    # Set before the branch's first handshake reaches a hub that has it.
    lab stop-branch >/dev/null 2>&1
    lab stop-hub >/dev/null 2>&1
    echo "handshake_state_file: $D/hub.handshakes" >>"$D/hub.yaml"
    lab start-hub "$bin" >/dev/null 2>&1
    sleep 0.3
    lab start-branch "$bin" >/dev/null 2>&1
  fi
  if ! wait_for "$w/server.log" ready 10 || ! wait_for "$D/branch.log" "tunnel to hub up" 20; then
    echo "run $kase #$r: the test server or the tunnel did not start"
    return 1
  fi
  get_ok 5 || { echo "run $kase #$r: no GET through the fresh lab"; return 1; }

  # The branch's handshake captured at the hub: restart the branch.
  (exec timeout 120 ip netns exec "$P-hub" python3 "$tmp/capture.py" wan0 "$port" "$w/initiation" >"$w/capture.log" 2>&1) &
  cap_pid=$!
  for _ in $(seq 50); do [[ -f $w/initiation.ready ]] && break; sleep 0.1; done
  local n_up
  n_up=$(ups)
  lab stop-branch >/dev/null 2>&1
  lab start-branch "$bin" >/dev/null 2>&1
  if ! wait_for "$D/branch.log" "tunnel to hub up" 20 $((n_up + 1)); then
    echo "run $kase #$r: the branch's tunnel did not come up again"
    return 1
  fi
  for _ in $(seq 50); do [[ -f $w/initiation ]] && break; sleep 0.1; done
  kill "$cap_pid" 2>/dev/null
  wait "$cap_pid" 2>/dev/null
  cap_pid=
  [[ -f $w/initiation ]] || { echo "run $kase #$r: no initiation captured"; return 1; }
  local ok_before=0 i
  for i in 1 2 3 4 5; do get_ok 5 && { ok_before=1; break; }; sleep 0.5; done
  ((ok_before)) || { echo "run $kase #$r: no GET after the branch restart"; return 1; }
  # Packets from the hub to the branch: a new hub connection's packet numbers
  # start at 0, and a branch that (wrongly) kept its old connection drops
  # each one up to the greatest it had received as a duplicate.
  if ((warm_bytes > 0)); then
    local size
    size=$(in_ns client 60 curl -s -o /dev/null -w '%{size_download}' --max-time 50 "http://10.$N.2.2/bytes/$warm_bytes.bin?seed=7")
    [[ $size == "$warm_bytes" ]] || { echo "run $kase #$r: warm-up download got ${size:-nothing} of $warm_bytes bytes"; return 1; }
  fi
  sleep 1

  # The hub restarted; the replay as soon as its socket is bound.
  local t_stop t0 t_bound="" replay_note="" got="" tries=0 branch_lines replay_pid="" replay_port=""
  branch_lines=$(wc -l <"$D/branch.log")
  local drops_before drops_after
  drops_before=$(drops | tr '\n' ' ')
  (exec timeout 120 ip netns exec "$P-hub" python3 "$tmp/hslog.py" wan0 "$port" >"$w/handshakes.log" 2>&1) &
  cap_pid=$!
  if [[ $kase != plain ]]; then
    (exec timeout 120 ip netns exec "$P-branch" python3 "$tmp/replay.py" "10.$N.0.1" "10.$N.0.2" "$port" "$w/initiation" "$w/go" >"$w/replay.log" 2>&1) &
    replay_pid=$!
  fi
  wait_for "$w/handshakes.log" ready 5
  [[ -n $replay_pid ]] && wait_for "$w/replay.log" ready 5
  t_stop=$(now)
  lab stop-hub >/dev/null 2>&1
  t0=$(now)
  lab start-hub "$bin" >/dev/null 2>&1
  if [[ -n $replay_pid ]]; then
    for _ in $(seq 500); do hub_bound && { t_bound=$(now); break; }; sleep 0.01; done
    touch "$w/go"
    [[ -n $t_bound ]] || { echo "run $kase #$r: the new hub's socket was not bound within 5 s"; return 1; }
  fi
  while :; do
    tries=$((tries + 1))
    if get_ok 3; then got=$(since "$t0" "$(now)"); break; fi
    awk -v a="$t0" -v b="$(now)" -v l="$get_deadline_s" 'BEGIN { exit !(b - a >= l) }' && break
    sleep 0.1
  done
  sleep 0.5
  kill "$cap_pid" 2>/dev/null
  wait "$cap_pid" 2>/dev/null
  cap_pid=
  if [[ -n $replay_pid ]]; then
    wait "$replay_pid" 2>/dev/null
    local t_replay
    t_replay=$(awk '/^replayed/ { print $NF }' "$w/replay.log")
    replay_port=$(awk '/^replayed/ { print $6 }' "$w/replay.log")
    replay_note="; replay at +$(since "$t0" "${t_replay:-$t0}") s, $(grep -h -E '^(answered|not answered)' "$w/replay.log" | head -n1)"
  fi
  # The handshakes the hub's wan0 saw after t0 (the replay's port marked).
  local hs
  hs=$(awk -v t0="$t0" -v rp="${replay_port:-x}" '$1 ~ /^[0-9]/ && $1 >= t0 {
      printf "%s%s +%.2f", sep, ($2 == "initiation" ? "init" : "resp") (($3 == rp || $4 == rp) ? "(replay)" : ""), $1 - t0; sep = ", " }' "$w/handshakes.log")
  drops_after=$(drops | tr '\n' ' ')
  local timed_out=0
  [[ -z $got ]] && { got=$get_deadline_s; timed_out=1; }
  # What the branch said about its tunnel after the hub's restart.
  local branch_after
  branch_after=$(tail -n +$((branch_lines + 1)) "$D/branch.log" | grep -E "tunnel to hub" | head -n 4 | cut -c1-160 | tr '\n' '|')
  printf 'run %-9s #%d %-8s first GET after %6.2f s%s (hub stop took %s s, %d tries)%s\n' \
    "$kase" "$r" "$label" "$got" "$([[ $timed_out == 1 ]] && echo ' (none within 60 s)')" \
    "$(since "$t_stop" "$t0")" "$tries" "$replay_note"
  echo "      handshakes at the hub after its start: ${hs:-none}"
  echo "      branch log after the restart: ${branch_after:-none}"
  echo "      branch datagrams dropped meanwhile: $(drops_delta "$drops_before" "$drops_after")"
  results+=("$kase $got $timed_out")
  cp "$D/branch.log" "$D/hub.log" "$w/" 2>/dev/null
  return 0
}

echo "netns_replay_bench: gateway $bin ($label), cases: $cases, $runs runs each, $warm_bytes bytes through the tunnel before each restart, lab 10.$N.x.y, in $tmp"
for kase in $cases; do
  for r in $(seq 1 "$runs"); do
    run_one "$kase" "$r" || results+=("$kase failed 1")
    netns_http_server_stop
    netns_lab_down "$lab_sh" "$P" "$D"
    P=
  done
done

echo
printf '%-10s %-10s %5s %8s %8s %8s  %s\n' case binary runs median min max "seconds from the hub's start to the first GET"
for kase in $cases; do
  vals=() fails=0 tos=0
  for res in "${results[@]}"; do
    read -r k v t <<<"$res"
    [[ $k == "$kase" ]] || continue
    if [[ $v == failed ]]; then fails=$((fails + 1)); continue; fi
    vals+=("$v")
    ((t)) && tos=$((tos + 1))
  done
  if ((${#vals[@]} == 0)); then
    printf '%-10s %-10s %5d %8s %8s %8s  %s\n' "$kase" "$label" 0 - - - "($fails failed to set up)"
    continue
  fi
  read -r med mn mx < <(printf '%s\n' "${vals[@]}" | sort -g | awk '{ a[NR] = $1 } END {
    m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f %.2f %.2f\n", m, a[1], a[NR] }')
  note=""
  ((tos)) && note+="$tos with no GET within ${get_deadline_s} s; "
  ((fails)) && note+="$fails failed to set up"
  printf '%-10s %-10s %5d %8s %8s %8s  %s\n' "$kase" "$label" "${#vals[@]}" "$med" "$mn" "$mx" "$note"
done
echo "== netns_replay_bench: $((SECONDS - t_start)) s"
