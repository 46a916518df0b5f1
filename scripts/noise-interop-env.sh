#!/usr/bin/env bash
# Creates build/pyenv, a Python venv with the `noiseprotocol` package: the
# independent Noise implementation crypto_tests' interop test talks to
# (tests/crypto/noise_interop.py). Idempotent and cached: does nothing when
# the venv already imports it. A venv because Debian 12's system pip is
# externally managed (PEP 668); python3-venv comes from install-deps.sh.
# The test finds the interpreter at build/pyenv/bin/python3, or $EGW_NOISE_PYTHON.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=build/pyenv
version=0.3.1
if [[ -x $venv/bin/python3 ]] && "$venv/bin/python3" -c "import noise.connection" 2>/dev/null; then
  exit 0
fi
echo "noise-interop-env: creating $venv with noiseprotocol $version"
mkdir -p build
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python3" -m pip install --quiet --disable-pip-version-check "noiseprotocol==$version"
"$venv/bin/python3" -c "import noise.connection"
