#!/usr/bin/env bash
# The deployment files for hosts without Docker, and the scripts: the systemd
# unit passes `systemd-analyze verify` with no complaint (any output fails;
# ExecStart pointed at the built binary, which verify wants to exist), the
# Grafana dashboard's JSON model is sound, names only metrics the exporter
# source has (the entrypoint test also checks them against a live scrape) and
# shows every metric the README names,
# and docker/*.sh parse (bash -n).
#   usage: deploy_files_test.sh [path/to/ensemble-gw]
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-$root/build/ensemble-gw}
failed=0
line() { echo "$1 $2"; [[ $1 == FAIL ]] && failed=1; return 0; }

if ! command -v systemd-analyze >/dev/null; then
  line SKIP "systemd unit: no systemd-analyze here"
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  sed "s#/usr/local/bin/ensemble-gw#$bin#g" "$root/docker/ensemble-gw.service" >"$tmp/ensemble-gw.service"
  out=$(systemd-analyze verify "$tmp/ensemble-gw.service" 2>&1)
  if [[ $? -eq 0 && -z $out ]]; then line PASS "systemd unit: systemd-analyze verify, no complaint"
  else line FAIL "systemd unit: $out"; fi
fi

# Every metric the README names, and the drops and reload failures an
# operator must see, are on a panel.
if out=$(python3 "$here/dashboard_check.py" "$root/docker/grafana-dashboard.json" \
  --source "$root/proxy/metrics_exporter.cc" --readme "$root/README.md" \
  --require egw_datagrams_dropped_total --require egw_config_reload_failures_total \
    --require egw_connections_closed_total --require egw_clients 2>&1); then line PASS "grafana dashboard: ${out#dashboard_check: }"
else line FAIL "grafana dashboard: $out"; fi

for f in "$root"/docker/*.sh; do
  if out=$(bash -n "$f" 2>&1); then line PASS "bash -n docker/$(basename "$f")"
  else line FAIL "bash -n docker/$(basename "$f"): $out"; fi
done
exit $failed
