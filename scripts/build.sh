#!/usr/bin/env bash
# build.sh [TARGET...] -- installs the dependencies if missing, configures
# build/ and builds the targets (all without any).  Both README commands
# (scripts/main-job, scripts/test) build through here, so they share one
# build folder of one type (RelWithDebInfo) and neither rebuilds the other's
# work.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
