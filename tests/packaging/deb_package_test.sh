#!/usr/bin/env bash
# The Debian package, from the already-built binary (cpack installs what is
# built and builds nothing: CMAKE_SKIP_INSTALL_ALL_DEPENDENCY): cpack -G DEB
# into a temporary directory, then dpkg-deb -I (name, version from CMake,
# dependencies from the binary's libraries plus wireguard-tools) and -c (the
# binary, the systemd unit, the man page, the example configs, config.md, the
# dashboard), and, unpacked: the unit runs the packaged binary, the binary
# says the build's version, and the man page renders without a warning and
# describes every command and option `--help` lists. A few seconds.
#   usage: deb_package_test.sh BUILD_DIR ENSEMBLE_GW_BINARY
set -uo pipefail

build=${1:?usage: deb_package_test.sh BUILD_DIR ENSEMBLE_GW_BINARY}
bin=${2:?usage: deb_package_test.sh BUILD_DIR ENSEMBLE_GW_BINARY}
failed=0
line() { echo "$1 $2"; [[ $1 == FAIL ]] && failed=1; return 0; }
for tool in cpack dpkg-deb dpkg-shlibdeps groff; do
  command -v $tool >/dev/null || { echo "SKIP: no $tool here (apt-get install cmake dpkg-dev groff)"; exit 77; }
done
[[ -x $bin ]] || { echo "FAIL: $bin is not built (ninja -C $build ensemble-gw)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! timeout 120 cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp" >"$tmp/cpack.log" 2>&1; then
  line FAIL "cpack -G DEB: $(tail -5 "$tmp/cpack.log")"
  exit 1
fi
debs=("$tmp"/*.deb)
[[ -f ${debs[0]} && ${#debs[@]} -eq 1 ]] || { line FAIL "cpack made no single .deb: $(ls "$tmp")"; exit 1; }
deb=${debs[0]}
version=$("$bin" --version | sed -n 's/^ensemble-gw \([0-9.]*\) (commit \([0-9a-f]*\|unknown\))$/\1/p')
[[ -n $version ]] && line PASS "ensemble-gw --version: $("$bin" --version)" ||
  line FAIL "ensemble-gw --version: '$("$bin" --version 2>&1)'"
line PASS "built $(basename "$deb") ($(stat -c %s "$deb") bytes)"

info=$(dpkg-deb -I "$deb")
field() { sed -n "s/^ $1: //p" <<<"$info"; }
[[ $(field Package) == ensemble-gw ]] && line PASS "Package: ensemble-gw" || line FAIL "Package: '$(field Package)'"
[[ $(field Version) == "$version" ]] && line PASS "Version: $version (CMake's project version)" ||
  line FAIL "Version: '$(field Version)', the binary says '$version'"
depends=$(field Depends)
for dep in wireguard-tools libyaml-cpp libnftables libc6; do
  [[ $depends == *"$dep"* ]] && line PASS "Depends on $dep" || line FAIL "Depends lacks $dep: '$depends'"
done
[[ -n $(field Maintainer) && -n $(field Description) ]] && line PASS "Maintainer and Description set" ||
  line FAIL "no Maintainer or Description"

contents=$(dpkg-deb -c "$deb" | awk '{print $NF}')
for path in ./usr/bin/ensemble-gw ./usr/lib/systemd/system/ensemble-gw.service \
  ./usr/share/man/man8/ensemble-gw.8.gz ./usr/share/doc/ensemble-gw/examples/branch.yaml \
  ./usr/share/doc/ensemble-gw/examples/hub.yaml ./usr/share/doc/ensemble-gw/config.md \
  ./usr/share/doc/ensemble-gw/grafana-dashboard.json; do
  grep -qxF "$path" <<<"$contents" && line PASS "contains $path" || line FAIL "missing $path"
done
strays=$(grep -v -e '/$' -e '^./usr/bin/' -e '^./usr/lib/systemd/' -e '^./usr/share/' <<<"$contents")
[[ -z $strays ]] && line PASS "nothing outside /usr/bin, /usr/lib/systemd, /usr/share" || line FAIL "strays: $strays"
modes=$(dpkg-deb -c "$deb" | awk '$NF == "./usr/bin/ensemble-gw" || $NF ~ /service$/ {print $1, $2}' | sort -u)
[[ $modes == *"-rwxr-xr-x root/root"* && $modes == *"-rw-r--r-- root/root"* ]] &&
  line PASS "owned by root, binary 755, unit 644" || line FAIL "modes: $modes"

dpkg-deb -x "$deb" "$tmp/root"
unit=$tmp/root/usr/lib/systemd/system/ensemble-gw.service
grep -qx 'ExecStart=/usr/bin/ensemble-gw run -c /etc/ensemble-gw/ensemble-gw.yaml' "$unit" &&
  line PASS "the unit runs /usr/bin/ensemble-gw" || line FAIL "unit ExecStart: $(grep ExecStart= "$unit")"
packaged=$("$tmp/root/usr/bin/ensemble-gw" --version 2>&1)
[[ $packaged == "$("$bin" --version)" ]] && line PASS "the packaged binary says '$packaged'" ||
  line FAIL "the packaged binary says '$packaged'"

man=$(zcat "$tmp/root/usr/share/man/man8/ensemble-gw.8.gz")
warnings=$(groff -man -ww -z <<<"$man" 2>&1)
[[ -z $warnings ]] && line PASS "man page renders without warnings" || line FAIL "groff: $warnings"
[[ $man == *"ensemble-gw $version"* ]] && line PASS "man page names version $version" ||
  line FAIL "man page lacks version $version"
text=$(groff -man -Tascii -P -cbou <<<"$man" 2>/dev/null)
# Every subcommand and every long option `--help` shows, in the man page.
words=$("$bin" --help | awk 'tolower($0) ~ /^subcommands:/ {s = 1; next} s && /^  [a-z]/ {print $1}')
for cmd in $words; do
  words+=" $("$bin" "$cmd" --help | grep -o -- '--[a-z][a-z-]*' | tr '\n' ' ')"
done
words+=" $("$bin" --help | grep -o -- '--[a-z][a-z-]*' | tr '\n' ' ')"
missing=""
for w in $(tr ' ' '\n' <<<"$words" | sort -u); do grep -q -- "$w" <<<"$text" || missing+=" $w"; done
[[ -z $missing ]] && line PASS "man page describes every command and option of --help ($(tr ' ' '\n' <<<"$words" | sort -u | xargs))" ||
  line FAIL "man page lacks:$missing"
exit $failed
