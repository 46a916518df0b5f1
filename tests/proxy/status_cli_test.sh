#!/usr/bin/env bash
# The operator's commands on a real hub gateway on loopback (no root, no
# namespaces): `--version`; `check` refuses a duplicate key and an empty
# allow list, naming file, line and key; `status --json` is valid JSON
# (python3 -m json.tool) with the live ensemble, and, after the status
# server's samples, rates per class, as does the text; the live /metrics has
# egw_build_info with the same version and commit. ~5 s.
#   usage: status_cli_test.sh ENSEMBLE_GW_BINARY
set -uo pipefail

bin=${1:?usage: status_cli_test.sh ENSEMBLE_GW_BINARY}
failed=0
line() { echo "$1 $2"; [[ $1 == FAIL ]] && failed=1; return 0; }
tmp=$(mktemp -d)
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

version_line=$("$bin" --version)
if [[ $version_line =~ ^ensemble-gw\ ([0-9]+\.[0-9]+\.[0-9]+)\ \(commit\ ([0-9a-f]{7,40}|unknown)\)$ ]]; then
  version=${BASH_REMATCH[1]} commit=${BASH_REMATCH[2]}
  line PASS "--version: $version_line"
else
  line FAIL "--version: '$version_line'"
  version=x commit=x
fi

(umask 077 && echo "YAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=" >"$tmp/hub.key")
hub_yaml() {  # $1: the peer's allow line
  printf '%s\n' "role: hub" "private_key_file: $tmp/hub.key" "listen: 127.0.0.1:0" "peers:" \
    "  - name: b1" "    public_key: HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=" "$1" \
    "metrics_listen: 127.0.0.1:0" "status_socket: $tmp/hub.sock"
}
hub_yaml '    allow: ["127.0.0.1/32:1-65535"]' >"$tmp/hub.yaml"
{ hub_yaml '    allow: ["127.0.0.1/32:1-65535"]'; echo "log_level: info"; echo "log_level: debug"; } >"$tmp/dup.yaml"
hub_yaml '    allow: []' >"$tmp/empty.yaml"

out=$("$bin" check -c "$tmp/hub.yaml" 2>&1) && line PASS "check: $out" || line FAIL "check of a good file: $out"
out=$("$bin" check -c "$tmp/dup.yaml" 2>&1)
[[ $? -eq 1 && $out == "ensemble-gw: $tmp/dup.yaml:11: log_level: duplicate key (first at line 10)" ]] &&
  line PASS "check, a duplicate key: $out" || line FAIL "check, a duplicate key: '$out'"
out=$("$bin" check -c "$tmp/empty.yaml" 2>&1)
[[ $? -eq 1 && $out == "ensemble-gw: $tmp/empty.yaml:7: peers[0].allow: empty: "* ]] &&
  line PASS "check, an empty allow: $out" || line FAIL "check, an empty allow: '$out'"

"$bin" run -c "$tmp/hub.yaml" >"$tmp/hub.log" 2>&1 &
pid=$!
started=$(date +%s.%N)
for _ in $(seq 100); do [[ -S $tmp/hub.sock ]] && break; sleep 0.05; done
[[ -S $tmp/hub.sock ]] || { line FAIL "no status socket: $(cat "$tmp/hub.log")"; exit 1; }

if "$bin" status --socket "$tmp/hub.sock" --json >"$tmp/status.json" && python3 -m json.tool "$tmp/status.json" >/dev/null; then
  line PASS "status --json: valid JSON ($(stat -c %s "$tmp/status.json") bytes)"
else
  line FAIL "status --json: $(head -c 300 "$tmp/status.json")"
fi
# Rates need a sample at least 0.5 s old: the server samples once a second.
sleep "$(python3 -c "print(max(0.0, 1.8 - ($(date +%s.%N) - $started)))")"
"$bin" status --socket "$tmp/hub.sock" --json >"$tmp/status2.json"
if out=$(python3 - "$tmp/status2.json" "$version" "$commit" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == sys.argv[2] and d["commit"] == sys.argv[3], (d["version"], d["commit"])
assert d["role"] == "hub", d["role"]
[e] = d["ensembles"]
assert e["peer"] == "b1" and e["up"] is False, e
# No handshake yet: no cipher in use; what the hub accepts (cipher: auto).
assert e["cipher"] is None and "chacha20-poly1305" in e["ciphers_offered"], e
assert set(e["bytes_per_second_by_class"]) == {"html", "script", "image", "bulk", "realtime", "interactive", "web", "streaming"}, e
assert 0.5 <= d["rate_window_seconds"] <= 3.0, d["rate_window_seconds"]
assert d["streams"] == [] and d["streams_omitted"] == 0
print(f"hub, peer b1, rates over {d['rate_window_seconds']:.1f} s")
PY
); then line PASS "status --json: $out"; else line FAIL "status --json: $out"; fi
text=$("$bin" status -c "$tmp/hub.yaml" 2>&1)
[[ $text == "ensemble-gw hub: up "* && $text == *"rates: bytes/s per class over the last "*" s"* ]] &&
  grep -Eq '^b1 +b1 +down +[^ ]+ +- .* 0/0/0/0/0/0/0/0 +0/0/0/0/0/0/0/0$' <<<"$text" &&
  line PASS "status (text): header, ensembles, rates" || line FAIL "status (text): $text"

metrics=$(sed -n 's|.*metrics on http://\([^/]*\)/metrics.*|\1|p' "$tmp/hub.log" | head -1)
scrape=$(python3 -c "import urllib.request,sys; print(urllib.request.urlopen('http://$metrics/metrics', timeout=5).read().decode())" 2>&1)
grep -qxF "egw_build_info{version=\"$version\",commit=\"$commit\"} 1" <<<"$scrape" &&
  line PASS "metrics: egw_build_info{version=\"$version\",commit=\"$commit\"} 1" ||
  line FAIL "metrics at '$metrics': $(grep build_info <<<"$scrape" || head -3 <<<"$scrape")"
exit $failed
