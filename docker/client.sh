#!/usr/bin/env bash
# The demo's client (a host on the branch's LAN): routes through the branch
# gateway, as a LAN host whose default route is the gateway, then fetches the
# web server's page and prints it. Also run by tests/docker/entrypoint_netns_test.sh.
#
#   EGW_GATEWAY=10.95.1.2       the branch's LAN address: the new default route
#   EGW_URL=http://10.95.2.10/  the page (behind the hub)
#   EGW_FETCH_EVERY=0           0: fetch once and exit (status 0 on success);
#                               N: fetch again every N seconds, for ever
#   EGW_FETCH_TRIES=60          attempts, 2 s apart, before the first page
set -euo pipefail

gateway=${EGW_GATEWAY:?EGW_GATEWAY: the LAN address of the branch gateway}
url=${EGW_URL:?EGW_URL: the page to fetch}
every=${EGW_FETCH_EVERY:-0}

# As a container's process 1 a signal without a handler is ignored (`docker
# stop` would wait 10 s, then SIGKILL): SIGTERM ends us, at once, because
# every wait is on a background child (bash runs a trap only between
# commands, and `wait` is interrupted by it; a foreground curl or sleep is not).
child=
trap '[[ -z $child ]] || kill -TERM "$child" 2>/dev/null; echo "client: stopped"; exit 0' TERM INT
in_bg() { "$@" & child=$!; wait "$child"; }

# A LAN host's only change: its default route is the gateway (needs NET_ADMIN
# in the container; a real LAN gets it from DHCP or its router).
ip route replace default via "$gateway"
echo "client: default route via $gateway; fetching $url"
page=$(mktemp)
err=$(mktemp)
fetch() { in_bg curl -sS --max-time 5 -o "$page" "$url" 2>"$err"; }
ok=0
for ((i = 0; i < ${EGW_FETCH_TRIES:-60}; i++)); do
  if fetch; then ok=1; break; fi
  echo "client: not yet ($(head -c 100 "$err")), retrying"
  in_bg sleep 2
done
((ok)) || { echo "client: no page from $url" >&2; exit 1; }
echo "client: the page, through the tunnel:"
cat "$page"
((every > 0)) || exit 0
while in_bg sleep "$every"; do
  if fetch; then
    echo "client: $(date +%T) $url: $(wc -c <"$page") bytes"
  else
    echo "client: $(date +%T) $url: $(head -c 200 "$err")"
  fi
done
