#!/usr/bin/env bash
# build.sh [TARGET...] -- installs the dependencies if missing, configures
# build/ and builds the targets (all without any).  Both README commands
# (scripts/main-job, scripts/test) build through here, so they share one
# build folder of one type (RelWithDebInfo) and neither rebuilds the other's
# work.  The GPU regroup path (runtime/*.cu: CUB's sorts, minutes of nvcc per
# file and architecture, most of the build's time) is compiled for this
# machine's GPUs (their compute capability, from nvidia-smi) plus sm_75 PTX,
# which the driver compiles for any later GPU when it first loads it.
# Without a GPU it is left out, as nothing here could run it (regroup()
# then chooses on the CPU), unless TMAP_CUDA_ARCHS names the architectures
# to build it for.  A plain `cmake` builds it for every supported
# architecture (CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
archs=${TMAP_CUDA_ARCHS:-}
gpu_regroup=ON
if [ -z "$archs" ]; then
  archs="75-virtual"
  nvidia-smi -L >/dev/null 2>&1 || gpu_regroup=OFF
  # each GPU's compute capability (9.0 -> 90-real), sorted and unique
  for cc in $(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null |
              tr -d ' .' | grep -x '[0-9]\+' | sort -u); do
    archs="$cc-real;$archs"
  done
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CUDA_ARCHITECTURES=$archs" \
  -DTMAP_GPU_REGROUP=$gpu_regroup >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
