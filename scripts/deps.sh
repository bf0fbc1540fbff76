#!/usr/bin/env bash
# deps.sh -- installs what threadmap builds with, from Debian's packages, if
# missing: GSL (regression), jansson (JSON), CMocka (tests), cmake, C and C++
# compilers (g++ is also nvcc's host compiler), clang (fuzzing), python3
# (test scripts).  The CUDA toolkit is expected at /usr/local/cuda.
# nvdisasm (SASS counts, `--sass`) and cuobjdump (attach mode's fallback,
# compared against in test_attach), when the toolkit lacks them, come from
# PyPI into .tools/; without them only the tests that need them skip.
# Runs without stdin (CI, as root): a registry that is slow or down, or a
# dpkg lock held too long, ends with a clear message, not a hang.
set -euo pipefail
pkgs=(libgsl-dev libjansson-dev libcmocka-dev cmake gcc g++ clang pkg-config python3)
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  apt=(-o Acquire::Retries=2 -o Acquire::http::Timeout=30 -o DPkg::Lock::Timeout=120)
  if ! timeout -k 10 600 $sudo apt-get update -qq "${apt[@]}" </dev/null; then
    echo "deps: FAILED: 'apt-get update' did not finish (package registry slow or down)" >&2
    exit 1
  fi
  if ! timeout -k 10 900 $sudo apt-get install -y -qq "${apt[@]}" "${missing[@]}" </dev/null >/dev/null; then
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
    echo "deps: fetching $1 (PyPI nvidia-cuda-$1) into .tools/" >&2
    if ! timeout -k 10 120 python3 -m pip install -q --disable-pip-version-check --no-input \
        --timeout 20 --retries 1 --no-deps \
        --target ".tools/$1" "nvidia-cuda-$1==13.2.86" >/dev/null 2>&1; then
      echo "deps: note: $1 could not be fetched (PyPI slow or down); $2" >&2
    fi
  fi
}
fetch nvdisasm "the SASS tests will skip"
fetch cuobjdump "test_attach skips its comparison"
