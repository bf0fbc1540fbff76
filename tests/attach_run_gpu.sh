#!/usr/bin/env bash
# attach_run_gpu.sh BUILD SOURCE -- `threadmap run --key EXPR -- ./app` on the GPU
# (skips, exit 77, without a GPU):
#  - skewed (one thread in eight loops 64 times longer, 200 launches): output
#    byte-identical with and without threadmap, and the summary shows the trial
#    kept a regrouping and a positive time saved;
#  - loop_runtime (two launch shapes, a template kernel between), loop_driver
#    (cuLaunchKernelEx and the packed `extra` buffer) and loop_dlopen: outputs
#    byte-identical under run;
#  - profile -- skewed (built with -lineinfo): profile.json names source lines and the
#    report on its output ranks the loop's line first;
#  - a predictor trained on `profile --` output (--predictor, --feature) regroups
#    skewed too, its output byte-identical;
#  - a uniform key (every thread alike) leaves the launches alone after the trial.
# With COMPUTE_SANITIZER set to the tool's path, skewed under run is also checked
# by compute-sanitizer (memcheck, every process).
set -euo pipefail
b=$1 src=$2
tm=$b/threadmap apps=$b/tests/apps
if ! "$tm" device > /dev/null 2>&1; then echo "[  SKIPPED ] no GPU: attach_run_gpu.sh"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$apps/skewed" > "$tmp/plain.txt" 2> "$tmp/plain.err"
"$tm" run -k work --key 'arg0[t]' -- "$apps/skewed" > "$tmp/run.txt" 2> "$tmp/run.err" \
  || { cat "$tmp/run.err"; fail "run -- skewed"; }
cat "$tmp/plain.err" "$tmp/run.err"
cmp "$tmp/plain.txt" "$tmp/run.txt" || fail "skewed's output changed under threadmap run"
line=$(grep '^threadmap run: _Z4workPKiPfi: 200 launches seen' "$tmp/run.err") || fail "no summary line"
saved=$(sed -n 's/.* regrouped by .*; saved \([0-9.]*\) ms measured.*/\1/p' <<< "$line")
[ -n "$saved" ] && awk -v s="$saved" 'BEGIN { exit !(s > 0) }' || fail "no time saved: $line"
echo "ok: skewed: output identical, regrouped, $saved ms saved"

# a predictor trained on what profile -- wrote: the key is each thread's predicted cost
"$tm" profile -q -o "$tmp/prof" -k work -c 2 --feature 'n=arg0:i32[t]' -- "$apps/skewed" 262144 2 > /dev/null \
  || fail "profile -- skewed"
"$tm" train "$tmp/prof/_Z4workPKiPfi" -o "$tmp/model.txt" > /dev/null || fail "train"
# skewed is built with -lineinfo: its blocks' source lines, and the report ranks the loop's
loop=$(grep -n 'for (int i = 0; i < n\[t\]; i++)' "$src/tests/apps/skewed.cu" | cut -d: -f1)
grep -q "\"file\": \".*skewed.cu\"" "$tmp/prof/_Z4workPKiPfi/profile.json" || fail "profile.json: no source lines"
"$tm" report --cfg "$tmp/prof/_Z4workPKiPfi/kernel.ptx" --kernel _Z4workPKiPfi \
  --bbv "$tmp/prof/_Z4workPKiPfi/run0.bbv.npy" > "$tmp/rep.txt" || fail "report on profile -- output"
top=$(grep -A1 '^source lines that cost the most divergence' "$tmp/rep.txt" | tail -1 | awk '{print $1}')
case "$top" in skewed.cu:$loop|skewed.cu:$((loop + 1))) ;; *) cat "$tmp/rep.txt"; fail "top source line $top, not the loop ($loop)";; esac
echo "ok: profile -- skewed (-lineinfo): the report ranks $top, the loop, first"
"$tm" run -k work --predictor "$tmp/model.txt" --feature 'n=arg0:i32[t]' -- "$apps/skewed" \
  > "$tmp/prun.txt" 2> "$tmp/prun.err" || { cat "$tmp/prun.err"; fail "run --predictor -- skewed"; }
grep '^threadmap run:' "$tmp/prun.err"
cmp "$tmp/plain.txt" "$tmp/prun.txt" || fail "skewed's output changed under run --predictor"
grep -q ' regrouped by .*; saved [0-9.]* ms measured' "$tmp/prun.err" || fail "--predictor: nothing regrouped"
echo "ok: skewed with a trained predictor: output identical, regrouped"

# a key that says every thread is alike: nothing pays, launches left alone
"$tm" run -q -o "$tmp/uni" -k work --key '1' -- "$apps/skewed" 262144 60 > "$tmp/uni.txt" 2> /dev/null \
  || fail "run -- skewed with a uniform key"
"$apps/skewed" 262144 60 2> /dev/null | cmp - "$tmp/uni.txt" || fail "output changed (uniform key)"
grep -q '0 regrouped' "$tmp/uni/summary.txt" || { cat "$tmp/uni/summary.txt"; fail "a uniform key regrouped"; }
echo "ok: a uniform key: left alone after the trial, output identical"

"$apps/loop_runtime" 4096 > "$tmp/lplain.txt"
"$tm" run -k count_up --key 'arg0[t]' -- "$apps/loop_runtime" 4096 > "$tmp/lrun.txt" 2> "$tmp/lrun.err" \
  || { cat "$tmp/lrun.err"; fail "run -- loop_runtime"; }
cmp "$tmp/lplain.txt" "$tmp/lrun.txt" || fail "loop_runtime's output changed under run"
grep -q '^threadmap run: _Z8count_upPKiPii: 2 launches seen' "$tmp/lrun.err" || { cat "$tmp/lrun.err"; fail "loop_runtime summary"; }
echo "ok: loop_runtime: output identical"

"$apps/loop_driver" "$apps/loop_kernel.fatbin" > "$tmp/dplain.txt"
"$tm" run -q --key 'arg0[t]' -- "$apps/loop_driver" "$apps/loop_kernel.fatbin" > "$tmp/drun.txt" \
  || fail "run -- loop_driver"
cmp "$tmp/dplain.txt" "$tmp/drun.txt" || fail "loop_driver's output changed under run"
"$apps/loop_dlopen" "$apps/libloop_lib.so" > "$tmp/oplain.txt"
"$tm" run -q -k lib_count --key 'arg0[t]' -- "$apps/loop_dlopen" "$apps/libloop_lib.so" > "$tmp/orun.txt" \
  || fail "run -- loop_dlopen"
cmp "$tmp/oplain.txt" "$tmp/orun.txt" || fail "loop_dlopen's output changed under run"
echo "ok: loop_driver, loop_dlopen: outputs identical"

if [ -n "${COMPUTE_SANITIZER:-}" ]; then
  "$COMPUTE_SANITIZER" --target-processes all "$tm" run -q -k work --key 'arg0[t]' -- \
    "$apps/skewed" 65536 40 > "$tmp/san.txt" 2>&1 || { tail -30 "$tmp/san.txt"; fail "compute-sanitizer"; }
  grep 'ERROR SUMMARY' "$tmp/san.txt"
  ! grep 'ERROR SUMMARY: [1-9]' "$tmp/san.txt" || { grep -m5 -B2 -A12 'Invalid\|Error' "$tmp/san.txt"; fail "sanitizer errors"; }
  echo "ok: compute-sanitizer clean"
fi
