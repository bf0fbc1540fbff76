#!/usr/bin/env bash
# gpu_skip.sh BUILD SRC -- every GPU test program (BUILD/test_gpu_*) exits
# 77, which CTest reports as skipped, naming the reason and each test on
# `[  SKIPPED ]` lines, when the driver says there is no GPU; and fails
# (neither 0 nor 77) when the driver fails for another reason.  The driver
# is a stand-in libcuda (THREADMAP_LIBCUDA) whose every call returns one
# CUresult: 100 (CUDA_ERROR_NO_DEVICE) or 999 (CUDA_ERROR_UNKNOWN).
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for r in 100 999; do
  for f in $(grep -o '"cu[A-Za-z0-9_]*"' "$src/runtime/cuda.c" | tr -d '"' | sort -u); do
    echo "int $f(void) { return $r; }"
  done > "$tmp/cuda$r.c"
  cc -shared -fPIC -o "$tmp/libcuda$r.so" "$tmp/cuda$r.c"
done
n=0
for t in "$build"/test_gpu_*; do
  name=$(basename "$t")
  rc=0
  THREADMAP_LIBCUDA="$tmp/libcuda100.so" "$t" > "$tmp/out" 2>&1 || rc=$?
  if [ "$rc" -ne 77 ] || ! grep -q '^\[  SKIPPED \] no GPU: ' "$tmp/out" ||
     [ "$(grep -c '^\[  SKIPPED \]' "$tmp/out")" -lt 2 ]; then
    echo "FAIL: $name without a GPU exited $rc (want 77 and [  SKIPPED ] lines):"; cat "$tmp/out"
    exit 1
  fi
  skipped=$(grep -c '^\[  SKIPPED \]' "$tmp/out")
  rc=0
  THREADMAP_LIBCUDA="$tmp/libcuda999.so" "$t" > "$tmp/out" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 77 ]; then
    echo "FAIL: $name passed or skipped (exit $rc) when the driver fails:"; cat "$tmp/out"
    exit 1
  fi
  echo "ok: $name: skipped without a GPU ($skipped skip lines), fails on a driver error (exit $rc)"
  n=$((n + 1))
done
[ "$n" -ge 7 ] || { echo "FAIL: only $n GPU test programs in $build"; exit 1; }
