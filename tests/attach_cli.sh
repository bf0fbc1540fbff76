#!/usr/bin/env bash
# attach_cli.sh BUILD [SANITIZERS] -- `threadmap profile|run -- ./app` without a GPU:
# usage errors (exit 2, the reason first; run's key expression errors with their
# column), the application run with the attach library preloaded and the options
# in its environment, its exit status passed on, and "nothing profiled" reported
# when no kernel was launched; and source lines end to end (-lineinfo PTX of the
# example kernel with its recorded BBVs: cfg and the report name its loops' lines).
set -uo pipefail
tm=$1/threadmap san=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
expect() { # expect CODE TEXT -- CMD...: exit status CODE, TEXT in its stderr
    local code=$1 text=$2; shift 3
    "$@" > "$tmp/out" 2> "$tmp/err"; local got=$?
    [ "$got" = "$code" ] || { cat "$tmp/err"; fail "$* exited $got, not $code"; }
    grep -qF -- "$text" "$tmp/err" || { cat "$tmp/err"; fail "$*: no '$text' on stderr"; }
    echo "ok: $code '$text' <- ${*:2}"
}
expect 2 "not a regular expression" -- "$tm" profile -o "$tmp/d" -k 'a(' -- true
expect 2 "feature 'n=arg1:i16[t]'" -- "$tm" profile -o "$tmp/d" --feature 'n=arg1:i16[t]' -- true
expect 2 "give -o DIR" -- "$tm" profile -k x -- true
expect 2 "give the application after --" -- "$tm" profile -o "$tmp/d" --
expect 2 "give the application after --" -- "$tm" profile -o "$tmp/d" stray -- true
expect 2 "'-3' is not a whole number" -- "$tm" profile -o "$tmp/d" -c -3 -- true
"$tm" profile -h -- | grep -q -- "--launch-skip N" || fail "profile -h -- prints no attach usage"
expect 2 "give the key: --key EXPR" -- "$tm" run -- true
expect 2 "--key: expression 'arg0[t+1]-' at column 11: unexpected end" -- "$tm" run --key 'arg0[t+1]-' -- true
expect 2 "at column 6: a type must be one of" -- "$tm" run --key 'arg0:f16[t]' -- true
expect 2 "at column 1: names neither a pointer argument argK nor a --feature" -- "$tm" run --key 'n[t]' -- true
expect 2 "'0' is not a whole number in [1, 16]" -- "$tm" run --key 'arg0[t]' --trial 0 -- true
expect 2 "unknown option '--key'" -- "$tm" profile -o "$tmp/d" --key 'arg0[t]' -- true
"$tm" run -h -- | grep -q -- "--key EXPR" || fail "run -h -- prints no run-mode usage"
# source lines end to end: the example kernel compiled here with -lineinfo, its recorded
# BBVs (the same 17 blocks): the report ranks its two loops' lines first
src=$(cd "$(dirname "$0")/.." && pwd)
nvcc=/usr/local/cuda/bin/nvcc
if [ -x "$nvcc" ]; then
  "$nvcc" -ptx -lineinfo -arch=sm_90 -o "$tmp/div.ptx" "$src/examples/divergent/divergent.cu" \
    || fail "nvcc -lineinfo"
  gunzip -c "$src/examples/divergent/recorded/run0.bbv.npy.gz" > "$tmp/r0.bbv.npy"
  cp "$src/examples/divergent/recorded/run0.bbv.npy.json" "$tmp/r0.bbv.npy.json"
  "$tm" report --cfg "$tmp/div.ptx" --kernel divergent --bbv "$tmp/r0.bbv.npy" > "$tmp/rep.txt" \
    || fail "report on -lineinfo PTX"
  grep -A2 '^source lines that cost the most divergence' "$tmp/rep.txt" | tail -2 | awk '{print $1}' \
    | tr '\n' ' ' | grep -qx 'divergent.cu:16 divergent.cu:13 ' || { cat "$tmp/rep.txt"; fail "source-line ranking"; }
  "$tm" cfg "$tmp/div.ptx" | grep -q '^  0 divergent/+0 line [0-9]* (divergent.cu:5),' || fail "cfg: no source line"
  echo "ok: the report ranks divergent.cu:16 and :13 (the two loops) first"
else
  echo "[  SKIPPED ] source lines end to end: no $nvcc"
fi
if [ -n "$san" ]; then # the preloaded library would need the sanitizers' runtime first
  echo "[  SKIPPED ] test_attach_cli: running an application under the attach library" \
       "(built with sanitizers: $san)"
  exit 77
fi
expect 1 "no launch was profiled: no kernel launched matching 'count_up'" -- \
  "$tm" profile -o "$tmp/d" -k count_up -- true
expect 5 "the application exited with status 5" -- "$tm" profile -o "$tmp/d" -- sh -c 'exit 5'
# what the application sees: the library first in LD_PRELOAD, the options in its environment
LD_PRELOAD= "$tm" profile -o "$tmp/d" -k 'count_up|scale' -s 2 -c 3 --feature 'n=arg0:i32[t]' \
  --feature 'm=arg1:f32[t+1]' -- sh -c 'env' > "$tmp/env" 2> /dev/null
grep -q "^LD_PRELOAD=.*libthreadmap_attach.so$" "$tmp/env" || fail "LD_PRELOAD: $(grep LD_PRELOAD "$tmp/env")"
for kv in "THREADMAP_ATTACH_OUT=$tmp/d" "THREADMAP_ATTACH_KERNEL=count_up|scale" \
          "THREADMAP_ATTACH_SKIP=2" "THREADMAP_ATTACH_COUNT=3" \
          "THREADMAP_ATTACH_FEATURES=n=arg0:i32[t];m=arg1:f32[t+1]"; do
  grep -qxF "$kv" "$tmp/env" || fail "the application's environment lacks $kv"
done
echo "ok: the application runs preloaded, with the options in its environment"
expect 1 "the application left no run summary" -- "$tm" run --key 'arg0[t]' -- true
expect 7 "the application exited with status 7" -- "$tm" run --key 'arg0[t]' -- sh -c 'exit 7'
LD_PRELOAD= "$tm" run -o "$tmp/r" -k work --feature 'n=arg0:i32[t]' --key 'n*2' --trial 5 \
  --threshold 0.1 -- sh -c 'env' > "$tmp/env" 2> /dev/null
for kv in "THREADMAP_ATTACH_RUN=1" "THREADMAP_ATTACH_KEY=n*2" "THREADMAP_ATTACH_TRIAL=5" \
          "THREADMAP_ATTACH_THRESHOLD=0.10000000000000001" "THREADMAP_ATTACH_KERNEL=work"; do
  grep -qxF "$kv" "$tmp/env" || fail "run: the application's environment lacks $kv"
done
echo "ok: run mode: the options in the application's environment"
