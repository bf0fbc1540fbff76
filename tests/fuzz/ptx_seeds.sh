#!/usr/bin/env bash
# ptx_seeds.sh -- regenerates tests/fuzz/ptx: the corpus kernels
# (tests/kernels/*.cu) as nvcc compiles them for sm_90, and with -G, the PTX
# seeds of fuzz_ptx and fuzz_safety (.ci/run).  Committed, so that CI does
# not run nvcc 70 times; run this after changing tests/kernels.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=tests/fuzz/ptx
rm -f $out/*.ptx
for f in tests/kernels/*.cu; do printf '%s\n%s -G\n' "$f" "$f"; done |
  xargs -P"$(nproc)" -L1 sh -c '/usr/local/cuda/bin/nvcc -ptx -arch=sm_90 $1 \
    -o "'$out'/$(basename "$0" .cu)$1.ptx" "$0"'
ls $out/*.ptx | wc -l
