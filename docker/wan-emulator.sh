#!/usr/bin/env bash
# The demo's optional WAN emulator: netem on the branch's WAN interface, in
# the branch's network namespace (compose: network_mode "service:branch").
# It shapes what the branch sends to the hub, so the RTT grows by the delay
# and losses hit the tunnel's packets. Removed again on SIGTERM.
# Also run by tests/docker/entrypoint_netns_test.sh.
#
#   EGW_WAN_PEER=10.95.0.3   the hub: the interface is the one routing to it
#   EGW_WAN_DELAY=40ms  EGW_WAN_LOSS=0%  EGW_WAN_RATE=20mbit
set -euo pipefail

peer=${EGW_WAN_PEER:?EGW_WAN_PEER: the address of the hub}
dev=$(ip -o route get "$peer" | sed -n -E 's/.* dev ([^ ]+).*/\1/p')
[[ -n $dev ]] || { echo "wan-emulator: no route to $peer" >&2; exit 1; }
netem=(delay "${EGW_WAN_DELAY:-40ms}" loss "${EGW_WAN_LOSS:-0%}" rate "${EGW_WAN_RATE:-20mbit}")

# The qdisc goes however the script ends, so the traps come before it (as
# process 1 of a container, a signal without a handler would be ignored). A
# signal sent to the whole process group may also hit the sleeper (then gone:
# no error) and the cleanup's own tc (ignored here, so ignored by tc too:
# ignored signals stay ignored across exec).
sleeper=
cleanup() {
  trap "" TERM INT
  [[ -z $sleeper ]] || kill "$sleeper" 2>/dev/null || true
  tc qdisc del dev "$dev" root 2>/dev/null || true
  echo "wan-emulator: removed"
}
trap cleanup EXIT
trap 'exit 0' TERM INT
if ! err=$(tc qdisc replace dev "$dev" root netem "${netem[@]}" 2>&1); then
  # Kernels built without sch_netem (no module to load) answer "qdisc kind
  # is unknown": say so plainly rather than die on tc's words.
  trap - EXIT
  echo "wan-emulator: cannot put netem on $dev: ${err//$'\n'/ } (no sch_netem in this kernel?): the WAN is not emulated" >&2
  exit 1
fi
echo "wan-emulator: $dev (towards $peer): netem ${netem[*]}"
sleep infinity &
sleeper=$!
wait
