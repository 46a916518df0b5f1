#!/usr/bin/env bash
# The gateway's lab on one machine: four network namespaces, two gateways.
#
#   client ──LAN── branch gateway ──WAN── hub gateway ──DC── server
#   P-client       P-branch               P-hub              P-server
#   10.N.1.2       10.N.1.1 | 10.N.0.1    10.N.0.2 | 10.N.2.1 10.N.2.2
#   fdN:1::2       fdN:1::1 | fdN:0::1    fdN:0::2 | fdN:2::1 fdN:2::2
#
# The client routes everything via the branch, the server via the hub, and
# the branch reaches the server's network via the hub, so traffic the
# gateway does not carry (UDP, ICMP) is routed as before. Offloads are off
# on every veth (queues and captures then see real packets).
#
#   scripts/gateway-lab.sh up   PREFIX NET DIR [BINARY]   namespaces, keys and configs in DIR, gateways started
#   scripts/gateway-lab.sh down PREFIX DIR               gateways stopped, namespaces deleted
#   scripts/gateway-lab.sh start-hub|stop-hub|start-branch|stop-branch PREFIX DIR [BINARY]
#
# PREFIX names the namespaces (PREFIX-client ...), NET (1..250) the
# addresses (10.NET.x.y), so tests can run labs side by side. Needs root.
set -euo pipefail

cmd=${1:?usage: gateway-lab.sh up|down|start-hub|stop-hub|start-branch|stop-branch PREFIX ...}
prefix=${2:?PREFIX}
here=$(cd "$(dirname "$0")/.." && pwd)

ns() { echo "$prefix-$1"; }
in_ns() { local n=$1; shift; ip netns exec "$(ns "$n")" "$@"; }

link() {  # link NS_A IF_A ADDR_A NS_B IF_B ADDR_B (v4/24 and v6/64 each)
  local a=$1 ia=$2 b=$4 ib=$5
  ip link add "$ia" netns "$(ns "$a")" type veth peer name "$ib" netns "$(ns "$b")"
  in_ns "$a" ip addr add "$3" dev "$ia"
  in_ns "$b" ip addr add "$6" dev "$ib"
  for side in "$a $ia" "$b $ib"; do
    set -- $side
    in_ns "$1" ethtool -K "$2" tso off gso off gro off >/dev/null 2>&1 || true
    in_ns "$1" ip link set "$2" up
  done
}

start_gateway() {  # start_gateway ROLE DIR BINARY
  local role=$1 dir=$2 bin=$3
  # A simple command (not the in_ns function), so $! is the gateway itself
  # and stop_gateway's signals reach it.
  ip netns exec "$(ns "$role")" "$bin" run -c "$dir/$role.yaml" >>"$dir/$role.log" 2>&1 &
  echo $! >"$dir/$role.pid"
}

stop_gateway() {  # stop_gateway ROLE DIR [SIGNAL]
  local role=$1 dir=$2 signal=${3:-TERM}
  [[ -f $dir/$role.pid ]] || return 0
  local pid
  pid=$(cat "$dir/$role.pid")
  kill -"$signal" "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$dir/$role.pid"
}

write_configs() {  # write_configs NET DIR
  local n=$1 dir=$2
  umask 077
  for role in branch hub; do wg genkey >"$dir/$role.key"; done
  local branch_pub hub_pub
  branch_pub=$(wg pubkey <"$dir/branch.key")
  hub_pub=$(wg pubkey <"$dir/hub.key")
  cat >"$dir/branch.yaml" <<EOF
role: branch
private_key_file: $dir/branch.key
peers:
  - name: hub
    public_key: $hub_pub
    endpoint: 10.$n.0.2:51900
interception:
  mode: nftables
  listen: "[::]:15001"
  lan: [10.$n.1.0/24, "fd$n:1::/64"]
  reject_quic: true
  table: ensemble_gw
temporal_cache:
  file: $dir/branch.cache
metrics_listen: 127.0.0.1:9470
status_socket: $dir/branch.sock
log_level: ${LAB_LOG_LEVEL:-info}
EOF
  cat >"$dir/hub.yaml" <<EOF
role: hub
private_key_file: $dir/hub.key
listen: 0.0.0.0:51900
peers:
  - name: branch
    public_key: $branch_pub
    allow: [10.$n.2.0/24, "[fd$n:2::]/64"]
temporal_cache:
  file: $dir/hub.cache
metrics_listen: 127.0.0.1:9470
status_socket: $dir/hub.sock
log_level: ${LAB_LOG_LEVEL:-info}
EOF
}

case "$cmd" in
  up)
    n=${3:?NET (1..250)}
    dir=${4:?DIR}
    bin=${5:-$here/build/ensemble-gw}
    mkdir -p "$dir"
    for role in client branch hub server; do
      ip netns add "$(ns $role)"
      in_ns $role ip link set lo up
    done
    link client lan0 10.$n.1.2/24 branch lan0 10.$n.1.1/24
    link branch wan0 10.$n.0.1/24 hub wan0 10.$n.0.2/24
    link hub dc0 10.$n.2.1/24 server dc0 10.$n.2.2/24
    in_ns client ip -6 addr add fd$n:1::2/64 dev lan0 nodad
    in_ns branch ip -6 addr add fd$n:1::1/64 dev lan0 nodad
    in_ns branch ip -6 addr add fd$n:0::1/64 dev wan0 nodad
    in_ns hub ip -6 addr add fd$n:0::2/64 dev wan0 nodad
    in_ns hub ip -6 addr add fd$n:2::1/64 dev dc0 nodad
    in_ns server ip -6 addr add fd$n:2::2/64 dev dc0 nodad
    in_ns client ip route add default via 10.$n.1.1
    in_ns client ip -6 route add default via fd$n:1::1
    in_ns branch ip route add 10.$n.2.0/24 via 10.$n.0.2
    in_ns branch ip -6 route add fd$n:2::/64 via fd$n:0::2
    in_ns server ip route add default via 10.$n.2.1
    in_ns server ip -6 route add default via fd$n:2::1
    for role in branch hub; do
      in_ns $role sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
    done
    write_configs "$n" "$dir"
    start_gateway hub "$dir" "$bin"
    start_gateway branch "$dir" "$bin"
    ;;
  down)
    dir=${3:?DIR}
    for role in branch hub; do stop_gateway $role "$dir"; done
    for role in client branch hub server; do ip netns del "$(ns $role)" 2>/dev/null || true; done
    ;;
  start-hub | start-branch)
    dir=${3:?DIR}
    start_gateway "${cmd#start-}" "$dir" "${4:-$here/build/ensemble-gw}"
    ;;
  stop-hub | stop-branch)
    dir=${3:?DIR}
    stop_gateway "${cmd#stop-}" "$dir" "${4:-TERM}"
    ;;
  *)
    echo "gateway-lab.sh: unknown command $cmd" >&2
    exit 2
    ;;
esac
