#!/usr/bin/env bash
# The gateway container's entrypoint (also run by tests/docker/entrypoint_netns_test.sh
# in network namespaces, so every path is a variable).
#
#   1. The private key: generated with `wg genkey` on first start if absent
#      (mode 600, in the config volume or directory), never in an image; its public
#      key is printed to the log, for the other side's `peers`.
#   2. The config: a mounted $EGW_CONFIG is used as is; without one, a config is
#      written from EGW_* variables (the demo) into $EGW_RUN_DIR, rewritten at
#      every start so the variables stay the source of truth.
#   3. With $EGW_EXCHANGE (demo only: a volume shared by the branch and the
#      hub) the public keys are swapped through it, so the demo needs no copying.
#   4. exec ensemble-gw run: the gateway is the container's process 1 and gets
#      its signals (SIGTERM drains, SIGHUP reloads).
# `entrypoint.sh pubkey` stops after 1 (prints the public key alone), so a
# deployment can swap keys before its first run.
#
# Variables (defaults as in the image):
#   EGW_BIN=ensemble-gw  EGW_CONFIG=/etc/ensemble-gw/ensemble-gw.yaml
#   EGW_RUN_DIR=/run/ensemble-gw (generated config, status socket; status.sock
#     links to the config's status socket, for the image's health check)
#   EGW_STATE_DIR=/var/lib/ensemble-gw (temporal cache; the hub's handshake timestamps)
#   EGW_KEY (default: the config's private_key_file, else /etc/ensemble-gw/private.key)
#   EGW_EXCHANGE, EGW_EXCHANGE_WAIT_S=120
# Generated config (docs/config.md has every key):
#   EGW_ROLE=branch|hub  EGW_PEER_NAME  EGW_PEER_PUBLIC_KEY (or from EGW_EXCHANGE)
# (lists separated by spaces)
#   branch: EGW_HUB_ENDPOINT=IP:PORT  EGW_LAN="PREFIX ..."  EGW_PORTS="80 443"  EGW_REJECT_QUIC=false
#   hub:    EGW_LISTEN=0.0.0.0:51900  EGW_ALLOW="RULE ..." (e.g. 10.2.0.0/16:80,443)
#   both:   EGW_POLICY=content  EGW_TICKETS="html=12 script=6 image=3 bulk=1"
#           EGW_METRICS_LISTEN=0.0.0.0:9470  EGW_STATUS_SOCKET  EGW_LOG_LEVEL=info
set -euo pipefail

bin=${EGW_BIN:-ensemble-gw}
config=${EGW_CONFIG:-/etc/ensemble-gw/ensemble-gw.yaml}
run_dir=${EGW_RUN_DIR:-/run/ensemble-gw}
state_dir=${EGW_STATE_DIR:-/var/lib/ensemble-gw}
effective=$run_dir/ensemble-gw.yaml  # what runs, and what SIGHUP reloads
# The health check asks the running gateway, not the config on disk (a typo
# saved but not reloaded must not mark a healthy gateway unhealthy): this
# link leads to the status socket the config names.
health_socket=$run_dir/status.sock

say() { echo "entrypoint: $*" >&2; }
die() { say "$*"; exit 1; }

# Lists in variables are separated by spaces (rules hold commas: 10.2.0.0/16:80,443).
# "a b" -> ["a", "b"] (quoted: IPv6 prefixes and port ranges stay YAML strings).
yaml_list() {
  local out="" item
  for item in $1; do out+="${out:+, }\"$item\""; done
  echo "[$out]"
}

# "html=12 script=6" -> {html: 12, script: 6}
yaml_map() {
  local out="" item
  for item in $1; do out+="${out:+, }${item%%=*}: ${item#*=}"; done
  echo "{$out}"
}

# top_level KEY FILE: a top-level `key: value` of a mounted config (plain line).
top_level() {
  sed -n -E "s/^$1:[[:space:]]*[\"']?([^\"'#[:space:]]*).*/\\1/p" "$2" | head -n1
}
key_in_config() { top_level private_key_file "$1"; }

mkdir -p "$run_dir" "$state_dir"
if [[ -f $config ]]; then
  key=${EGW_KEY:-$(key_in_config "$config")}
  role=$(top_level role "$config")
