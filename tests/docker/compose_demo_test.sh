#!/usr/bin/env bash
# The container test: the images built by a real Docker engine and the
# compose demo run until the client prints the page through the tunnel; then
# what only an engine shows. A stage of scripts/test.sh (not ctest: it builds
# from the sources, once, and wants the machine to itself while it compiles).
#
#   usage: tests/docker/compose_demo_test.sh         prints one PASS/FAIL/SKIP line
#                                                    per check, then the verdict
#   EGW_DOCKER_TEST_KEEP=1   keep the demo running (and the engine) afterwards
#
# The engine: scripts/docker-engine.sh up (installs docker.io, starts dockerd,
# makes the debian:12 base image offline); SKIP (exit 77) only where no engine
# can run. Compose: Debian 12's docker-compose 1.29 (scripts/install-deps.sh),
# building with BuildKit through Debian's docker CLI (the daemon's version).
# Checks:
#   1 images       docker/Dockerfile builds (gateway and demo targets)
#   2 page         `up`: the client prints the web server's page, through the
#                  tunnel (the server logs the hub's address); both
#                  gateways started with the tunnel's urgent lane on
#                  (SO_REUSEPORT with its BPF program works in a container)
#   3 healthy      both gateways healthy (the image's HEALTHCHECK)
#   4 health asks  the process: a typo in the config on disk, not reloaded,
#                  leaves the health check passing
#   5 nofile       the compose default (EGW_NOFILE, 16384) started here (this
#                  host refuses above 20,000) and is what the gateway gets
#   6 no allow     a hub without EGW_ALLOW exits at once, naming it
#   7 stop         client and server (scripts as process 1) stop on SIGTERM
#                  in under 3 s (not docker stop's 10 s, then SIGKILL)
#   8 deploy HUP   docker-compose.deploy.yml mounts the config's directory: a
#                  file replaced as editors save it is what SIGHUP reloads
#   9 wan          the `wan` profile's emulator shapes the branch's WAN side
#                  (netem), or says clearly why it cannot (no sch_netem)
# Leaves: no container, network or volume of its own; the engine as found
# (started here: stopped, the host's links/iptables/ip_forward restored). The
# images and the BuildKit cache stay, so the next run builds in seconds.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
t_start=$SECONDS
failed=0
summary=()
line() { echo "$1 $2: $3"; summary+=("$1"); [[ $1 == FAIL ]] && failed=1; return 0; }
count() { local n=0 s; for s in "${summary[@]}"; do [[ $s == "$1" ]] && n=$((n + 1)); done; echo $n; }

# Debian's docker CLI (the daemon's API version) before /usr/local/bin's; compose
# builds through it (BuildKit: only the stages a target needs, in parallel).
export PATH=/usr/bin:/usr/sbin:$PATH COMPOSE_DOCKER_CLI_BUILD=1 DOCKER_BUILDKIT=1
export COMPOSE_PROJECT_NAME=egwdemotest
tmp=$(mktemp -d /tmp/egw-composetest.XXXXXX)
demo=(docker-compose -f "$root/docker/docker-compose.yml")
deploy=(docker-compose -p egwdeploytest -f "$root/docker/docker-compose.deploy.yml" -f "$tmp/override.yml")

