#!/usr/bin/env bash
# A Docker engine for the container test (tests/docker/compose_demo_test.sh),
# on a Debian 12 host with no container registry reachable (CI's machines):
#
#   scripts/docker-engine.sh up     # prints "ready" (exit 0), or why not (exit 77)
#   scripts/docker-engine.sh down   # undoes what `up` did to the host
#
# `up`, each step only when missing:
#   1. installs Debian's docker.io (dockerd 20.10, containerd, iptables) and
#      debootstrap;
#   2. starts dockerd (no systemd here), after recording what it changes on
#      the host: links, the iptables filter/nat tables, ip_forward;
#   3. makes the base image of docker/Dockerfile's FROM lines offline:
#      debootstrap (minbase) from Debian's mirror, `docker import` as debian:12,
#      tagged debian:12-slim too (a minbase rootfs is what -slim is).
# `down`: only if `up` started dockerd (a daemon that was running before is
# left alone): stops it, deletes docker0 and the compose bridges it left,
# restores the iptables tables it touched (chains DOCKER*, MASQUERADE, the
# FORWARD DROP policy) and ip_forward. Images stay in /var/lib/docker: the
# next run's build is then a cache hit (seconds instead of ~6 min).
#
# Exit 77 from `up` where no engine can run (not root, no apt, dockerd does
# not come up): the caller prints a SKIP line.
#   EGW_DOCKER_STATE=/run/egw-docker-engine   what `down` needs to undo `up`
#   EGW_DEBIAN_MIRROR=http://deb.debian.org/debian
set -uo pipefail

state=${EGW_DOCKER_STATE:-/run/egw-docker-engine}
mirror=${EGW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
docker=/usr/bin/docker  # Debian's client, the daemon's version (another may come first in PATH)

say() { echo "docker-engine: $*" >&2; }
cannot() { say "cannot run an engine here: $*"; exit 77; }

engine_answers() { timeout 10 "$docker" info >/dev/null 2>&1; }

install_packages() {
  local missing=() p
  for p in docker.io debootstrap; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  command -v apt-get >/dev/null || cannot "no apt-get to install ${missing[*]}"
  say "installing ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
    cannot "apt-get install ${missing[*]} failed"
}

# What dockerd changes on the host, for `down`.
record_host() {
  mkdir -p "$state"
  ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' >"$state/links"
  iptables-save >"$state/iptables" 2>/dev/null
  ip6tables-save >"$state/ip6tables" 2>/dev/null
  nft list tables >"$state/nft-tables" 2>/dev/null
  sysctl -n net.ipv4.ip_forward >"$state/ip_forward"
  local d
  for d in /run/docker /run/containerd; do [[ -e $d ]] && echo "$d"; done >"$state/run-dirs"
}

start_dockerd() {
  command -v dockerd >/dev/null || cannot "no dockerd"
  record_host
  # The default bridge's MTU is the uplink's (here 1400): with 1500, the
  # image build's downloads stall on packets the uplink cannot carry.
  local dev mtu
  dev=$(ip -o route show default 2>/dev/null | sed -n -E 's/.* dev ([^ ]+).*/\1/p' | head -n1)
  mtu=$(cat "/sys/class/net/${dev:-none}/mtu" 2>/dev/null || echo 1500)
  say "starting dockerd (bridge MTU $mtu, log $state/dockerd.log)"
  setsid dockerd --mtu "$mtu" --pidfile "$state/dockerd.pid" >"$state/dockerd.log" 2>&1 </dev/null &
  echo $! >"$state/started"
  local i
  for ((i = 0; i < 60; i++)); do
    engine_answers && return 0
    kill -0 "$(cat "$state/started")" 2>/dev/null || break
    sleep 1
  done
  tail -n 5 "$state/dockerd.log" >&2
  down_host
  cannot "dockerd did not come up"
}

base_image() {
  if "$docker" image inspect debian:12 >/dev/null 2>&1; then
    "$docker" image inspect debian:12-slim >/dev/null 2>&1 || "$docker" tag debian:12 debian:12-slim
    return 0
  fi
  local t0=$SECONDS root
  root=$(mktemp -d /var/tmp/egw-debootstrap.XXXXXX)
  say "making debian:12 with debootstrap from $mirror (a few minutes, once)"
  if ! debootstrap --variant=minbase bookworm "$root" "$mirror" >"$state/debootstrap.log" 2>&1; then
    tail -n 5 "$state/debootstrap.log" >&2
    rm -rf "$root"
    cannot "debootstrap failed (no Debian mirror?)"
  fi
  # As Debian's images: apt keeps no package files or lists.
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | "$docker" import -c 'CMD ["bash"]' - debian:12 >/dev/null &&
    "$docker" tag debian:12 debian:12-slim
  local rc=$?
  rm -rf "$root"
  ((rc == 0)) || cannot "docker import failed"
  say "debian:12 (and debian:12-slim) made in $((SECONDS - t0)) s"
}

# Undoes start_dockerd: what the host had before is in $state.
down_host() {
  local pid i
  pid=$(cat "$state/started" 2>/dev/null) || return 0
  if kill -TERM "$pid" 2>/dev/null; then
    for ((i = 0; i < 150; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pid" 2>/dev/null
  fi
  # Links dockerd made (docker0, compose's br-*, stray veths).
  local link
  for link in $(ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//'); do
    grep -qx "$link" "$state/links" || [[ ! $link =~ ^(docker0|br-|veth) ]] || ip link del "$link" 2>/dev/null
  done
  restore_tables iptables "$state/iptables" ip
  restore_tables ip6tables "$state/ip6tables" ip6
  sysctl -qw net.ipv4.ip_forward="$(cat "$state/ip_forward")"
  # Their runtime directories (nothing is mounted there once they are gone).
  local d
  for d in /run/docker /run/containerd; do
    grep -qx "$d" "$state/run-dirs" || mountpoint -q "$d" || rm -rf "$d"
  done
  rm -rf "$state"
}

# restore_tables CMD SAVED NFT_FAMILY: the filter and nat tables as they were
# (a table the host did not have: emptied, policies ACCEPT, and its nft table
# deleted when iptables is the nf_tables one).
restore_tables() {
  local cmd=$1 saved=$2 family=$3 table chain
  command -v "$cmd" >/dev/null || return 0
  for table in filter nat; do
    if grep -qx "\*$table" "$saved"; then
      sed -n "/^\*$table\$/,/^COMMIT\$/p" "$saved" | "$cmd-restore"
    elif "$cmd" -t "$table" -S >/dev/null 2>&1; then
      "$cmd" -t "$table" -F
      "$cmd" -t "$table" -X
      for chain in $("$cmd" -t "$table" -S | sed -n -E 's/^-P ([A-Z]+) .*/\1/p'); do
        "$cmd" -t "$table" -P "$chain" ACCEPT
      done
      if "$cmd" -V 2>/dev/null | grep -q nf_tables && ! grep -qx "table $family $table" "$state/nft-tables"; then
        nft delete table "$family" "$table" 2>/dev/null
      fi
    fi
  done
}

case ${1:-} in
  up)
    [[ $(id -u) -eq 0 ]] || cannot "needs root"
    install_packages
    if engine_answers; then
      say "dockerd already running: used as it is, left running"
    elif [[ -s $state/started ]] && kill -0 "$(cat "$state/started")" 2>/dev/null; then
      cannot "a dockerd started by an earlier run does not answer"
    else
      start_dockerd
    fi
    base_image
    echo ready
    ;;
  down) down_host ;;
  *) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
