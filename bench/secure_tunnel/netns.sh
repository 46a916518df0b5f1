#!/usr/bin/env bash
# The two-namespace lab of bench/secure_tunnel:
#   egwb-a (client side, 10.77.0.1/24 on egwb-va) <-veth, MTU 1500-> egwb-b (server side, 10.77.0.2/24 on egwb-vb)
#   netns.sh setup      tears down any leftover lab, then creates it
#   netns.sh teardown   kills every process still in either namespace (only
#                       this harness starts any there), deletes the namespaces
#                       (the veth pair goes with them) and wireguard-go's sockets
#   netns.sh offloads   prints the veth's offload state (ethtool -k), one line per feature
# Nothing on the veth is turned off: it is measured as a user would get it.
set -euo pipefail
A=egwb-a B=egwb-b VA=egwb-va VB=egwb-vb

teardown() {
  local ns pid
  for ns in $A $B; do
    ip netns list | grep -qw "^$ns" || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null || true; done
  done
  sleep 0.3
  for ns in $A $B; do
    ip netns list | grep -qw "^$ns" || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -f /var/run/wireguard/egwb-wga.sock /var/run/wireguard/egwb-wgb.sock
}

setup() {
  teardown
  ip netns add $A
  ip netns add $B
  ip link add $VA netns $A type veth peer name $VB netns $B
  ip -n $A link set $VA mtu 1500
  ip -n $B link set $VB mtu 1500
  ip -n $A addr add 10.77.0.1/24 dev $VA
  ip -n $B addr add 10.77.0.2/24 dev $VB
  for ns in $A $B; do ip -n $ns link set lo up; done
  ip -n $A link set $VA up
  ip -n $B link set $VB up
}

offloads() {
  if command -v ethtool >/dev/null; then
    ip netns exec $A ethtool -k $VA | grep -v '\[fixed\]' | sed 1d | tr -d '\t' | tr '\n' ';'
    echo
  else
    echo "ethtool not installed"
  fi
}

case ${1:-} in
  setup) setup ;;
  teardown) teardown ;;
  offloads) offloads ;;
  *) echo "usage: $0 setup|teardown|offloads" >&2; exit 2 ;;
esac
