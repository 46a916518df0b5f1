#!/usr/bin/env bash
# Transparent interception for real: a client, a gateway (router) and a server
# in three network namespaces. intercept_probe (tests/proxy/intercept_probe.cc)
# installs the gateway's nftables table in the gateway namespace and reports
# each intercepted connection's original destination. Checks: LAN TCP to the
# listed ports reaches the probe with the right original destination (IPv4 and
# IPv6), other ports and bypassed destinations reach the server, a direct
# connection to the listener is recognised, QUIC is refused, an admin's table
# is left alone, the table goes on SIGTERM, a crash leftover (SIGKILL) is
# replaced by the next install, the printed script gives the same ruleset,
# and without CAP_NET_ADMIN install says so. Never touches the root namespace.
#   usage: netns_intercept_test.sh path/to/intercept_probe   (exit 77: skipped)
set -euo pipefail
probe=$1
[[ $(id -u) -eq 0 ]] || { echo "netns_intercept_test: skipped, needs root"; exit 77; }
for tool in ip nft python3 timeout; do
  command -v $tool >/dev/null || { echo "netns_intercept_test: skipped, no $tool"; exit 77; }
done
tag=egwi-$$
C=$tag-c G=$tag-g S=$tag-s
table=egwi_$$
dir=$(mktemp -d)
root_tables=$(nft list tables)
cleanup() {
  for ns in $C $G $S; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- probe log:"; cat "$dir/probe.log" 2>/dev/null || true; exit 1; }

ip netns add $C || { echo "netns_intercept_test: skipped, cannot create namespaces"; exit 77; }
ip netns add $G
ip netns add $S
ip link add $tag-cg netns $C type veth peer name $tag-gc netns $G
ip link add $tag-sg netns $S type veth peer name $tag-gs netns $G
ip -n $C addr add 10.77.1.2/24 dev $tag-cg
ip -n $C addr add fd77:1::2/64 dev $tag-cg nodad
ip -n $G addr add 10.77.1.1/24 dev $tag-gc
ip -n $G addr add fd77:1::1/64 dev $tag-gc nodad
ip -n $G addr add 10.77.2.1/24 dev $tag-gs
ip -n $G addr add fd77:2::1/64 dev $tag-gs nodad
for a in 10.77.2.2/24 10.77.2.3/24; do ip -n $S addr add $a dev $tag-sg; done
for a in fd77:2::2/64 fd77:2::3/64; do ip -n $S addr add $a dev $tag-sg nodad; done
for ns in $C $G $S; do
  ip -n $ns link set lo up
  for dev in $(ip -n $ns -o link show type veth | awk -F'[ :@]+' '{print $2}'); do ip -n $ns link set $dev up; done
done
ip -n $C route add default via 10.77.1.1
ip -n $C -6 route add default via fd77:1::1
ip -n $S route add default via 10.77.2.1
ip -n $S -6 route add default via fd77:2::1
ip netns exec $G sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
# An admin's own table: ours must never touch it.
ip netns exec $G nft add table inet egwi_admin

# The server: TCP answers "server", UDP echoes (a socket per address, so the
# echo comes from the address the client sent to).
cat > "$dir/server.py" <<'PY'
import selectors, socket
sel = selectors.DefaultSelector()
for port in (80, 8080, 9999):
    s = socket.create_server(("::", port), family=socket.AF_INET6, dualstack_ipv6=True)
    sel.register(s, selectors.EVENT_READ, "tcp")
for address in ("10.77.2.2", "10.77.2.3", "fd77:2::2", "fd77:2::3"):
    for port in (443, 4433):
        u = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((address, port))
        sel.register(u, selectors.EVENT_READ, "udp")
print("ready", flush=True)
while True:
    for key, _ in sel.select():
        if key.data == "tcp":
            c, _ = key.fileobj.accept()
            c.sendall(b"server\n")
            c.close()
        else:
            data, peer = key.fileobj.recvfrom(2048)
            key.fileobj.sendto(data, peer)
PY
# The client: `tcp HOST PORT` prints the first line answered (or closed,
# refused, timeout); `udp HOST PORT` prints echo, refused or timeout.
cat > "$dir/client.py" <<'PY'
import socket, sys
kind, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    if kind == "tcp":
        s = socket.create_connection((host, port), timeout=3)
        print(s.makefile().readline().strip() or "closed")
    else:
        s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        s.connect((host, port))
        s.send(b"quic?")
        s.recv(2048)
        print("echo")
except ConnectionRefusedError:
    print("refused")
except (socket.timeout, TimeoutError):
    print("timeout")
PY
ip netns exec $S timeout 100 python3 "$dir/server.py" > "$dir/server.log" 2>&1 &
disown  # killed by cleanup, without a job report
for _ in $(seq 50); do grep -q ready "$dir/server.log" && break; sleep 0.1; done
grep -q ready "$dir/server.log" || fail "server did not start: $(cat "$dir/server.log")"

client() { timeout 10 ip netns exec $C python3 "$dir/client.py" "$@"; }
expect() {  # expect WANT tcp|udp HOST PORT [probe log line]
  local want=$1 got logged; shift 1
  got=$(client "$1" "$2" "$3")
  [[ $got == "$want" ]] || fail "$* answered '$got', expected '$want'"
  if [[ $# -ge 4 ]]; then
    logged=$(tail -n1 "$dir/probe.log")
    [[ $logged == "$4" ]] || fail "$1 $2 $3: probe logged '$logged', expected '$4'"
  fi
  echo "ok: $1 $2 $3 -> $want${4:+ ($4)}"
}
rules=(--table $table --lan 10.77.1.0/24,fd77:1::/64 --ports 80,8080 --redirect 15001
       --bypass 10.77.2.3,fd77:2::3 --reject-quic)
probe_pid=
start_probe() {  # the probe's own pid: ip netns exec execs it
  : > "$dir/probe.log"
  ip netns exec $G "$probe" serve "$@" >> "$dir/probe.log" 2>&1 &
  probe_pid=$!
  for _ in $(seq 50); do grep -q serving "$dir/probe.log" && return; sleep 0.1; done
  fail "probe did not start"
}
listing() { ip netns exec $G nft list table inet $table; }
has_table() { ip netns exec $G nft list tables | grep -qx "table inet $table"; }

echo "== intercepting"
expect server tcp 10.77.2.2 80  # before: straight through
start_probe "${rules[@]}"
expect probe tcp 10.77.2.2 80 "original 10.77.2.2:80"
expect probe tcp 10.77.2.2 8080 "original 10.77.2.2:8080"
expect probe tcp fd77:2::2 80 "original [fd77:2::2]:80"
expect probe tcp fd77:2::2 8080 "original [fd77:2::2]:8080"
expect server tcp 10.77.2.2 9999
expect server tcp fd77:2::2 9999
expect server tcp 10.77.2.3 80  # bypassed
expect server tcp fd77:2::3 80
expect closed tcp 10.77.1.1 15001 "self 10.77.1.1:15001"  # to the listener itself
expect closed tcp fd77:1::1 15001 "self [fd77:1::1]:15001"
expect refused tcp 10.77.1.1 80  # a local address: not redirected (nothing listens there)
expect refused udp 10.77.2.2 443  # QUIC: rejected by the gateway
expect refused udp fd77:2::2 443
expect echo udp 10.77.2.2 4433
expect echo udp fd77:2::2 4433
expect echo udp 10.77.2.3 443  # bypassed
expect echo udp fd77:2::3 443
installed=$(listing)

echo "== SIGTERM removes the table"
kill -TERM $probe_pid
timeout 5 tail --pid=$probe_pid -f /dev/null || fail "probe did not exit on SIGTERM"
wait $probe_pid || fail "probe exited non-zero on SIGTERM"
grep -q removed "$dir/probe.log" || fail "probe did not remove the table"
! has_table || fail "table still there after SIGTERM"
expect server tcp 10.77.2.2 80
expect echo udp 10.77.2.2 443

echo "== a crash leftover is replaced"
start_probe --table $table --lan 10.77.1.0/24 --ports 9999 --redirect 15001
expect probe tcp 10.77.2.2 9999 "original 10.77.2.2:9999"
kill -KILL $probe_pid
wait $probe_pid 2>/dev/null || true
has_table || fail "SIGKILL should leave the table behind"
expect refused tcp 10.77.2.2 9999  # the leftover redirects to a listener that is gone
timeout 10 ip netns exec $G "$probe" install "${rules[@]}" || fail "install over the leftover failed"
[[ $(listing) == "$installed" ]] || fail "leftover not replaced exactly: $(listing)"
expect server tcp 10.77.2.2 9999
echo "ok: replaced"

echo "== the printed script is the same ruleset"
"$probe" print "${rules[@]}" > "$dir/rules.nft"
timeout 10 ip netns exec $G nft -f "$dir/rules.nft" || fail "nft -f of the printed script failed"
[[ $(listing) == "$installed" ]] || fail "script and install differ: $(listing)"
echo "ok: same"

echo "== remove is idempotent"
timeout 10 ip netns exec $G "$probe" remove --table $table || fail "remove failed"
! has_table || fail "table still there after remove"
timeout 10 ip netns exec $G "$probe" remove --table $table || fail "second remove failed"
! ip netns exec $G "$probe" exists --table $table || fail "exists after remove"
echo "ok: removed"

if command -v setpriv >/dev/null; then
  echo "== without CAP_NET_ADMIN"
  if out=$(timeout 10 ip netns exec $G setpriv --bounding-set=-net_admin --inh-caps=-net_admin \
           "$probe" install "${rules[@]}" 2>&1); then
    fail "install without CAP_NET_ADMIN succeeded"
  fi
  grep -q "need CAP_NET_ADMIN" <<<"$out" || fail "unhelpful error: $out"
  ! has_table || fail "table installed without CAP_NET_ADMIN"
  echo "ok: $(grep "need CAP_NET_ADMIN" <<<"$out")"
fi

ip netns exec $G nft list tables | grep -qx "table inet egwi_admin" || fail "the admin's table is gone"
[[ $(nft list tables) == "$root_tables" ]] || fail "the root namespace's tables changed"
echo "netns_intercept_test: ok"