engine_started=0
cleanup() {
  trap - EXIT INT TERM
  [[ -n ${watchdog:-} ]] && kill "$watchdog" 2>/dev/null
  if [[ ${EGW_DOCKER_TEST_KEEP:-0} == 1 ]]; then
    echo "kept: the demo (project $COMPOSE_PROJECT_NAME) and the engine; $tmp"
    return
  fi
  "${demo[@]}" --profile wan down -v -t 20 --remove-orphans >/dev/null 2>&1
  [[ -f $tmp/override.yml ]] && "${deploy[@]}" down -v -t 20 --remove-orphans >/dev/null 2>&1
  docker rm -f egwdemotest-noallow >/dev/null 2>&1
  rm -rf "$tmp"
  ((engine_started)) && "$root/scripts/docker-engine.sh" down
  echo "== compose_demo_test: $(count PASS) passed, $(count FAIL) failed, $(count SKIP) skipped in $((SECONDS - t_start)) s"
}
trap cleanup EXIT
trap 'echo "FAIL: interrupted"; exit 1' INT TERM
# Bounded: a cold build is ~7 min on 2 cores; past 20 min the test fails.
# (Its sleeper goes with it: nothing of ours outlives the test.)
(
  trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
  sleep 1200 &
  sleeper=$!
  wait "$sleeper"
  echo "FAIL: the test ran out of its 1200 s"
  kill -TERM $$
) &
watchdog=$!

# ------------------------------------------------------------------ the engine
# Ours to stop: an engine this `up` starts, or scripts/test.sh's (it runs
# `up` early, in the background, and says so).
[[ -e /run/egw-docker-engine/started && ${EGW_DOCKER_ENGINE_PREPARED:-0} != 1 ]] && was_running=1 || was_running=0
out=$("$root/scripts/docker-engine.sh" up 2>&1)
rc=$?
[[ -e /run/egw-docker-engine/started ]] && ((!was_running)) && engine_started=1
if ((rc == 77)); then
  line SKIP "container test" "no Docker engine can run here: $(tail -n 1 <<<"$out")"
  exit 77
elif ((rc != 0)); then
  line FAIL "container test" "scripts/docker-engine.sh up: $out"
  exit 1
fi
command -v docker-compose >/dev/null || { line FAIL "container test" "no docker-compose (scripts/install-deps.sh)"; exit 1; }
echo "engine: $(docker version -f 'dockerd {{.Server.Version}}'), $(docker-compose version --short | sed 's/^/docker-compose /')$( ((engine_started)) && echo ', started for this test')"
# Leftovers of an interrupted run.
"${demo[@]}" --profile wan down -v -t 5 --remove-orphans >/dev/null 2>&1

# ------------------------------------------------------------------ 1. images
# Kept as the next run's cache (the build stage's toolchain layer alone is
# ~3 min of downloads); what a rebuild replaces is removed, and the build
# cache is held to 2 GB (least recently used first).
image_ids() { docker image inspect -f '{{.Id}}' ensemble-gw:latest ensemble-gw-demo:latest 2>/dev/null; }
before=$(image_ids)
t=$SECONDS
if timeout 1000 "${demo[@]}" build >"$tmp/build.log" 2>&1; then
  line PASS "1 images" "docker/Dockerfile built ensemble-gw and ensemble-gw-demo in $((SECONDS - t)) s"
  for id in $before; do grep -qx "$id" <<<"$(image_ids)" || docker rmi "$id" >/dev/null 2>&1; done
  docker builder prune -f --keep-storage 2gb >/dev/null 2>&1
else
  line FAIL "1 images" "docker-compose build failed after $((SECONDS - t)) s:"
  grep -E "ERROR|Error|error:" "$tmp/build.log" | head -n 10 | sed 's/^/    /'
  tail -n 10 "$tmp/build.log" | sed 's/^/    /'
  exit 1
fi

cid() { "${demo[@]}" ps -q "$1"; }
# grep -q on a pipe would end the writer early: a SIGPIPE, a failed pipeline (pipefail).
contains() { grep -c -- "$1" >/dev/null; }
logs() { "${demo[@]}" logs --no-color "$1" 2>&1; }

# ------------------------------------------------------------------ 2. the page
t=$SECONDS
if ! timeout 180 "${demo[@]}" up -d >"$tmp/up.log" 2>&1; then
  line FAIL "2 page" "docker-compose up: $(tail -n 5 "$tmp/up.log" | tr '\n' ' ')"
  exit 1
