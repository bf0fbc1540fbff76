#!/usr/bin/env bash
# cli_bundled.sh BUILD SOURCE -- the command line end to end on the bundled
# recorded BBVs (examples/divergent/recorded, measured on an H200), as the
# README's main job runs it without a GPU: train on input 1, predict input
# 2, report; then checks the numbers in the JSON against `estimate --json`
# on the same BBVs and against what the data must give.  The same train and
# predict with --json, and `latency --list --json`, must print JSON with the
# documented keys and write the same files as without --json.  With
# nvdisasm (SASS counts), `estimate --sass` must change only the SIMD
# efficiency, whose thread and warp instruction totals it prints.
# `regroup --threads 4` must write the permutation `--threads 1` writes.
# `train DIR` (the README's command) trains on the recorded folder itself:
# every run its profile.json lists, with its feature names.
# Every JSON output states units in its keys (_cycles, _pct, _frac) and none
# has the old names; the report names the device and mechanism it can know.
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
"$tm" train --features "$tmp/run0.features.npy" --bbv "$tmp/run0.bbv.npy" --kernel divergent \
  --feature-names steps,cls,steps_if_cls,steps_if_not_cls -o "$tmp/model_j.txt" --json > "$tmp/train.json"
cmp "$tmp/model.txt" "$tmp/model_j.txt"
"$tm" train --features "$tmp/run0.features.npy" --bbv "$tmp/run0.bbv.npy" --features \
  "$tmp/run1.features.npy" --bbv "$tmp/run1.bbv.npy" --kernel divergent --folds 0 \
  -o "$tmp/model2.txt" --json > "$tmp/train2.json"
"$tm" predict "$tmp/model_j.txt" --features "$tmp/run1.features.npy" -o "$tmp/pred_j.npy" \
  --json > "$tmp/predict.json"
cmp "$tmp/pred.npy" "$tmp/pred_j.npy"
cmp "$tmp/pred.npy.json" "$tmp/pred_j.npy.json"
"$tm" train "$tmp" -o "$tmp/model_dir.txt" --json > "$tmp/train_dir.json"
"$tm" latency --list > "$tmp/list.tsv"
"$tm" latency --list --json > "$tmp/list.json"
# from the source folder: the latency table lies below it, so the report names it relatively
(cd "$src" && "$tm" report --bbv "$tmp/pred.npy" --cfg "$tmp/kernel.ptx" --kernel divergent \
  --blocks-per-sm 8 --format json) > "$tmp/report.json"
"$tm" estimate --bbv "$tmp/pred.npy" --cfg "$tmp/kernel.ptx" --kernel divergent --blocks-per-sm 8 \
  --json > "$tmp/estimate.json"
# the same predicted BBVs with the predictor's residuals: the expected slowest lane
"$tm" estimate --bbv "$tmp/pred.npy" --cfg "$tmp/kernel.ptx" --kernel divergent --blocks-per-sm 8 \
  --model "$tmp/model.txt" --features "$tmp/run1.features.npy" --json > "$tmp/estimate_noise.json"
# the permutations do not depend on the CPU threads of the classes pass
for t in 1 4; do
  "$tm" regroup --algo greedy-max --bbv "$tmp/run1.bbv.npy" --cfg "$tmp/kernel.ptx" \
    --kernel divergent --threads $t -o "$tmp/perm$t.npy" --json > "$tmp/regroup$t.json"
done
cmp "$tmp/perm1.npy" "$tmp/perm4.npy"
"$tm" estimate --bbv "$tmp/run1.bbv.npy" --cfg "$tmp/kernel.ptx" --kernel divergent \
  --blocks-per-sm 8 --json > "$tmp/measured.json"
# --features alone keys the constant reads; this kernel has none: the same model
"$tm" estimate --bbv "$tmp/run1.bbv.npy" --cfg "$tmp/kernel.ptx" --kernel divergent \
  --blocks-per-sm 8 --features "$tmp/run1.features.npy" --json > "$tmp/measured_feat.json"
