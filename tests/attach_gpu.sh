#!/usr/bin/env bash
# attach_gpu.sh BUILD SOURCE -- `threadmap profile -- ./app` on the GPU with
# the applications of tests/apps (skips, exit 77, without a GPU):
#  - each application's output is byte-identical with and without threadmap;
#  - the BBVs and features of count_up's first launch in loop_runtime (the
#    runtime API, <<<>>>, static cudart) equal, byte for byte, those of
#    `threadmap profile MANIFEST` on the same PTX and the same input;
#  - --launch-skip / --launch-count pick the launches Nsight Compute would,
#    a demangled name (scale<3>) selects the template kernel;
#  - the driver API (cuModuleLoadData, cuLaunchKernelEx, cuLaunchKernel with
#    the packed `extra` buffer) is profiled, each launch with its geometry;
#  - a kernel in a shared library loaded with dlopen is profiled;
#  - a SASS-only binary is reported, naming the kernel and how to rebuild;
#  - a launch captured into a CUDA graph is reported as not profiled;
#  - `threadmap train DIR/KERNEL` fits on what attach mode wrote.
set -euo pipefail
b=$1 src=$2
tm=$b/threadmap apps=$b/tests/apps
if ! "$tm" device > /dev/null 2>&1; then echo "[  SKIPPED ] no GPU: attach_gpu.sh"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
k=_Z8count_upPKiPii

# the runtime API: outputs, then BBVs against the manifest path
"$apps/loop_runtime" 4096 "$tmp/in.bin" > "$tmp/plain.txt"
"$tm" profile -o "$tmp/rt" -k count_up -c 1 --feature 'n=arg0:i32[t]' -- \
  "$apps/loop_runtime" 4096 > "$tmp/attached.txt" 2> "$tmp/rt.err" || { cat "$tmp/rt.err"; fail "profile -- loop_runtime"; }
cmp "$tmp/plain.txt" "$tmp/attached.txt" || fail "loop_runtime's output changed under threadmap"
test -f "$tmp/rt/$k/run0.bbv.npy" || fail "no BBVs for $k"
test ! -e "$tmp/rt/$k/run1.bbv.npy" || fail "--launch-count 1 profiled more"
cat > "$tmp/m.json" <<JSON
{"ptx": "rt/$k/kernel.ptx", "kernel": "$k", "threads": 4096, "block": 128,
 "arrays": [{"name": "n", "type": "i32", "count": "threads", "init": {"raw": "in.bin"},
             "role": "input", "per_thread": 1},
            {"name": "out", "type": "i32", "count": "threads", "role": "output", "per_thread": 1}],
 "args": ["n", "out", {"i32": "threads"}], "features": ["n"]}
JSON
"$tm" profile "$tmp/m.json" -o "$tmp/man" -q
for f in run0.bbv.npy run0.bbv.npy.json run0.features.npy; do
  cmp "$tmp/man/$f" "$tmp/rt/$k/$f" || fail "$f differs between attach and manifest paths"
done
# the same with the shared CUDA runtime, where it can start
if "$apps/loop_runtime_shared" 4096 > "$tmp/shplain.txt" 2> /dev/null; then
  "$tm" profile -o "$tmp/sh" -q -k count_up -c 1 -- "$apps/loop_runtime_shared" 4096 > "$tmp/shattached.txt" \
    || fail "profile -- loop_runtime_shared"
  cmp "$tmp/plain.txt" "$tmp/shattached.txt" || fail "loop_runtime_shared's output changed"
  cmp "$tmp/rt/$k/run0.bbv.npy" "$tmp/sh/$k/run0.bbv.npy" || fail "shared cudart: other BBVs"
  echo "ok: loop_runtime_shared (libcudart.so): output identical, same BBVs"
else
  echo "note: loop_runtime_shared does not start here (no libcudart.so): not checked"
fi
"$tm" train "$tmp/rt/$k" -o "$tmp/model.txt" > /dev/null || fail "train on the attach folder"
echo "ok: loop_runtime: output identical, BBVs and features equal the manifest path's, train reads them"