fi
for ((i = 0; i < 120; i++)); do
  logs client | contains "Hello through ensemble-gw" && break
  sleep 1
done
if logs client | contains "Hello through ensemble-gw" && logs server | contains '10\.95\.2\.2 .*"GET / HTTP'; then
  line PASS "2 page" "the client printed '$(logs client | grep -m1 -o '<h1>.*</h1>')' $((SECONDS - t)) s after up; the server saw the hub (10.95.2.2)"
  # The tunnel's urgent lane (SO_REUSEPORT steered by classic BPF) works
  # inside the containers, as on the host.
  if logs branch | contains "(urgent lane on)" && logs hub | contains "(urgent lane on)"; then
    line PASS "2 urgent lane" "both gateways started with the urgent lane on"
  else
    line FAIL "2 urgent lane" "a gateway did not log '(urgent lane on)' when it started:"
    logs branch | grep -m2 "urgent lane\|gateway started" | sed "s/^/    /"
    logs hub | grep -m2 "urgent lane\|gateway started" | sed "s/^/    /"
  fi
else
  line FAIL "2 page" "within 120 s: no page in the client's log, or no request from the hub (10.95.2.2) in the server's"
  for s in client branch hub server; do logs $s | tail -n 8 | sed "s/^/    /"; done
fi

# ------------------------------------------------------------------ 3. healthy
health() { docker inspect -f '{{.State.Health.Status}}' "$(cid "$1")" 2>&1; }
for ((i = 0; i < 30; i++)); do
  [[ $(health branch) == healthy && $(health hub) == healthy ]] && break
  sleep 1
done
if [[ $(health branch) == healthy && $(health hub) == healthy ]]; then
  line PASS "3 healthy" "branch and hub healthy"
else
  line FAIL "3 healthy" "branch $(health branch), hub $(health hub)"
fi

# ------------------------------------------------------------------ 4. the health check asks the process
# The image's own HEALTHCHECK command, run in the branch after a typo is saved
# into the config it runs (no reload).
mapfile -t check < <(docker inspect -f '{{range .Config.Healthcheck.Test}}{{println .}}{{end}}' "$(cid branch)" | sed '/^$/d')
[[ ${check[0]:-} == CMD ]] && check=("${check[@]:1}")
docker exec "$(cid branch)" sh -c 'echo "scheduler: [unclosed" >>/run/ensemble-gw/ensemble-gw.yaml'
if out=$(docker exec "$(cid branch)" "${check[@]}" 2>&1) && grep -q "^hub " <<<"$out" &&
  ! docker exec "$(cid branch)" ensemble-gw check -c /run/ensemble-gw/ensemble-gw.yaml >/dev/null 2>&1; then
  line PASS "4 health asks the process" "'${check[*]}' passes with a broken config on disk"
else
  line FAIL "4 health asks the process" "'${check[*]}' after a typo on disk: $(head -n 3 <<<"$out" | tr '\n' ' ')"
fi

# ------------------------------------------------------------------ 5. nofile
got=$(docker exec "$(cid branch)" sh -c 'ulimit -n' 2>&1)
if [[ $got == 16384 ]]; then
  line PASS "5 nofile" "the gateway's limit is the default 16384 (this shell's hard limit: $(ulimit -Hn))"
else
  line FAIL "5 nofile" "ulimit -n in the branch: $got"
fi

# ------------------------------------------------------------------ 6. a hub without EGW_ALLOW
t=$SECONDS
out=$(timeout 60 docker run --name egwdemotest-noallow --rm -e EGW_ROLE=hub ensemble-gw:latest 2>&1)
rc=$?
if ((rc != 0 && rc != 124)) && grep -q "EGW_ALLOW .* is required" <<<"$out"; then
  line PASS "6 no allow" "exit $rc after $((SECONDS - t)) s: '$(grep -m1 EGW_ALLOW <<<"$out")'"
