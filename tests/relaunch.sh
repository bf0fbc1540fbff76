#!/usr/bin/env bash
# relaunch.sh SRC -- benchmarks/relaunch.py on the committed bench run: at
# the run's own L it must reproduce the bench's speedups (its self-check) and
# the mean report.md printed; a run whose speedups it cannot reproduce is
# refused.  Exit 77 without python3.
set -u
src=$1
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
run=$src/benchmarks/results/bench-gpu-path/launches1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
out=$(python3 "$src/benchmarks/relaunch.py" "$run/results.json" 1) || { echo "FAIL: self-check"; exit 1; }
mean=$(printf '%s\n' "$out" | sed -n 's/^geometric mean over 13 divergent kernels: \([0-9.]*\)x.*/\1/p')
printed=$(sed -n 's/.*per input, geometric mean over the divergent kernels >= 1.5x | - | \([0-9.]*\)x over 13.*/\1/p' "$run/report.md")
[ -n "$mean" ] && [ -n "$printed" ] || { echo "FAIL: no mean ($mean) or none printed ($printed)"; exit 1; }
python3 -c "import sys; sys.exit(abs(round($mean, 2) - $printed) > 1e-9)" ||
    { echo "FAIL: mean $mean, report.md printed $printed"; exit 1; }
python3 - "$run/results.json" "$tmp/bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["kernels"][2]["options"][1]["speedup_total"] *= 1.01
json.dump(d, open(sys.argv[2], "w"))
PY
if python3 "$src/benchmarks/relaunch.py" "$tmp/bad.json" 1000 >/dev/null 2>&1; then
    echo "FAIL: a run with a changed speedup was not refused"; exit 1
fi
python3 "$src/benchmarks/relaunch.py" "$run/results.json" 0 >/dev/null 2>&1 && { echo "FAIL: L = 0 accepted"; exit 1; }
echo "ok: mean $mean at L = 1 (report.md: ${printed}x)"