# selection: the second count_up launch (64-thread blocks), and scale<3> by its demangled name
"$tm" profile -o "$tmp/sel" -q -k '^count_up|scale<3>' -s 1 -c 2 -- "$apps/loop_runtime" 4096 > "$tmp/sel.txt"
cmp "$tmp/plain.txt" "$tmp/sel.txt" || fail "output changed under selection"
cut -f1,2,4,5 "$tmp/sel/launches.tsv" > "$tmp/sel.tsv"
printf '1\t_Z5scaleILi3EEvPii\t32,1,1\t128,1,1\n2\t%s\t64,1,1\t64,1,1\n' "$k" | cmp - "$tmp/sel.tsv" \
  || { cat "$tmp/sel/launches.tsv"; fail "skip/count/demangled selection"; }
echo "ok: selection by skip, count and demangled name"

# the driver API
"$apps/loop_driver" "$apps/loop_kernel.fatbin" > "$tmp/dplain.txt"
"$tm" profile -o "$tmp/drv" -q --feature 'n=arg0:i32[t]' -- "$apps/loop_driver" "$apps/loop_kernel.fatbin" > "$tmp/dattached.txt" \
  || fail "profile -- loop_driver"
cmp "$tmp/dplain.txt" "$tmp/dattached.txt" || fail "loop_driver's output changed under threadmap"
test -f "$tmp/drv/count_up/run1.bbv.npy" || fail "the extra-buffer launch was not profiled"
grep -q '"shared_bytes"' "$tmp/drv/count_up/profile.json" || fail "no launch configuration"
cmp "$tmp/drv/count_up/run0.features.npy" "$tmp/drv/count_up/run1.features.npy" || fail "features differ"
echo "ok: loop_driver: output identical, both launches profiled"

# a kernel in a shared library the application loads with dlopen
"$apps/loop_dlopen" "$apps/libloop_lib.so" > "$tmp/lplain.txt"
"$tm" profile -o "$tmp/lib" -q -k lib_count -- "$apps/loop_dlopen" "$apps/libloop_lib.so" > "$tmp/lattached.txt" \
  || fail "profile -- loop_dlopen"
cmp "$tmp/lplain.txt" "$tmp/lattached.txt" || fail "loop_dlopen's output changed"
test -f "$tmp/lib/_Z9lib_countPKiPii/run0.bbv.npy" || fail "no BBVs for the library's kernel"
echo "ok: loop_dlopen: the kernel of a library loaded at run time profiled, output identical"

# SASS only
"$apps/sass_only" > "$tmp/splain.txt"
if "$tm" profile -o "$tmp/sass" -- "$apps/sass_only" > "$tmp/sattached.txt" 2> "$tmp/sass.err"; then
  fail "a SASS-only binary was profiled"
fi
cmp "$tmp/splain.txt" "$tmp/sattached.txt" || fail "sass_only's output changed"
grep -q "_Z11sass_kernelPi' has SASS only" "$tmp/sass.err" || { cat "$tmp/sass.err"; fail "no SASS-only message"; }
grep -q "arch=compute_90,code=compute_90" "$tmp/sass.err" || fail "no rebuild advice"
echo "ok: sass_only: reported, output identical"

# a launch inside a CUDA graph: reported, not profiled, results unchanged
"$apps/loop_runtime" 4096 - graph > "$tmp/gplain.txt"
cmp "$tmp/plain.txt" "$tmp/gplain.txt" || fail "graph mode computes something else"
if "$tm" profile -o "$tmp/graph" -k count_up -c 1 -- "$apps/loop_runtime" 4096 - graph > "$tmp/gattached.txt" 2> "$tmp/graph.err"; then
  fail "a captured launch was reported profiled"
fi
cmp "$tmp/plain.txt" "$tmp/gattached.txt" || fail "graph mode's output changed"
grep -q "captured into a CUDA graph" "$tmp/graph.err" || { cat "$tmp/graph.err"; fail "no graph message"; }
echo "ok: a launch in a CUDA graph is reported as not profiled, output identical"