else
  line FAIL "6 no allow" "exit $rc: $(tail -n 3 <<<"$out" | tr '\n' ' ')"
fi

# ------------------------------------------------------------------ 7. stop
stops=()
ok=1
for s in client server; do
  c=$(cid $s)
  t0=$(date +%s%N)
  docker stop -t 10 "$c" >/dev/null
  ms=$((($(date +%s%N) - t0) / 1000000))
  code=$(docker inspect -f '{{.State.ExitCode}}' "$c")
  stops+=("$s ${ms} ms (exit $code)")
  ((ms < 3000 && code == 0)) || ok=0
done
if ((ok)); then line PASS "7 stop" "SIGTERM: ${stops[*]}"
else line FAIL "7 stop" "${stops[*]} (want < 3000 ms, exit 0)"; fi

# ------------------------------------------------------------------ 8. deploy: SIGHUP reads the edited file
# The deployment file as it is, with a hub config in a host directory; no host
# network for the test (an override): the reload is what is looked at.
printf 'services:\n  gateway:\n    network_mode: none\n    restart: "no"\n' >"$tmp/override.yml"
conf=$tmp/etc
install -d -m 700 -o 10001 -g 10001 "$conf"
cat >"$conf/ensemble-gw.yaml" <<EOF
role: hub
private_key_file: /etc/ensemble-gw/private.key
listen: 127.0.0.1:51900
peers:
  - name: branch
    public_key: $(wg genkey | wg pubkey)
    allow: ["192.0.2.0/24:80"]
metrics_listen: ""
EOF
chown 10001:10001 "$conf/ensemble-gw.yaml"
export EGW_CONFIG_DIR=$conf
dlogs() { "${deploy[@]}" logs --no-color gateway 2>&1; }
if timeout 120 "${deploy[@]}" up -d >"$tmp/deploy-up.log" 2>&1 &&
  for ((i = 0; i < 30; i++)); do dlogs | contains "hub gateway started" && break; sleep 1; done &&
  dlogs | contains "hub gateway started"; then
  # An editor's save: a new file renamed over the old one (a new inode).
  { cat "$conf/ensemble-gw.yaml"; echo "log_level: [unclosed"; } >"$conf/.new"
  chown 10001:10001 "$conf/.new"
  mv "$conf/.new" "$conf/ensemble-gw.yaml"
  "${deploy[@]}" kill -s HUP gateway >/dev/null 2>&1
  for ((i = 0; i < 50; i++)); do dlogs | contains "reload" && break; sleep 0.2; done
  if dlogs | contains "reload failed"; then
    line PASS "8 deploy HUP" "the replaced file was read: '$(dlogs | grep -m1 -o 'reload failed.*' | cut -c1-100)'"
  else
    line FAIL "8 deploy HUP" "after replacing the file and SIGHUP: '$(dlogs | grep -m1 reload)' (the old file reloaded?)"
  fi
else
  line FAIL "8 deploy HUP" "the deployment did not start: $(tail -n 3 "$tmp/deploy-up.log" | tr '\n' ' ') $(dlogs | tail -n 5 | tr '\n' ' ')"
fi
"${deploy[@]}" down -v -t 20 >/dev/null 2>&1

# ------------------------------------------------------------------ 9. wan profile
"${demo[@]}" --profile wan up -d wan >"$tmp/wan-up.log" 2>&1
for ((i = 0; i < 20; i++)); do logs wan | contains "wan-emulator:" && break; sleep 0.5; done
wan=$(logs wan | grep -m1 "wan-emulator:")
if grep -q "netem delay 40ms" <<<"$wan"; then
  line PASS "9 wan" "$wan"
elif grep -q "no sch_netem in this kernel" <<<"$wan"; then
  line SKIP "9 wan" "$wan"
else
  line FAIL "9 wan" "${wan:-no line from wan-emulator.sh}: $(logs wan | tail -n 3 | tr '\n' ' ')"
fi

exit $failed