python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
rep = json.load(open(d + "/report.json"))
est = json.load(open(d + "/estimate.json"))
# the residuals only raise a warp's busiest lane: never a shorter time
noisy = json.load(open(d + "/estimate_noise.json"))
assert noisy["sm90_cycles"] >= est["sm90_cycles"] > 0, (noisy["sm90_cycles"], est["sm90_cycles"])
meas = json.load(open(d + "/measured.json"))
assert json.load(open(d + "/measured_feat.json"))["sm90_cycles"] == meas["sm90_cycles"]
orig = rep["rows"][0]
assert rep["threads"] == 65536 and rep["blocks"] == 17, (rep["threads"], rep["blocks"])
assert [r["name"] for r in rep["rows"]] == ["original", "sorting", "greedy", "greedy-max", "bin-and-deal"]
# keys state their units; the old names are gone from every output
old = {"bbv_weighted", "bbv_weighted_scheduled", "zero_divergence_bound", "divergent_warp_ratio",
       "simd_efficiency", "gain"}
for o in [rep, est, meas] + rep["rows"]:
    assert not old & set(o), (old & set(o))
for k in ("bbv_weighted_cycles", "bbv_weighted_scheduled_cycles", "divergent_warps_pct",
          "simd_active_threads_per_inst", "simd_efficiency_pct"):
    assert abs(orig[k] - est[k]) <= 1e-9 * max(1.0, abs(est[k])), (k, orig[k], est[k])
assert abs(orig["simd_efficiency_pct"] - 100 * orig["simd_active_threads_per_inst"] / 32) < 1e-9
# the zero-divergence time is one per kernel, below the original's time
z = rep["zero_divergence_cycles"]
assert z == est["zero_divergence_cycles"] and 0 < z < orig["bbv_weighted_scheduled_cycles"], z
assert all("zero_divergence_cycles" not in r for r in rep["rows"])
rg = json.load(open(d + "/regroup1.json"))
assert [c["algo"] for c in rg["candidates"]] == ["identity", "greedy-max"], rg["candidates"]
assert rg["zero_divergence_cycles"] == meas["zero_divergence_cycles"]
for c in rg["candidates"]:
    assert not old & set(c) and {"gain_frac", "bbv_weighted_scheduled_cycles"} <= set(c), c
assert rg["candidates"][0]["bbv_weighted_scheduled_cycles"] == meas["bbv_weighted_scheduled_cycles"]
# the report names the device (profile.json beside the PTX), the mechanism and a relative table
assert rep["device"] == "NVIDIA H200", rep["device"]
assert rep["mechanism"] == "layout transform", rep["mechanism"]
assert not rep["latency_table"].startswith("/") and rep["latency_table"].endswith("sm_90.tsv")
# the regression predicts input 2's BBVs within 1% on the model's main metric
s = "bbv_weighted_scheduled_cycles"
rel = abs(est[s] - meas[s]) / meas[s]
assert rel < 0.01, rel
# every warp of the original mixes long and short threads; a regrouping fixes most
assert orig["divergent_warps_pct"] == 100.0
assert all(r["divergent_warps_pct"] < 10.0 for r in rep["rows"][1:])
assert sum(r["chosen"] for r in rep["rows"]) == 1
print("cli_bundled: report.json agrees with estimate on the bundled BBVs "
      "(scheduled %.0f cycles; prediction within %.2f%% of the measured BBVs)"
      % (orig[s], 100 * rel))

def npy_shape(path):
    """The shape in a .npy header (format 1.0, as threadmap writes)."""
    import ast, struct
    with open(path, "rb") as f:
        head = f.read(10)
        assert head[:6] == b"\x93NUMPY" and head[6] == 1, path
        return ast.literal_eval(f.read(struct.unpack("<H", head[8:10])[0]).decode())["shape"]

def is_num(v):
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))

