#!/usr/bin/env bash
# Two gateways in two network namespaces joined by a veth pair, configured
# from YAML files with keys made by wg(8): the session comes up over real UDP
# and bulk and request/response streams move data, every byte checked by the
# hub (tunnel_perf --verify resets a stream on the first wrong byte, and the
# branch then exits non-zero). Needs root (ip netns); cleans up after itself.
#   usage: netns_tunnel_test.sh path/to/tunnel_perf
set -euo pipefail
perf=$1
[[ $(id -u) -eq 0 ]] || { echo "netns_tunnel_test: needs root (ip netns)"; exit 1; }
tag=egwt$$
A=$tag-a B=$tag-b
dir=$(mktemp -d)
cleanup() {
  for ns in $A $B; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  rm -rf "$dir"
}
trap cleanup EXIT
ip netns add $A
ip netns add $B
ip link add $tag-va netns $A type veth peer name $tag-vb netns $B
ip -n $A addr add 10.211.0.1/24 dev $tag-va
ip -n $B addr add 10.211.0.2/24 dev $tag-vb
for ns in $A $B; do ip -n $ns link set lo up; done
ip -n $A link set $tag-va up
ip -n $B link set $tag-vb up

(umask 077; wg genkey > "$dir/hub.key"; wg genkey > "$dir/branch.key")
cat > "$dir/hub.yaml" <<YAML
role: hub
private_key_file: $dir/hub.key
listen: 10.211.0.2:51900
peers:
  - name: branch
    public_key: $(wg pubkey < "$dir/branch.key")
YAML
cat > "$dir/branch.yaml" <<YAML
role: branch
private_key_file: $dir/branch.key
peers:
  - name: hub
    public_key: $(wg pubkey < "$dir/hub.key")
    endpoint: 10.211.0.2:51900
YAML

ip netns exec $B "$perf" serve --config "$dir/hub.yaml" --verify 2> "$dir/serve.log" &
sleep 0.3
for args in "--mode bulk --streams 1" "--mode bulk --streams 4" "--mode rr"; do
  # shellcheck disable=SC2086
  out=$(timeout 30 ip netns exec $A "$perf" run --config "$dir/branch.yaml" $args --seconds 1 --verify)
  echo "$args: $out"
  grep -Eq '"(bytes|requests)":[1-9]' <<<"$out" || { echo "no data moved"; cat "$dir/serve.log"; exit 1; }
done
if grep -q corrupt "$dir/serve.log"; then cat "$dir/serve.log"; exit 1; fi
echo "netns_tunnel_test: ok"
