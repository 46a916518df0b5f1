#!/usr/bin/env bash
# The containers' scripts (docker/*.sh) with the built gateway, in network
# namespaces laid out like docker/docker-compose.yml's networks, so the
# deployment cannot rot while no Docker engine runs here:
#
#   client ──lan── branch ══ tunnel (wan) ══ hub ──dc── server
#   10.95.1.10     10.95.1.2 | 10.95.0.2  10.95.0.3 | 10.95.2.2   10.95.2.10
#
# The gateways run docker/entrypoint.sh as an unprivileged user (nobody) whose
# only capability is CAP_NET_ADMIN, from a file capability on a copy of the
# binary, with the bounding set cut to it: what the image (setcap, USER egw)
# and the compose files (cap_drop ALL, cap_add NET_ADMIN) give the container.
# The volumes are directories. Asserts, one PASS/FAIL/SKIP line each:
#   1  first start: each gateway generates its key (mode 600, its user's),
#      logs its public key, the keys cross through the exchange directory
#   2  the health check (the Dockerfile's HEALTHCHECK command) passes, and
#      still passes with a typo saved in the config on disk (not reloaded:
#      it asks the running gateway)
#   3  client.sh gets web-server.sh's page through the tunnel (the branch has
#      no route to the server; the server sees the hub's address)
#   4  every metric and label docker/grafana-dashboard.json queries is in the
#      branch's live /metrics
#   5  wan-emulator.sh puts netem on the branch's WAN side, a page still comes,
#      and SIGTERM removes it (without sch_netem, a stand-in tc records it)
#   6  second start: the keys are reused (same public keys, none generated,
#      `entrypoint.sh pubkey` prints the same); the branch this time from a
#      mounted config (EGW_CONFIG exists), whose private_key_file the
#      entrypoint reads; a page again
#   7  SIGTERM: both gateways exit 0 and the branch's nftables table is gone
#   8  a hub without EGW_ALLOW (or a branch without EGW_LAN) exits at once,
#      naming the variable, and runs no gateway
#   9  client.sh and web-server.sh as process 1 (of a PID namespace, as in a
#      container) end within 2 s of SIGTERM (not docker stop's 10 s + SIGKILL)
# Exit 1 if any failed, 77 if it cannot run here (not root, no namespaces).
#
#   usage: entrypoint_netns_test.sh [path/to/ensemble-gw]   (default build/ensemble-gw)
#   EGW_DOCKER_TEST_KEEP=1   keep the directory (volumes, logs)
#   EGW_DOCKER_TEST_NET=95   the networks' address number (10.NET.x.y)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tests/support/netns_test.sh"
docker_dir=$root/docker
bin=${1:-$root/build/ensemble-gw}
N=${EGW_DOCKER_TEST_NET:-95}
P=egwd$$
limit=150
t_start=$SECONDS

netns_require entrypoint_netns_test ip nft tc wg curl python3 setpriv timeout unshare
[[ -x $bin ]] || { echo "entrypoint_netns_test: no gateway binary at $bin"; exit 1; }

tmp=$(mktemp -d /tmp/egw-dockertest.XXXXXX)
chmod 755 "$tmp"
declare -A pid=()
cleanup() {
  trap - EXIT INT TERM
  netns_watchdog_stop
  local p
  for p in "${pid[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 0.5
  netns_delete "$P" client branch hub server
  netns_keep_or_remove "${EGW_DOCKER_TEST_KEEP:-0}" "$tmp"
}
trap cleanup EXIT
trap 'echo "FAIL: interrupted"; exit 1' INT TERM

# Bounded: past $limit s the watchdog ends the test (ctest allows 180 s).
netns_watchdog "$limit" "FAIL: the test ran out of its $limit s"

log_tail() {
  local f
  for f in "$@"; do echo "--- $(basename "$f") (last 15 lines)"; tail -n 15 "$f" 2>/dev/null | sed 's/^/    /'; done
}

