#!/usr/bin/env bash
# Routes a namespace's traffic between two interfaces through wanem's TUN
# devices: what arrives on IF_A goes into TUN_A (wanem's a2b link), what
# arrives on IF_B into TUN_B (b2a); what wanem writes to a TUN the kernel
# receives from it and routes on by the main table (to the other interface).
#
#   side A -> IF_A -> [rule iif IF_A: table T_A, default dev TUN_A] -> TUN_A -> wanem a2b
#          -> TUN_B -> main table -> IF_B -> side B          (b2a: the same mirrored)
#
#   wan-ns.sh up   NS IF_A IF_B [TUN_A TUN_B [TABLE_A]]   (defaults: wanem-a wanem-b 100; TABLE_B = TABLE_A + 1)
#   wan-ns.sh down NS IF_A IF_B [TUN_A TUN_B [TABLE_A]]
#   then: ip netns exec NS wanem --dev-a TUN_A --dev-b TUN_B --a2b ... --b2a ...
#
# `up` creates the TUN devices persistent (ip tuntap), so wanem can start
# before or after it, and be restarted, without touching the routing; while
# no wanem is attached the link is down (packets into a TUN are dropped). It
# also turns IPv4/IPv6 forwarding on in NS, turns rp_filter off (a packet
# from side A comes back in on TUN_B, not the interface its source routes
# to), and turns TSO/GSO/GRO off on IF_A and IF_B, so wanem sees the packets
# as sent, not merged into 64 KB super-packets. The far ends of the veths
# live in other namespaces: the caller turns their offloads off
# (ethtool -K DEV tso off gso off gro off in each) so senders emit wire-size
# packets too. `down` removes the rules, routes and TUN devices (idempotent).
# Needs root, iproute2 and ethtool.
set -uo pipefail

usage() { echo "usage: $0 up|down NS IF_A IF_B [TUN_A TUN_B [TABLE_A]]" >&2; exit 2; }
[[ $# -ge 4 ]] || usage
cmd=$1 ns=$2 if_a=$3 if_b=$4 tun_a=${5:-wanem-a} tun_b=${6:-wanem-b} table_a=${7:-100}
table_b=$((table_a + 1))
in_ns() { ip netns exec "$ns" "$@"; }

case $cmd in
  up)
    set -e
    in_ns sysctl -qw net.ipv4.ip_forward=1
    in_ns sysctl -qw net.ipv6.conf.all.forwarding=1 2>/dev/null || true
    in_ns sysctl -qw net.ipv4.conf.all.rp_filter=0
    for dev in "$if_a" "$if_b"; do
      in_ns ethtool -K "$dev" tso off gso off gro off >/dev/null 2>&1 || echo "wan-ns.sh: ethtool -K $dev failed" >&2
    done
    for pair in "$if_a $tun_a $table_a" "$if_b $tun_b $table_b"; do
      read -r iif tun table <<<"$pair"
      in_ns ip link show "$tun" >/dev/null 2>&1 || in_ns ip tuntap add dev "$tun" mode tun
      # No IPv6 link-local address: the kernel then sends nothing of its own
      # (DAD, router solicitations) into the emulated link.
      in_ns ip link set dev "$tun" addrgenmode none 2>/dev/null || true
      in_ns sysctl -qw "net.ipv4.conf.$tun.rp_filter=0"
      in_ns ip link set dev "$tun" up
      in_ns ip route replace default dev "$tun" table "$table"
      in_ns ip rule del iif "$iif" lookup "$table" 2>/dev/null || true
      in_ns ip rule add iif "$iif" lookup "$table"
      if in_ns ip -6 route replace default dev "$tun" table "$table" 2>/dev/null; then
        in_ns ip -6 rule del iif "$iif" lookup "$table" 2>/dev/null || true
        in_ns ip -6 rule add iif "$iif" lookup "$table"
      fi
    done
    ;;
  down)
    for pair in "$if_a $tun_a $table_a" "$if_b $tun_b $table_b"; do
      read -r iif tun table <<<"$pair"
      in_ns ip rule del iif "$iif" lookup "$table" 2>/dev/null
      in_ns ip -6 rule del iif "$iif" lookup "$table" 2>/dev/null
      in_ns ip route flush table "$table" 2>/dev/null
      in_ns ip -6 route flush table "$table" 2>/dev/null
      in_ns ip tuntap del dev "$tun" mode tun 2>/dev/null
    done
    true
    ;;
  *) usage ;;
esac
