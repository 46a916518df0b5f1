#!/usr/bin/env bash
# Builds the comparison peers of bench/secure_tunnel into a cache outside git
# (default build/peers/bin) and reuses them when present:
#   wireguard-go   golang.zx2c4.com/wireguard@latest, from the Go module proxy
#   kcptun-client, kcptun-server   github.com/xtaci/kcptun
# and checks the Debian packages of bench/gateway's other contenders, haproxy
# and shadowsocks-libev (installed with apt-get when run as root, else named):
# bench-only, like the peers, so neither scripts/install-deps.sh nor the
# tests need them.
#
#   bench/secure_tunnel/peers.sh [PEERS_DIR]
#   EGW_PEERS_REBUILD=1   rebuild (e.g. to pick up a newer @latest)
#   EGW_PEERS_NO_KCPTUN=1 skip kcptun (no access to github.com; bench/gateway --dataplane needs none)
#   GO=/path/to/go        the Go toolchain (default: go on PATH, else /usr/local/go/bin/go)
#   KCPTUN_GIT=DIR        a clone of github.com/xtaci/kcptun (see below)
#
# kcptun: upstream reset the repository to a "compliance-only" state on
# 2026-02-09 (commit 35c4168 removes every tool) and the Go module proxy answers
# 403/404 for github.com/xtaci/kcptun and github.com/xtaci/kcp-go/v5, so
# `go install ...@latest` cannot work. We try it anyway (should it come back),
# then build the last commit that still has the tools, f788cbb (2026-01-26,
# kcp-go v5.6.64, smux v1.5.52), from a git clone with its vendor/ directory
# (no network needed for its dependencies). The clone is $KCPTUN_GIT, else
# `git clone https://github.com/xtaci/kcptun`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
peers=${1:-$root/build/peers}
bin=$peers/bin
mkdir -p "$bin"
kcptun_commit=f788cbb

debs=(haproxy shadowsocks-libev)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "peers.sh: apt-get install ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "peers.sh: bench/gateway's haproxy and shadowsocks contenders need ${missing[*]} (apt-get install, as root)" >&2
  fi
fi

go=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
[[ -x $go ]] || { echo "peers.sh: no Go toolchain (set GO=/path/to/go)" >&2; exit 1; }

# Module cache and build cache inside the peers dir, so nothing lands in $HOME.
export GOPATH=$peers/gopath GOCACHE=$peers/gocache GOFLAGS=-modcacherw
export GOTOOLCHAIN=local CGO_ENABLED=0
fresh() { [[ -x $bin/$1 && -z ${EGW_PEERS_REBUILD:-} ]]; }

if ! fresh wireguard-go; then
  echo "peers.sh: go install golang.zx2c4.com/wireguard@latest" >&2
  tmp=$(mktemp -d)
  GOBIN=$tmp "$go" install golang.zx2c4.com/wireguard@latest
  mv "$tmp/wireguard" "$bin/wireguard-go"   # the module's main package is named after its last element
  rmdir "$tmp"
fi

if [[ -z ${EGW_PEERS_NO_KCPTUN:-} ]] && { ! fresh kcptun-client || ! fresh kcptun-server; }; then
  tmp=$(mktemp -d)
  echo "peers.sh: go install github.com/xtaci/kcptun/{client,server}@latest" >&2
  if GOBIN=$tmp "$go" install github.com/xtaci/kcptun/client@latest github.com/xtaci/kcptun/server@latest; then
    mv "$tmp/client" "$bin/kcptun-client"; mv "$tmp/server" "$bin/kcptun-server"
    echo "kcptun-source proxy @latest" > "$peers/kcptun-source.txt"
  else
    echo "peers.sh: the module proxy has no kcptun; building commit $kcptun_commit from git (vendored deps)" >&2
    src=${KCPTUN_GIT:-$peers/kcptun.git}
    if [[ ! -d $src ]]; then git clone --bare -q https://github.com/xtaci/kcptun "$src"; fi
    mkdir -p "$peers/src/kcptun"
    git --git-dir="$(git -C "$src" rev-parse --absolute-git-dir)" \
        archive "$kcptun_commit" | tar -x -C "$peers/src/kcptun"
    (cd "$peers/src/kcptun" && "$go" build -mod=vendor -trimpath -ldflags "-s -w -X main.VERSION=git-$kcptun_commit" \
        -o "$bin/kcptun-client" ./client && \
        "$go" build -mod=vendor -trimpath -ldflags "-s -w -X main.VERSION=git-$kcptun_commit" \
        -o "$bin/kcptun-server" ./server)
    echo "kcptun-source git $kcptun_commit (vendored; the proxy has no kcptun)" > "$peers/kcptun-source.txt"
  fi
  rm -rf "$tmp"
fi

# The module versions actually built (go version -m reads the build info).
{
  for b in wireguard-go kcptun-client kcptun-server; do
    [[ -x $bin/$b ]] || continue
    printf '%s %s\n' "$b" "$("$go" version -m "$bin/$b" | awk '$1=="mod"{print $2" "$3; exit}')"
  done
  if [[ -x $bin/kcptun-client ]]; then
    printf 'kcp-go %s\n' "$("$go" version -m "$bin/kcptun-client" | awk '$1=="dep" && $2 ~ /kcp-go/{print $3; exit}')"
  fi
  printf 'go %s\n' "$("$go" env GOVERSION)"
  cat "$peers/kcptun-source.txt" 2>/dev/null || true
} > "$peers/versions.txt"
