#!/usr/bin/env bash
# Installs every Debian 12 package ensemble-gw needs. Idempotent; run as root.
set -euo pipefail

packages=(
  build-essential g++ cmake ninja-build pkg-config   # toolchain
  libgtest-dev libgmock-dev                          # tests
  libbenchmark-dev                                   # bench/ (Google Benchmark)
  clang libclang-rt-14-dev                           # libFuzzer targets
  libboost-dev libboost-system-dev                   # Boost.Asio drivers
  libssl-dev libspdlog-dev libyaml-cpp-dev           # crypto, logs, config
  prometheus-cpp-dev                                 # /metrics: the text format (served by our own Asio server)
  libnftables-dev libcli11-dev                       # transparent capture rules, the command line
  libndpi-dev                                        # application detection by host name and address (nDPI 4.2)
  wireguard-tools iproute2 nftables                  # keys (wg genkey), netns lab
  ethtool                                            # bench/secure_tunnel: records the veth offloads
  python3 python3-venv                               # Noise interop test (build/pyenv)
  python3-matplotlib                                 # bench/run's plots
  nginx nghttp2-client                               # bench/run's HTTP/2 page (h2-page)
  docker-compose                                     # tests/docker: validates docker/*.yml (no engine needed)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install-deps: missing packages (${missing[*]}); run as root" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