tr = json.load(open(d + "/train.json"))
names = json.load(open(d + "/run0.bbv.npy.json"))["blocks"]
nb = npy_shape(d + "/run0.bbv.npy")[1]
assert tr["kernel"] == "divergent" and tr["runs"] == 1 and tr["threads"] == 65536, tr["kernel"]
assert tr["nblocks"] == nb == len(tr["blocks"]) == 17 and tr["nfeatures"] == 4
assert tr["feature_names"] == ["steps", "cls", "steps_if_cls", "steps_if_not_cls"]
assert tr["output"] == d + "/model_j.txt"
for i, b in enumerate(tr["blocks"]):
    assert sorted(b) == ["index", "name", "r2", "rank", "rms_error"], b
    assert b["index"] == i and b["name"] == names[i] and isinstance(b["rank"], int), b
    assert is_num(b["r2"]) and is_num(b["rms_error"]), b
[cv] = tr["cross_validation"]
assert cv["kind"] == "k-fold over threads" and cv["folds"] == 5 and is_num(cv["rms_error"])
assert len(cv["rms_error_per_block"]) == nb and all(map(is_num, cv["rms_error_per_block"]))
tr2 = json.load(open(d + "/train2.json"))
assert tr2["runs"] == 2 and tr2["threads"] == 2 * 65536 and tr2["feature_names"] == ["f0", "f1", "f2", "f3"]
assert [(c["kind"], c["folds"]) for c in tr2["cross_validation"]] == [("leave one run out", 2)]

trd = json.load(open(d + "/train_dir.json"))
assert trd["runs"] == 2 and trd["threads"] == 2 * 65536 and trd["kernel"] == "divergent", trd["runs"]
assert trd["feature_names"] == ["steps", "cls", "steps_if_cls", "steps_if_not_cls"]

pr = json.load(open(d + "/predict.json"))
assert pr == {"output": d + "/pred_j.npy", "sidecar": d + "/pred_j.npy.json",
              "model": d + "/model_j.txt", "kernel": "divergent", "nfeatures": 4,
              "threads": npy_shape(d + "/pred_j.npy")[0], "blocks": npy_shape(d + "/pred_j.npy")[1]}, pr
assert pr["blocks"] == nb and pr["threads"] == npy_shape(d + "/run1.features.npy")[0]

ops = json.load(open(d + "/list.json"))
rows = [l.split("\t") for l in open(d + "/list.tsv").read().splitlines()[1:]]
assert [o["opcode"] for o in ops] == [r[0] for r in rows] and len(ops) > 40
for o, r in zip(ops, rows):
    assert sorted(o) == ["chain", "class", "min_arch", "opcode"] and o["class"] == r[1], o
    assert r[2].startswith(o["chain"]) and o["min_arch"].startswith("sm_"), (o, r)
print("cli_bundled: train, predict and latency --list print the documented JSON "
      "(%d blocks, %d opcodes)" % (nb, len(ops)))
PY

if "$tm" estimate --bbv "$tmp/run1.bbv.npy" --cfg "$tmp/kernel.ptx" --kernel divergent \
    --blocks-per-sm 8 --sass sm_90 --json > "$tmp/sass.json" 2> "$tmp/sass.err"; then
  python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
ptx = json.load(open(d + "/measured.json"))
sass = json.load(open(d + "/sass.json"))
for k in ("bbv_weighted_cycles", "bbv_weighted_scheduled_cycles", "zero_divergence_cycles",
          "divergent_warps_pct", "divergent_branches"):
    assert sass[k] == ptx[k], (k, sass[k], ptx[k])
t, w = sass["thread_instructions"], sass["warp_instructions"]
assert 0 < w <= t <= 32 * w, (t, w)
assert abs(sass["simd_active_threads_per_inst"] - t / w) < 1e-9 * t / w
assert abs(sass["simd_efficiency_pct"] - 100 * t / w / 32) < 1e-9 * t / w
assert sass["warp_instructions"] != ptx["warp_instructions"]  # other weights
print("cli_bundled: estimate --sass: SIMD efficiency %.2f of 32 with SASS weights, %.2f with PTX"
      % (sass["simd_active_threads_per_inst"], ptx["simd_active_threads_per_inst"]))
PY
elif grep -q "not found" "$tmp/sass.err"; then
  echo "[  SKIPPED ] cli_bundled: estimate --sass: $(cat "$tmp/sass.err")"
else
  cat "$tmp/sass.err" >&2
  exit 1
fi
