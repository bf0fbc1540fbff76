#!/usr/bin/env bash
# ci.sh -- CI for the Python package: makes a virtual environment in
# build/pyenv (python3-venv from Debian if missing), installs numpy, pytest
# and the package (`pip install ./python`) from PyPI with a timeout, and
# runs python/tests on the installed copy, which finds the repository's
# build/libthreadmap.so (built before: scripts/test).  No GPU: the GPU tests
# skip and say why.  A registry that is slow or down ends with a clear
# message, not a hang.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -e build/libthreadmap.so ] || { echo "python/ci.sh: build/libthreadmap.so missing: build first" >&2; exit 1; }
if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! DEBIAN_FRONTEND=noninteractive timeout -k 10 600 $sudo apt-get install -y -qq \
      -o DPkg::Lock::Timeout=120 python3-venv </dev/null >/dev/null; then
    echo "python/ci.sh: FAILED: could not install python3-venv (package registry slow or down)" >&2
    exit 1
  fi
fi
env=build/pyenv
[ -x $env/bin/python ] || python3 -m venv $env
if ! timeout -k 10 600 $env/bin/pip install -q --disable-pip-version-check --no-input \
    --timeout 30 --retries 2 numpy pytest ./python </dev/null; then
  echo "python/ci.sh: FAILED: pip could not install numpy, pytest and ./python (PyPI slow or down?)" >&2
  exit 1
fi
(cd / && "$OLDPWD/$env/bin/python" -c 'import threadmap; print("python/ci.sh: testing", threadmap.__file__)')
cd python   # pytest (not python -m pytest): the installed copy is imported, not ./threadmap
../$env/bin/pytest -q -rs -p no:cacheprovider tests
