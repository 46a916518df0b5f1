#!/usr/bin/env bash
# The demo's web server (behind the hub): one page on port 80.
# Also run by tests/docker/entrypoint_netns_test.sh.
#   EGW_WWW=/srv/www   where the page is written and served from
#   EGW_HTTP_PORT=80
set -euo pipefail

www=${EGW_WWW:-/srv/www}
mkdir -p "$www"
cat >"$www/index.html" <<'HTML'
<!doctype html>
<html><head><title>ensemble-gw demo</title></head>
<body><h1>Hello through ensemble-gw</h1>
<p>This page came from the web server behind the hub, through the branch gateway's
transparent interception and the encrypted ensemble tunnel.</p></body></html>
HTML
echo "web-server: serving $www on port ${EGW_HTTP_PORT:-80}"
# Not exec'd: as a container's process 1, python (no SIGTERM handler) would
# ignore `docker stop` for its 10 s. As our child it dies of the default
# action, and our trap (waits are interruptible) ends us at once.
# -u: the access log reaches `docker compose logs` at once.
python3 -u -m http.server "${EGW_HTTP_PORT:-80}" --bind 0.0.0.0 --directory "$www" &
server=$!
trap 'kill -TERM "$server" 2>/dev/null; wait "$server" || true; echo "web-server: stopped"; exit 0' TERM INT
wait "$server"