# ------------------------------------------------------------------ the networks
for role in client branch hub server; do
  ip netns add "$P-$role"
  in_ns $role 5 ip link set lo up
done
link() {  # link NS_A IF ADDR_A NS_B ADDR_B: one compose network, two of its members
  ip link add "$2" netns "$P-$1" type veth peer name "$2" netns "$P-$4"
  in_ns "$1" 5 ip addr add "$3" dev "$2"
  in_ns "$4" 5 ip addr add "$5" dev "$2"
  in_ns "$1" 5 ip link set "$2" up
  in_ns "$4" 5 ip link set "$2" up
}
link client lan0 10.$N.1.10/24 branch 10.$N.1.2/24
link branch wan0 10.$N.0.2/24 hub 10.$N.0.3/24
link hub dc0 10.$N.2.2/24 server 10.$N.2.10/24
in_ns branch 5 sysctl -qw net.ipv4.ip_forward=1  # compose: sysctls

# ------------------------------------------------------------------ the "image"
# The binary as in the image: a copy with cap_net_admin as its file capability.
run_as=nobody
mkdir -p "$tmp/bin"
cp "$bin" "$tmp/bin/ensemble-gw"
chmod 755 "$tmp/bin" "$tmp/bin/ensemble-gw"
if command -v setcap >/dev/null && setcap cap_net_admin=ep "$tmp/bin/ensemble-gw" 2>/dev/null; then
  user_note="as $run_as with only CAP_NET_ADMIN (file capability, bounding set cut to it)"
else
  run_as=root
  user_note="as root (no setcap here: the container's user and capabilities are not mimicked)"
fi
for role in branch hub; do
  mkdir -p "$tmp/$role/etc" "$tmp/$role/cache" "$tmp/$role/run"
done
mkdir -p "$tmp/exchange" "$tmp/www"
chown -R "$run_as" "$tmp/branch" "$tmp/hub" "$tmp/exchange"
echo "networks $P-* (10.$N.x.y), volumes in $tmp, gateways $user_note"

