#!/usr/bin/env bash
# python.sh BUILD SOURCE [SANITIZERS] -- the Python package's pytest tests
# (python/tests) against BUILD's libthreadmap.so and command, from the
# source tree, with $TMAP_PYTHON, else BUILD/pyenv's python (python/ci.sh
# makes it: numpy and pytest in a virtual environment), else python3.
# Skips (exit 77, CTest: Skipped) saying why when that python lacks numpy or
# pytest, or when the library is built with sanitizers (Python would need
# their runtime preloaded).
set -euo pipefail
build=$1 src=$2 san=${3:-}
py=python3
[ -x "$build/pyenv/bin/python" ] && py=$build/pyenv/bin/python
py=${TMAP_PYTHON:-$py}
if [ -n "$san" ]; then
  echo "[  SKIPPED ] test_python: the library is built with sanitizers ($san)"
  exit 77
fi
if ! "$py" -c 'import numpy, pytest' 2>/dev/null; then
  echo "[  SKIPPED ] test_python: $py lacks numpy or pytest (python/ci.sh installs them in a venv)"
  exit 77
fi
cd "$src/python"
THREADMAP_LIBRARY="$build/libthreadmap.so" PYTHONPATH="$src/python" \
  "$py" -m pytest -q -rs -p no:cacheprovider tests
