#!/usr/bin/env bash
# cli_bundled.sh BUILD SOURCE -- the command line end to end on the bundled
# recorded BBVs (examples/divergent/recorded, measured on an H200), as the
# README's main job runs it without a GPU: train on input 1, predict input
# 2, report; then checks the numbers in the JSON against `estimate --json`
# on the same BBVs and against what the data must give.
set -euo pipefail
tm=$1/threadmap src=$2
rec=$src/examples/divergent/recorded
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$rec"/*.gz; do gunzip -c "$f" > "$tmp/$(basename "$f" .gz)"; done
cp "$rec"/*.json "$rec/kernel.ptx" "$tmp/"
"$tm" train --features "$tmp/run0.features.npy" --bbv "$tmp/run0.bbv.npy" --kernel divergent \
  --feature-names steps,cls,steps_if_cls,steps_if_not_cls -o "$tmp/model.txt" > "$tmp/train.txt"
"$tm" predict "$tmp/model.txt" --features "$tmp/run1.features.npy" -o "$tmp/pred.npy" > /dev/null
"$tm" report --bbv "$tmp/pred.npy" --cfg "$tmp/kernel.ptx" --kernel divergent --blocks-per-sm 8 \
  --format json > "$tmp/report.json"
"$tm" estimate --bbv "$tmp/pred.npy" --cfg "$tmp/kernel.ptx" --kernel divergent --blocks-per-sm 8 \
  --json > "$tmp/estimate.json"
"$tm" estimate --bbv "$tmp/run1.bbv.npy" --cfg "$tmp/kernel.ptx" --kernel divergent \
  --blocks-per-sm 8 --json > "$tmp/measured.json"
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
rep = json.load(open(d + "/report.json"))
est = json.load(open(d + "/estimate.json"))
meas = json.load(open(d + "/measured.json"))
orig = rep["rows"][0]
assert rep["threads"] == 65536 and rep["blocks"] == 17, (rep["threads"], rep["blocks"])
assert [r["name"] for r in rep["rows"]] == ["original", "sorting", "greedy", "greedy-max"]
for k in ("bbv_weighted", "bbv_weighted_scheduled", "zero_divergence_bound",
          "divergent_warp_ratio", "simd_efficiency"):
    assert abs(orig[k] - est[k]) <= 1e-9 * max(1.0, abs(est[k])), (k, orig[k], est[k])
# the regression predicts input 2's BBVs within 1% on the model's main metric
rel = abs(est["bbv_weighted_scheduled"] - meas["bbv_weighted_scheduled"]) / meas["bbv_weighted_scheduled"]
assert rel < 0.01, rel
# every warp of the original mixes long and short threads; a regrouping fixes most
assert orig["divergent_warp_ratio"] == 100.0
assert all(r["divergent_warp_ratio"] < 10.0 for r in rep["rows"][1:])
assert sum(r["chosen"] for r in rep["rows"]) == 1
print("cli_bundled: report.json agrees with estimate on the bundled BBVs "
      "(scheduled %.0f cycles; prediction within %.2f%% of the measured BBVs)"
      % (orig["bbv_weighted_scheduled"], 100 * rel))
PY
