#!/usr/bin/env bash
# deps.sh -- installs what threadmap builds with, from Debian's packages, if
# missing: GSL (regression), jansson (JSON), CMocka (tests), cmake, a C
# compiler, clang (fuzzing).  The CUDA toolkit is expected at /usr/local/cuda.
# nvdisasm (SASS counts, `--sass`) and cuobjdump (attach mode's fallback,
# compared against in test_attach), when the toolkit lacks them, come from
# PyPI into .tools/; without them only the tests that need them skip.
# A registry that is slow or down ends with a clear message, not a hang.
set -euo pipefail
pkgs=(libgsl-dev libjansson-dev libcmocka-dev cmake gcc clang pkg-config)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if ! timeout 600 $sudo apt-get update -qq -o Acquire::Retries=2 -o Acquire::http::Timeout=30; then
    echo "deps: FAILED: 'apt-get update' did not finish (package registry slow or down)" >&2
    exit 1
  fi
  if ! timeout 900 $sudo apt-get install -y -qq -o Acquire::Retries=2 \
      -o Acquire::http::Timeout=30 "${missing[@]}" >/dev/null; then
    echo "deps: FAILED: could not install ${missing[*]} (package registry slow or down)" >&2
    exit 1
  fi
fi
if [ ! -x /usr/local/cuda/bin/ptxas ] || [ ! -e /usr/local/cuda/include/nvrtc.h ]; then
  echo "deps: FAILED: the CUDA toolkit (NVRTC, ptxas; 12.x or 13.x) is expected at /usr/local/cuda" >&2
  exit 1
fi

# fetch TOOL NOTE: TOOL from PyPI (nvidia-cuda-TOOL) into .tools/TOOL unless
# the toolkit, PATH or .tools/ has it; NOTE says what skips without it.
fetch() {
  if [ ! -x "/usr/local/cuda/bin/$1" ] && ! command -v "$1" >/dev/null &&
     ! ls .tools/*/nvidia/*/bin/"$1" >/dev/null 2>&1; then
    echo "deps: fetching $1 (PyPI nvidia-cuda-$1) into .tools/"
    if ! timeout 300 python3 -m pip install -q --disable-pip-version-check --no-deps \
        --target ".tools/$1" "nvidia-cuda-$1==13.2.86" >/dev/null 2>&1; then
      echo "deps: note: $1 could not be fetched (PyPI slow or down); $2"
    fi
  fi
}
fetch nvdisasm "the SASS tests will skip"
fetch cuobjdump "test_attach skips its comparison"