else
  role=${EGW_ROLE:-}
  [[ -n $role || ${1:-} == pubkey ]] || die "no config at $config and no EGW_ROLE to write one"
  # Every variable the written config needs, before anything else happens
  # (a gateway without them would start, healthy, and refuse everything).
  required=()
  case ${1:-}:$role in
    pubkey:*) ;;
    *:branch) required=(EGW_HUB_ENDPOINT "IP:PORT of the hub" EGW_LAN "the client prefixes, e.g. 10.1.0.0/24") ;;
    *:hub) required=(EGW_ALLOW "where the branch may connect, e.g. 10.2.0.0/16:80,443") ;;
    *) die "EGW_ROLE must be branch or hub, not '$role'" ;;
  esac
  for ((i = 0; i < ${#required[@]}; i += 2)); do
    [[ -n ${!required[i]:-} ]] || die "${required[i]} (${required[i + 1]}) is required for a $role; not started"
  done
fi
key=${key:-${EGW_KEY:-/etc/ensemble-gw/private.key}}

# 1. The key: written under a temporary name, so a crash never leaves half a key.
if [[ ! -s $key ]]; then
  mkdir -p "$(dirname "$key")"
  (umask 077 && wg genkey >"$key.tmp") && mv "$key.tmp" "$key"
  say "generated a private key in $key (first start)"
fi
pub=$(wg pubkey <"$key") || die "$key is not a WireGuard private key"
[[ ${1:-} == pubkey ]] && { echo "$pub"; exit 0; }
say "$role public key: $pub"
peer_role=$([[ $role == branch ]] && echo hub || echo branch)

# 3. The demo's key exchange: ours out, the peer's in (bounded wait).
peer_pub=${EGW_PEER_PUBLIC_KEY:-}
if [[ -n ${EGW_EXCHANGE:-} ]]; then
  mkdir -p "$EGW_EXCHANGE"
  echo "$pub" >"$EGW_EXCHANGE/.$role.pub.tmp" && mv "$EGW_EXCHANGE/.$role.pub.tmp" "$EGW_EXCHANGE/$role.pub"
  if [[ -z $peer_pub ]]; then
    for ((i = 0; i < ${EGW_EXCHANGE_WAIT_S:-120} * 5; i++)); do
      [[ -s $EGW_EXCHANGE/$peer_role.pub ]] && break
      sleep 0.2
    done
    [[ -s $EGW_EXCHANGE/$peer_role.pub ]] || die "no $peer_role public key in $EGW_EXCHANGE"
    peer_pub=$(cat "$EGW_EXCHANGE/$peer_role.pub")
    say "$peer_role public key from $EGW_EXCHANGE: $peer_pub"
  fi
fi

# 2. The config.
if [[ -f $config ]]; then
  say "using the mounted config $config"
  ln -sfn "$config" "$effective"
else
  [[ -n $peer_pub ]] || die "no EGW_PEER_PUBLIC_KEY (the other gateway's public key)"
  {
    echo "# Written by docker/entrypoint.sh from EGW_* variables at every start."
    echo "role: $role"
    echo "private_key_file: $key"
    [[ $role == hub ]] && echo "listen: ${EGW_LISTEN:-0.0.0.0:51900}"
    echo "peers:"
    echo "  - name: ${EGW_PEER_NAME:-$peer_role}"
    echo "    public_key: $peer_pub"
    case $role in
      branch)
        echo "    endpoint: $EGW_HUB_ENDPOINT"
        echo "interception:"
        echo "  mode: nftables"
        echo "  lan: $(yaml_list "$EGW_LAN")"
        [[ -n ${EGW_PORTS:-} ]] && echo "  ports: $(yaml_list "$EGW_PORTS")"
        echo "  reject_quic: ${EGW_REJECT_QUIC:-false}"
        ;;
      hub) echo "    allow: $(yaml_list "$EGW_ALLOW")" ;;
    esac
    echo "scheduler:"
    echo "  policy: ${EGW_POLICY:-content}"
    echo "  tickets: $(yaml_map "${EGW_TICKETS:-html=12 script=6 image=3 bulk=1}")"
    echo "temporal_cache:"
    echo "  file: $state_dir/cache"
    [[ $role == hub ]] && echo "handshake_state_file: $state_dir/handshakes"
    echo "metrics_listen: \"${EGW_METRICS_LISTEN-0.0.0.0:9470}\""
    echo "status_socket: ${EGW_STATUS_SOCKET:-$run_dir/$role.sock}"
    echo "log_level: ${EGW_LOG_LEVEL:-info}"
  } >"$effective.tmp"
  mv "$effective.tmp" "$effective"
  say "wrote $effective from the EGW_* variables"
fi

"$bin" check -c "$effective" >&2 || die "the config does not load (above)"
# The status socket the config names (its default as in docs/config.md).
socket=$(grep -q '^status_socket:' "$effective" && top_level status_socket "$effective" || echo "/run/ensemble-gw/$role.sock")
if [[ -z $socket ]]; then
  say "status_socket is \"\": the image's health check (ensemble-gw status) cannot ask the gateway"
elif [[ $socket != "$health_socket" ]]; then
  ln -sfn "$socket" "$health_socket"
fi
exec "$bin" run -c "$effective"
