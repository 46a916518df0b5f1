#!/usr/bin/env bash
# scripts/demo.sh leaves nothing behind: its gateway lab (four namespaces,
# both gateways, the web server) is gone before the papers' experiments start
# and after the script ends. (It used to `exec` the experiments, so its EXIT
# trap never ran and the whole lab stayed up.) The demo runs as in the README,
# on the built binary (--no-build), with its own namespace prefix, and a
# stand-in for the experiments that records what is still running.
#   1  the demo got its page through the gateways and exited 0
#   2  when the experiments start, the lab is gone
#   3  after the script, nothing of the lab is left
# Exit 1 if any failed, 77 if it cannot run here (not root, no namespaces).
#   usage: demo_sh_test.sh [path/to/ensemble-gw]   (default build/ensemble-gw)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/tests/support/netns_test.sh"
bin=${1:-$root/build/ensemble-gw}
P=egwds$$
t_start=$SECONDS

netns_require demo_sh_test ip nft wg curl python3 timeout
[[ -x $bin ]] || { echo "demo_sh_test: no gateway binary at $bin"; exit 1; }

tmp=$(mktemp -d /tmp/egw-demotest.XXXXXX)
demo_dir=
cleanup() {
  # What a failing demo left: the processes in its namespaces (by pid), the namespaces.
  netns_delete "$P" client branch hub server
  rm -rf "$tmp" ${demo_dir:+"$demo_dir"}
}
trap cleanup EXIT

# The "build tree": the gateway, and the experiments' stand-in.
mkdir -p "$tmp/build/tests"
ln -s "$(realpath "$bin")" "$tmp/build/ensemble-gw"
cat >"$tmp/build/tests/paper_experiments" <<EOF
#!/bin/sh
{ ip netns list; echo "--- processes"; ps -eo args; } >"$tmp/during.txt"
echo "paper_experiments: stand-in"
EOF
chmod +x "$tmp/build/tests/paper_experiments"

cd "$root"
EGW_DEMO_BUILD=$tmp/build EGW_DEMO_PREFIX=$P timeout 90 scripts/demo.sh --no-build >"$tmp/demo.log" 2>&1
rc=$?
demo_dir=$(sed -n -E 's/.*\(logs and configs in ([^)]+)\).*/\1/p' "$tmp/demo.log" | head -n1)
left() {  # left FILE: the lab's namespaces and processes named in FILE
  grep -E "^$P-|${demo_dir:-/nonexistent}/" "$1" | grep -v -E "grep|pkill" | head -n 5 | tr '\n' ';'
}

if ((rc == 0)) && grep -q "Hello through ensemble-gw" "$tmp/demo.log"; then
  line PASS "1 demo" "the page came through, exit 0 (lab in $demo_dir)"
else
  line FAIL "1 demo" "exit $rc: $(tail -n 5 "$tmp/demo.log" | tr '\n' ' ')"
fi

if [[ ! -f $tmp/during.txt ]]; then
  line FAIL "2 lab gone before the experiments" "the experiments' stand-in did not run"
elif [[ -z $(left "$tmp/during.txt") ]]; then
  line PASS "2 lab gone before the experiments" "no $P-* namespace, no process of $demo_dir"
else
  line FAIL "2 lab gone before the experiments" "still there: $(left "$tmp/during.txt")"
fi

{ ip netns list; echo "--- processes"; ps -eo args; } >"$tmp/after.txt"
if [[ -z $(left "$tmp/after.txt") ]]; then
  line PASS "3 nothing left after the demo" "no $P-* namespace, no gateway or web server of $demo_dir"
else
  line FAIL "3 nothing left after the demo" "still there: $(left "$tmp/after.txt")"
fi

netns_summary demo_sh_test
exit $failed
