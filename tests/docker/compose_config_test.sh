#!/usr/bin/env bash
# The compose files validate: `docker-compose config -q` (Debian 12's
# docker-compose 1.29, Compose Specification) on the demo (with and without
# its `wan` profile) and on the deployment file, plus what no schema checks:
# every build names the Dockerfile's stages, every script a service runs is
# in docker/ and copied into the demo image, no key material in any file.
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
# The deployment file mounts the host's config; any path will do here.
export EGW_CONFIG_FILE=$root/config/examples/branch.yaml
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
# A WireGuard key is 44 characters of base64 ending in '='.
check "no key material in docker/" bash -c "! grep -rEn '[A-Za-z0-9+/]{43}=' '$dir' --exclude=*.json"
exit $failed
