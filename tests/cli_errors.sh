#!/usr/bin/env bash
# cli_errors.sh BUILD SOURCE -- bad input of every kind given to the
# `threadmap` command: each must exit 1 with exactly one line on stderr that
# names the file or field, and never crash; bad usage exits 2 with one line
# that says why and points to --help.  Then, for every command, the shared
# option conventions (tests/cli_options.sh).
set -uo pipefail
tm=$1/threadmap src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0

# expect CODE NEEDLE -- cmd...: exit code CODE, one stderr line containing NEEDLE
expect() {
  local code=$1 needle=$2
  shift 3
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$? lines
  lines=$(wc -l < "$tmp/err")
  # bad usage (2): one line that ends with the hint to --help
  [ "$code" -eq 2 ] && ! grep -q "(see threadmap.*--help)$" "$tmp/err" && lines=0
  if [ "$rc" -ne "$code" ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$needle" "$tmp/err"; then
    echo "FAIL: $* -> exit $rc (want $code), $lines stderr lines (want 1), needle '$needle':"
    sed 's/^/    /' "$tmp/err"
    fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
}

printf '.version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  ret\n' > "$tmp/bad.ptx"
printf '{"source": "x.cu", "kernel": "k", "block": 2000, "threads": 32, "args": []}' > "$tmp/bad.json"
printf 'not an npy file at all' > "$tmp/bad.npy"
printf 'add.f32\tfour\t-\tsrc\n' > "$tmp/bad.tsv"
printf 'threadmap-predictor\nversion 1\ngarbage\n' > "$tmp/bad.model"
head -c 100 /dev/urandom > "$tmp/random.ptx"

expect 1 bad.ptx    -- "$tm" cfg "$tmp/bad.ptx"
expect 1 random.ptx -- "$tm" cfg "$tmp/random.ptx"
expect 1 bad.ptx    -- "$tm" instrument "$tmp/bad.ptx" -o "$tmp/o.ptx"
expect 1 nope.ptx   -- "$tm" cfg "$tmp/nope.ptx"
expect 1 bad.json   -- "$tm" safety "$tmp/bad.json"
expect 1 bad.npy    -- "$tm" estimate --bbv "$tmp/bad.npy" --block-latency "$tmp/bad.npy"
expect 1 kernel.ptx -- "$tm" predict "$src/examples/divergent/recorded/kernel.ptx" --features "$tmp/bad.npy" -o "$tmp/o.npy"
expect 1 bad.model  -- "$tm" predict "$tmp/bad.model" --features "$tmp/bad.npy" -o "$tmp/o.npy"
expect 1 bad.npy    -- "$tm" train --features "$tmp/bad.npy" --bbv "$tmp/bad.npy" --kernel k -o "$tmp/m"
expect 2 unknown    -- "$tm" frobnicate
expect 2 --bbv      -- "$tm" estimate
expect 2 --algo     -- "$tm" regroup --bbv x.npy --block-latency y.npy -o p.npy
expect 2 "--json goes with --list"   -- "$tm" latency --measure --json
expect 2 "--base go with --measure"  -- "$tm" latency --list --reps 3
expect 2 "give -o"                   -- "$tm" train --json --kernel k --bbv b.npy --features f.npy
expect 2 "give MODEL"                -- "$tm" predict --json --features f.npy -o b.npy
# a valid BBV and a bad latency table
mkdir -p "$tmp/rec"
gunzip -c "$src/examples/divergent/recorded/run0.bbv.npy.gz" > "$tmp/rec/b.npy"
cp "$src/examples/divergent/recorded/run0.bbv.npy.json" "$tmp/rec/b.npy.json"
expect 1 bad.tsv -- "$tm" estimate --bbv "$tmp/rec/b.npy" --cfg "$src/examples/divergent/recorded/kernel.ptx" --kernel divergent --table "$tmp/bad.tsv"
expect 2 "in [1, 64]" -- "$tm" regroup --algo sorting --bbv "$tmp/rec/b.npy" --block-latency "$tmp/rec/b.npy" --threads 65 -o "$tmp/p.npy"
expect 2 "--sass only with --cfg" -- "$tm" estimate --bbv "$tmp/rec/b.npy" --block-latency "$tmp/rec/b.npy" --sass sm_90
TMAP_PTXAS=/nonexistent/ptxas expect 1 "SASS counts: TMAP_PTXAS" -- "$tm" estimate --bbv "$tmp/rec/b.npy" --cfg "$src/examples/divergent/recorded/kernel.ptx" --kernel divergent --sass sm_90
# a BBV without a sidecar whose columns are not the CFG's blocks (issue 14 item 5), and
# a latency beyond 1e15 cycles (item 6): refused with the file, line or counts
cp "$tmp/rec/b.npy" "$tmp/rec/nosidecar.npy"
expect 1 "nosidecar.npy: 17 columns, but kernel warp_shuffle of" -- "$tm" estimate --bbv "$tmp/rec/nosidecar.npy" --cfg "$src/tests/sass/warp_shuffle.ptx" --kernel warp_shuffle
printf 'class:default\t1e308\t-\tsrc\n' > "$tmp/huge.tsv"
expect 1 "huge.tsv:1: latency 1e+308 is not in [0, 1e+15] cycles" -- "$tm" estimate --bbv "$tmp/rec/b.npy" --cfg "$src/examples/divergent/recorded/kernel.ptx" --kernel divergent --table "$tmp/huge.tsv"
expect 1 "no kernel" -- "$tm" cfg "$src/examples/divergent/recorded/kernel.ptx" --kernel nosuch
# --model and --features: together, and only with the SM model
expect 2 "--model needs --features" -- "$tm" estimate --bbv "$tmp/rec/b.npy" --cfg "$src/examples/divergent/recorded/kernel.ptx" --kernel divergent --model "$tmp/m.txt"
expect 2 "need the SM model" -- "$tm" estimate --bbv "$tmp/rec/b.npy" --block-latency "$tmp/rec/b.npy" --model "$tmp/m.txt" --features "$tmp/f.npy"
expect 2 "need the SM model" -- "$tm" estimate --bbv "$tmp/rec/b.npy" --block-latency "$tmp/rec/b.npy" --features "$tmp/f.npy"
expect 1 "threads, but the BBV has" -- "$tm" estimate --bbv "$tmp/rec/b.npy" --cfg "$src/examples/divergent/recorded/kernel.ptx" --kernel divergent --features "$src/tests/fuzz/npy/features_64rows.npy"
# manifests: a bad field, named; without a GPU, profile/run exit 3 unless a GPU is present
if "$tm" device > /dev/null 2>&1; then gpu=1; else gpu=0; fi
if [ $gpu -eq 0 ]; then
  expect 3 "no CUDA driver" -- "$tm" profile "$src/examples/divergent/manifest.json" -o "$tmp/p"
  expect 3 "no CUDA driver" -- "$tm" run "$src/examples/divergent/manifest.json"
  expect 3 "no CUDA driver" -- "$tm" estimate --bbv "$tmp/rec/b.npy" --cfg "$src/examples/divergent/recorded/kernel.ptx" --kernel divergent --device 0
  expect 3 "no CUDA driver" -- "$tm" latency --measure -q --only add.s32
fi
expect 1 "'block'" -- "$tm" run "$tmp/bad.json"

. "$(dirname "$0")/cli_options.sh"

echo "cli_errors: $passes passed, $fails failed"
[ "$fails" -eq 0 ]