# start_gateway ROLE TAG [VAR=VALUE...]: entrypoint.sh in ROLE's namespace with
# the compose file's environment for ROLE; its log in $tmp/ROLE-TAG.log.
# Exec all the way down (ip, setpriv, env, the entrypoint's exec), so the
# background pid is the gateway's.
start_gateway() {
  local role=$1 tag=$2
  shift 2
  local as=()
  if [[ $run_as != root ]]; then
    as=(setpriv --reuid="$run_as" --regid=nogroup --clear-groups
      --bounding-set=-all,+net_admin --inh-caps=-all)
  fi
  local common=(EGW_BIN="$tmp/bin/ensemble-gw" EGW_CONFIG="$tmp/$role/etc/ensemble-gw.yaml"
    EGW_KEY="$tmp/$role/etc/private.key" EGW_STATE_DIR="$tmp/$role/cache" EGW_RUN_DIR="$tmp/$role/run"
    EGW_EXCHANGE="$tmp/exchange" EGW_EXCHANGE_WAIT_S=30)
  local compose
  if [[ $role == branch ]]; then
    compose=(EGW_ROLE=branch EGW_HUB_ENDPOINT=10.$N.0.3:51900 EGW_LAN=10.$N.1.0/24
      "EGW_TICKETS=html=12 script=6 image=3 bulk=1")
  else
    compose=(EGW_ROLE=hub EGW_ALLOW=10.$N.2.0/24:80,443)
  fi
  ip netns exec "$P-$role" "${as[@]}" env -i PATH="$PATH" "${common[@]}" "${compose[@]}" "$@" \
    "$docker_dir/entrypoint.sh" >"$tmp/$role-$tag.log" 2>&1 &
  pid[$role]=$!
}
declare -A stopped=()
stop_gateway() {  # stop_gateway ROLE: SIGTERM, wait up to 20 s; its exit status in stopped[ROLE]
  local role=$1 p=${pid[$1]:-} i
  stopped[$role]=none
  [[ -n $p ]] || return 0
  kill -TERM "$p" 2>/dev/null
  for ((i = 0; i < 200; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  if kill -KILL "$p" 2>/dev/null; then stopped[$role]=killed; else wait "$p"; stopped[$role]=$?; fi
  unset "pid[$role]"
}
# The Dockerfile's HEALTHCHECK command, its paths made ours.
mapfile -t health_cmd < <(sed -n -E 's/^ *CMD \[(.*)\]$/\1/p' "$docker_dir/Dockerfile" | tr ',' '\n' | sed -E 's/^ *"(.*)" *$/\1/')
health() {  # health ROLE: the image's HEALTHCHECK command, as the gateway's user
  local as=() cmd=("${health_cmd[@]/#ensemble-gw/$tmp/bin/ensemble-gw}")
  cmd=("${cmd[@]/#\/run\/ensemble-gw/$tmp/$1/run}")
  [[ $run_as != root ]] && as=(setpriv --reuid="$run_as" --regid=nogroup --clear-groups --bounding-set=-all,+net_admin)
  timeout 10 "${as[@]}" "${cmd[@]}"
}
fetch() {  # fetch TAG: client.sh once, as the compose file runs it; output in $tmp/client-TAG.log
  in_ns client 40 env -i PATH="$PATH" EGW_GATEWAY=10.$N.1.2 EGW_URL=http://10.$N.2.10/ \
    EGW_FETCH_EVERY=0 EGW_FETCH_TRIES=10 "$docker_dir/client.sh" >"$tmp/client-$1.log" 2>&1
}
page_ok() { grep -q "Hello through ensemble-gw" "$tmp/client-$1.log"; }
pubkey_in_log() { sed -n -E "s/.*entrypoint: $1 public key: (.*)/\1/p" "$2" | head -n1; }

# ------------------------------------------------------------------ 1. first start
in_ns server 170 env -i PATH="$PATH" EGW_WWW="$tmp/www" EGW_HTTP_PORT=80 "$docker_dir/web-server.sh" \
  >"$tmp/server.log" 2>&1 &
pid[server]=$!
start_gateway hub 1
start_gateway branch 1
if ! wait_for "$tmp/branch-1.log" "tunnel to hub up" 30; then
  line FAIL "1 first start" "the tunnel did not come up within 30 s"
  log_tail "$tmp/branch-1.log" "$tmp/hub-1.log"
  exit 1
fi
problems=()
for role in branch hub; do
  key=$tmp/$role/etc/private.key
  grep -q "generated a private key in $key" "$tmp/$role-1.log" || problems+=("$role: no 'generated' line")
  [[ $(stat -c '%a %U' "$key" 2>/dev/null) == "600 $run_as" ]] ||
    problems+=("$role key: $(stat -c '%a %U' "$key" 2>&1), want 600 $run_as")
  pub=$(wg pubkey <"$key")
  [[ $(pubkey_in_log $role "$tmp/$role-1.log") == "$pub" ]] || problems+=("$role: public key not logged")
  [[ $(cat "$tmp/exchange/$role.pub" 2>/dev/null) == "$pub" ]] || problems+=("$role.pub not in the exchange")
  declare "pub_$role=$pub"
done
grep -q "public_key: $pub_hub" "$tmp/branch/run/ensemble-gw.yaml" || problems+=("the branch's config lacks the hub's key")
# The gateway itself: its user, and CAP_NET_ADMIN (bit 12) its only capability.
caps=$(awk '/^Uid:/ {u = $2} /^CapEff:/ {e = $2} /^CapBnd:/ {b = $2} END {print u, e, b}' "/proc/${pid[branch]}/status")
if [[ $run_as != root && $caps != "$(id -u "$run_as") 0000000000001000 0000000000001000" ]]; then
  problems+=("the branch gateway runs with uid, CapEff, CapBnd $caps")
fi
if ((${#problems[@]} == 0)); then
  line PASS "1 first start" "keys generated (600, $run_as), public keys logged and exchanged; the gateway: uid, CapEff, CapBnd $caps; tunnel up after $((SECONDS - t_start)) s"
else
  line FAIL "1 first start" "${problems[*]}"
fi

# ------------------------------------------------------------------ 2. health check
# A typo saved in the config the branch runs, not reloaded: still healthy.
effective=$tmp/branch/run/ensemble-gw.yaml
cp "$effective" "$tmp/effective.good"
echo "scheduler: [unclosed" >>"$effective"
if out=$(health branch 2>&1) && grep -q "^hub .* up" <<<"$out" && health hub >/dev/null 2>&1 &&
  ! "$tmp/bin/ensemble-gw" check -c "$effective" >/dev/null 2>&1; then
  line PASS "2 health check" "'${health_cmd[*]}': exit 0 for both, the branch's with a typo in its config on disk; '$(grep -m1 "^hub " <<<"$out" | tr -s ' ')'"
else
  line FAIL "2 health check" "'${health_cmd[*]}' (a typo on disk): $(head -n 3 <<<"$out" | tr '\n' ' ')"
fi
cp "$tmp/effective.good" "$effective"

# ------------------------------------------------------------------ 3. a page
# The hub keeps its peers' handshake timestamps in its state volume (a
# replayed initiation stays refused after a restart).
if fetch 1 && page_ok 1 && grep -q "^10\\.$N\\.2\\.2 .*\"GET / HTTP" "$tmp/server.log" &&
   [[ -s $tmp/hub/cache/handshakes ]]; then
  line PASS "3 page through the tunnel" "client.sh: '$(grep -m1 "<h1>" "$tmp/client-1.log")'; the server saw $(grep -m1 -o "^10\\.$N\\.2\\.2 .*\"GET / HTTP/1.1\"" "$tmp/server.log")"
else
  line FAIL "3 page through the tunnel" "$(tail -n 3 "$tmp/client-1.log" | tr '\n' ' '); hub state: $(ls "$tmp/hub/cache" 2>&1 | tr '\n' ' ')"
  log_tail "$tmp/branch-1.log" "$tmp/hub-1.log" "$tmp/server.log"
fi

# ------------------------------------------------------------------ 4. the dashboard's metrics
sleep 1.2  # the gateway publishes its snapshot once a second
if in_ns branch 10 curl -sS --max-time 5 -o "$tmp/metrics.txt" http://127.0.0.1:9470/metrics &&
  out=$(python3 "$here/dashboard_check.py" "$docker_dir/grafana-dashboard.json" --scrape "$tmp/metrics.txt" 2>&1); then
  line PASS "4 dashboard metrics" "${out#dashboard_check: } of the branch"
else
  line FAIL "4 dashboard metrics" "$(tr '\n' ' ' <<<"${out:-no scrape}")"
fi

# ------------------------------------------------------------------ 5. the WAN emulator
# Without sch_netem (kernels without modules) a stand-in `tc` records what the
# script asks for, so its interface lookup and its cleanup still run.
wan_path=$PATH
wan_note=""
if in_ns branch 5 tc qdisc add dev lo root netem delay 1ms 2>/dev/null; then
  in_ns branch 5 tc qdisc del dev lo root
  qdisc_of() { in_ns branch 5 tc qdisc show dev wan0; }
else
  mkdir -p "$tmp/fake-tc"
  cat >"$tmp/fake-tc/tc" <<EOF
#!/bin/sh
case "\$*" in
  "qdisc replace dev "*) echo "qdisc netem 8001: dev \$4 root \${*#* netem }" >"$tmp/fake-tc/qdisc" ;;
  "qdisc del dev "*) rm -f "$tmp/fake-tc/qdisc" ;;
esac
EOF
  chmod +x "$tmp/fake-tc/tc"
  wan_path=$tmp/fake-tc:$PATH
  wan_note=" (stand-in tc: no netem in this kernel)"
  qdisc_of() { cat "$tmp/fake-tc/qdisc" 2>/dev/null; }
fi
(exec timeout 60 ip netns exec "$P-branch" env -i PATH="$wan_path" EGW_WAN_PEER=10.$N.0.3 EGW_WAN_DELAY=20ms \
  "$docker_dir/wan-emulator.sh" >"$tmp/wan.log" 2>&1) &
pid[wan]=$!
wait_for "$tmp/wan.log" "netem" 10
qdisc=$(qdisc_of)
fetch wan
kill -TERM "${pid[wan]}"
wait "${pid[wan]}"
unset "pid[wan]"
after=$(qdisc_of)
if grep -q "dev wan0 .*delay 20ms" <<<"$qdisc" && page_ok wan && [[ -z $after ]]; then
  line PASS "5 WAN emulator$wan_note" "'$(head -n1 "$tmp/wan.log")'; a page through it; removed on SIGTERM"
else
  line FAIL "5 WAN emulator$wan_note" "qdisc '$qdisc'; page: $(tail -n1 "$tmp/client-wan.log"); after: '$after'; $(tr '\n' ' ' <"$tmp/wan.log")"
fi

# ------------------------------------------------------------------ 6. second start
stop_gateway branch
stop_gateway hub
first_stop="${stopped[branch]} ${stopped[hub]}"
# The branch again from a "mounted" config: the one it wrote, without EGW_KEY
# (the entrypoint then takes the config's private_key_file).
cp "$tmp/branch/run/ensemble-gw.yaml" "$tmp/branch/etc/ensemble-gw.yaml"
chown "$run_as" "$tmp/branch/etc/ensemble-gw.yaml"
problems=()
# `pubkey` (what a deployment runs before its first start) prints the same key.
as=()
[[ $run_as != root ]] && as=(setpriv --reuid="$run_as" --regid=nogroup --clear-groups)
got=$(timeout 10 "${as[@]}" env -i PATH="$PATH" EGW_CONFIG="$tmp/branch/etc/ensemble-gw.yaml" \
  EGW_RUN_DIR="$tmp/branch/run" EGW_STATE_DIR="$tmp/branch/cache" "$docker_dir/entrypoint.sh" pubkey 2>&1)
[[ $got == "$pub_branch" ]] || problems+=("entrypoint.sh pubkey printed '$got'")
start_gateway hub 2
start_gateway branch 2 EGW_KEY=
wait_for "$tmp/branch-2.log" "tunnel to hub up" 30 || problems+=("the tunnel did not come up within 30 s")
for role in branch hub; do
  ! grep -q "generated a private key" "$tmp/$role-2.log" || problems+=("$role generated a new key")
  want=pub_$role
  [[ $(pubkey_in_log $role "$tmp/$role-2.log") == "${!want}" ]] || problems+=("$role's public key changed")
done
grep -q "using the mounted config $tmp/branch/etc/ensemble-gw.yaml" "$tmp/branch-2.log" ||
  problems+=("the branch did not use the mounted config")
if ((${#problems[@]} == 0)) && fetch 2 && page_ok 2; then
  line PASS "6 second start" "keys reused (same public keys, none generated; 'entrypoint.sh pubkey' too), the branch from a mounted config; a page again"
else
  line FAIL "6 second start" "${problems[*]} $(tail -n 2 "$tmp/client-2.log" 2>/dev/null | tr '\n' ' ')"
  log_tail "$tmp/branch-2.log" "$tmp/hub-2.log"
fi

# ------------------------------------------------------------------ 7. stop
stop_gateway branch
stop_gateway hub
if [[ "$first_stop ${stopped[branch]} ${stopped[hub]}" == "0 0 0 0" ]] &&
  ! in_ns branch 5 nft list table inet ensemble_gw >/dev/null 2>&1; then
  line PASS "7 SIGTERM" "both gateways exited 0 (twice), the branch's nftables table is gone"
else
  line FAIL "7 SIGTERM" "exit statuses (branch hub, twice): $first_stop ${stopped[branch]} ${stopped[hub]}; table: $(in_ns branch 5 nft list tables 2>&1 | tr '\n' ' ')"
fi

# ------------------------------------------------------------------ 8. a variable missing
problems=()
for role in hub branch; do
  missing=$([[ $role == hub ]] && echo EGW_ALLOW || echo EGW_LAN)
  peer=$([[ $role == hub ]] && echo "$pub_branch" || echo "$pub_hub")
  mkdir -p "$tmp/missing-$role"
  chown "$run_as" "$tmp/missing-$role"
  t0=$SECONDS
  in_ns $role 10 "${as[@]}" env -i PATH="$PATH" EGW_BIN="$tmp/bin/ensemble-gw" EGW_ROLE=$role \
    EGW_CONFIG="$tmp/missing-$role/none.yaml" EGW_KEY="$tmp/missing-$role/private.key" \
    EGW_RUN_DIR="$tmp/missing-$role" EGW_STATE_DIR="$tmp/missing-$role" EGW_HUB_ENDPOINT=10.$N.0.3:51900 \
    EGW_PEER_PUBLIC_KEY="$peer" EGW_METRICS_LISTEN= \
    "$docker_dir/entrypoint.sh" >"$tmp/missing-$role.log" 2>&1
  rc=$?
  ((rc != 0 && rc != 124)) || problems+=("$role without $missing: exit $rc after $((SECONDS - t0)) s")
  grep -q "$missing .* is required" "$tmp/missing-$role.log" || problems+=("$role: no '$missing is required' line")
  ! grep -q "gateway started" "$tmp/missing-$role.log" || problems+=("$role: a gateway started")
done
if ((${#problems[@]} == 0)); then
  line PASS "8 required variables" "'$(grep -m1 -o "EGW_ALLOW .*" "$tmp/missing-hub.log")': exit, no gateway (same for a branch without EGW_LAN)"
else
  line FAIL "8 required variables" "${problems[*]}"
fi

# ------------------------------------------------------------------ 9. process 1 and SIGTERM
# stop_pid1 NAME LOG LINE CMD...: CMD as process 1 of a new PID namespace
# (unshare's child); once LINE is in LOG, SIGTERM to it; "NAME N ms" or why not.
stop_pid1() {
  local name=$1 log=$2 text=$3 u p t0 i
  shift 3
  unshare --pid --fork "$@" >"$log" 2>&1 &
  u=$!
  wait_for "$log" "$text" 30 || { echo "$name: no '$text'"; kill -KILL "$u"; return 1; }
  p=$(ps -o pid= --ppid "$u" | tr -d ' ')
  t0=$(date +%s%N)
  kill -TERM "$p"
  for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
  local ms=$((($(date +%s%N) - t0) / 1000000))
  if kill -0 "$p" 2>/dev/null; then kill -KILL "$p"; wait "$u"; echo "$name still running after $ms ms"; return 1; fi
  wait "$u"
  echo "$name $ms ms"
}
r1=$(stop_pid1 web-server.sh "$tmp/pid1-server.log" "Serving HTTP" ip netns exec "$P-server" \
  env -i PATH="$PATH" EGW_WWW="$tmp/www" EGW_HTTP_PORT=8080 "$docker_dir/web-server.sh")
ok1=$?
# The gateways are gone: the client retries (curl, then a 2 s sleep) when stopped.
r2=$(stop_pid1 client.sh "$tmp/pid1-client.log" "not yet" ip netns exec "$P-client" \
  env -i PATH="$PATH" EGW_GATEWAY=10.$N.1.2 EGW_URL=http://10.$N.2.10/ EGW_FETCH_EVERY=30 "$docker_dir/client.sh")
ok2=$?
if ((ok1 == 0 && ok2 == 0)); then
  line PASS "9 process 1 stops on SIGTERM" "$r1, $r2"
else
  line FAIL "9 process 1 stops on SIGTERM" "$r1; $r2"
fi

netns_summary entrypoint_netns_test
exit $failed
