#!/usr/bin/env bash
# The compose files validate: `docker-compose config -q` (Debian 12's
# docker-compose 1.29, Compose Specification) on the demo (with and without
# its `wan` profile) and on the deployment file, plus what no schema checks:
# every build names the Dockerfile's stages, every script a service runs is
# in docker/ and copied into the demo image, no key material in any file,
# the deployment mounts the config's directory (an editor's save replaces
# the file: a file mount keeps the old one), and the default `nofile` fits
# this host's hard limit (above the engine's, a container does not start).
# No Docker engine is needed. Exit 77 without docker-compose.
set -uo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/docker
command -v docker-compose >/dev/null || { echo "compose_config_test: skipped, no docker-compose (scripts/install-deps.sh)"; exit 77; }
failed=0
check() {  # check TITLE COMMAND...: PASS/FAIL line
  local title=$1 out
  shift
  if out=$("$@" 2>&1); then echo "PASS $title"; else echo "FAIL $title: $out"; failed=1; fi
}
# The deployment file mounts the host's config directory; any will do here.
export EGW_CONFIG_DIR=$root/config/examples
for f in docker-compose.yml docker-compose.deploy.yml; do
  check "docker-compose -f docker/$f config -q" docker-compose -f "$dir/$f" config -q
done
check "docker-compose -f docker/docker-compose.yml --profile wan config -q" \
  docker-compose -f "$dir/docker-compose.yml" --profile wan config -q

# The resolved demo (wan profile included): targets and commands exist.
resolved=$(docker-compose -f "$dir/docker-compose.yml" --profile wan config 2>&1)
for target in $(sed -n -E 's/^ +target: *([a-z]+)$/\1/p' <<<"$resolved" | sort -u); do
  check "build target '$target' is a stage of docker/Dockerfile" grep -Eq "^FROM .* AS $target$" "$dir/Dockerfile"
done
for script in $(sed -n -E 's/^ +- *([a-z-]+\.sh)$/\1/p' <<<"$resolved" | sort -u); do
  check "command $script is in docker/ and in the demo image" \
    bash -c "[[ -x '$dir/$script' ]] && grep -q 'COPY .*docker/$script' '$dir/Dockerfile'"
done
# The deployment: /etc/ensemble-gw is the host's directory, and no single
# file is bind-mounted (sources are absolute paths; named volumes are not).
deploy=$(docker-compose -f "$dir/docker-compose.deploy.yml" config 2>&1)
binds=$(sed -n -E 's/^ +- (\/[^:]+):([^:]+)(:.*)?$/\1 \2/p' <<<"$deploy")
check "deploy: /etc/ensemble-gw is the host's directory, no file mounted alone" \
  bash -c "grep -qx '$EGW_CONFIG_DIR /etc/ensemble-gw' <<<'$binds' && while read -r src dst; do [[ -d \$src ]] || exit 1; done <<<'$binds'"
# nofile: every service's default at most the engine's hard limit (a running
# dockerd's, else this shell's: what scripts/docker-engine.sh would give it).
# A host stricter than the gateway's default connection limit (16,384) is
# told to set EGW_NOFILE instead of failing.
dockerd_pid=$(pgrep -o -x dockerd)
hard=$(sed -n -E 's/^Max open files +[^ ]+ +([^ ]+).*/\1/p' "/proc/${dockerd_pid:-self}/limits" 2>/dev/null)
hard=${hard:-$(ulimit -Hn)}
for f in docker-compose.yml docker-compose.deploy.yml; do
  most=$(docker-compose -f "$dir/$f" config 2>/dev/null | sed -n -E 's/^ +(hard|soft): *([0-9]+)$/\2/p' | sort -n | tail -n1)
  if [[ $hard != unlimited ]] && ((hard < 16384 && ${most:-0} > hard)); then
    echo "SKIP docker/$f: nofile $most is above this host's limit ($hard): set EGW_NOFILE here"
    continue
  fi
  check "docker/$f: nofile ${most:-?} fits the engine's hard limit ($hard)" \
    bash -c "[[ -n '$most' ]] && { [[ '$hard' == unlimited ]] || ((${most:-0} <= $hard)); }"
done
# A WireGuard key is 44 characters of base64 ending in '='.
check "no key material in docker/" bash -c "! grep -rEn '[A-Za-z0-9+/]{43}=' '$dir' --exclude=*.json"
exit $failed
