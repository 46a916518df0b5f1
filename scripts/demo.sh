#!/usr/bin/env bash
# The demo: installs every dependency, builds, then brings up the product on
# one machine (needs root):
#
#   client ──LAN── branch gateway ══ encrypted UDP tunnel ══ hub gateway ──── web server
#   (netns)        (netns, nftables redirect)                (netns)          (netns, python3 http.server)
#
# and fetches a page through the gateways with curl, shows the live ensemble
# (`ensemble-gw status`) and a few Prometheus metrics, then stops everything.
# With --keep the lab stays up (commands to use it are printed); without, it
# is gone before the next step. Then it runs the papers' experiments on the
# simulator (pass --no-papers to skip).
#   --no-build   use the binaries in $EGW_DEMO_BUILD (default build/) as they are
#   EGW_DEMO_PREFIX=egwdemo EGW_DEMO_NET=42   the lab's namespaces and 10.NET.x.y
# (tests/docker/demo_sh_test.sh runs it with a stand-in for the experiments.)
set -euo pipefail
cd "$(dirname "$0")/.."

keep=0
papers=1
build=1
for a in "$@"; do
  case $a in
    --keep) keep=1 ;;
    --no-papers) papers=0 ;;
    --no-build) build=0 ;;
    *) echo "usage: $0 [--keep] [--no-papers] [--no-build]" >&2; exit 2 ;;
  esac
done
bin_dir=${EGW_DEMO_BUILD:-build}

if ((build)); then
  scripts/install-deps.sh
  scripts/build.sh release ensemble-gw paper_experiments
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "== (skipping the gateway demo: network namespaces need root)"
else
  prefix=${EGW_DEMO_PREFIX:-egwdemo} net=${EGW_DEMO_NET:-42}
  dir=$(mktemp -d /tmp/egw-demo.XXXXXX)
  www=$dir/www
  cleanup() {
    [[ -f $dir/http.pid ]] && kill "$(cat "$dir/http.pid")" 2>/dev/null || true
    scripts/gateway-lab.sh down $prefix "$dir" || true
  }
  scripts/gateway-lab.sh down $prefix "$dir" >/dev/null 2>&1 || true
  if ((keep == 0)); then trap cleanup EXIT; fi
  echo "== the gateway lab: client -> branch -> tunnel -> hub -> server (logs and configs in $dir)"
  scripts/gateway-lab.sh up $prefix $net "$dir" "$bin_dir/ensemble-gw"
  mkdir -p "$www"
  cat >"$www/index.html" <<'EOF'
<!doctype html>
<html><head><title>ensemble-gw demo</title></head>
<body><h1>Hello through ensemble-gw</h1>
<p>This page came from the web server behind the hub, through the branch gateway's
transparent interception and the encrypted ensemble tunnel.</p></body></html>
EOF
  ip netns exec $prefix-server python3 -m http.server 80 --bind :: --directory "$www" \
    >"$dir/http.log" 2>&1 &
  echo $! >"$dir/http.pid"
  for _ in $(seq 1 50); do  # the tunnel up and the web server listening
    grep -q "tunnel to hub up" "$dir/branch.log" 2>/dev/null &&
      ip netns exec $prefix-server ss -Hltn 'sport = :80' | grep -q . && break
    sleep 0.1
  done
  echo "== curl http://10.$net.2.2/ from the client's namespace"
  ok=0
  for _ in $(seq 1 10); do
    if ip netns exec $prefix-client curl -sS -m 5 "http://10.$net.2.2/"; then ok=1; break; fi
    sleep 0.5
  done
  ((ok)) || { echo "demo: the page did not come through; logs:"; tail -n 20 "$dir"/*.log; exit 1; }
  echo "== ensemble-gw status (branch)"
  "$bin_dir/ensemble-gw" status -c "$dir/branch.yaml"
  sleep 1.1  # metrics are published once a second
  echo "== a few metrics of the branch (curl http://127.0.0.1:9470/metrics in its namespace)"
  ip netns exec $prefix-branch curl -sS -m 5 http://127.0.0.1:9470/metrics |
    grep -E '^egw_(ensemble_(up|cwnd_bytes|srtt_seconds)|connections_accepted_total|streams_opened_total)' || true
  if ((keep)); then
    cat <<EOF
== the lab stays up:
   ip netns exec $prefix-client curl http://10.$net.2.2/         # through the gateways
   $bin_dir/ensemble-gw status -c $dir/branch.yaml
   scripts/gateway-lab.sh down $prefix $dir; kill \$(cat $dir/http.pid)   # when done
EOF
  else
    # The lab down now, not at exit: the experiments do not need it.
    echo "== the gateway lab down"
    trap - EXIT
    cleanup
  fi
fi
if ((papers)); then
  echo "== the papers' experiments on the simulator"
  "$bin_dir/tests/paper_experiments"
fi
