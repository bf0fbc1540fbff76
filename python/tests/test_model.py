"""test_model.py -- train, Predictor, estimate and the BBV files: exact values
on data made here, and on the recorded BBVs the same answers as the CLI."""
import subprocess

import numpy as np
import pytest

import threadmap

NAMES = ["steps", "cls", "steps_if_cls", "steps_if_not_cls"]


def test_train_recovers_a_linear_law_exactly():
    f = (np.arange(64.0) * 37) % 64      # not collinear with the thread id
    bbv = np.stack([np.ones(64), 3 * f + 2], 1).astype(np.uint32)
    p = threadmap.train([(f, bbv)], kernel="k", feature_names=["x"], folds=4)
    assert p.kernel == "k" and p.feature_names == ["x"] and p.nblocks == 2
    assert p.predict([[5.0], [10.0]]).tolist() == [[1, 17], [1, 32]]
    assert p.predict([[5.0]]).dtype == np.uint32
    np.testing.assert_allclose(p.r2, [1.0, 1.0])
    assert p.cross_validation[0].kind == "k-fold over threads"
    assert p.cross_validation[0].rms_error == pytest.approx(0.0, abs=1e-9)


def test_predictor_file_round_trip(tmp_path):
    f = np.arange(32.0)
    bbv = np.stack([f, 2 * f], 1).astype(np.uint32)
    p = threadmap.train([(f, bbv)], kernel="k", folds=0)
    p.save(str(tmp_path / "m.txt"))
    q = threadmap.Predictor.load(str(tmp_path / "m.txt"), kernel="k")
    np.testing.assert_array_equal(p.coef, q.coef)
    np.testing.assert_array_equal(q.predict(f), bbv)


def test_bbv_file_round_trip(tmp_path):
    bbv = np.arange(12, dtype=np.uint32).reshape(4, 3)
    threadmap.save_bbv(str(tmp_path / "b.npy"), bbv, ["k/a", "k/b", "k/c"])
    back, names = threadmap.load_bbv(str(tmp_path / "b.npy"))
    np.testing.assert_array_equal(back, bbv)
    assert names == ["k/a", "k/b", "k/c"]
    assert np.load(tmp_path / "b.npy").tolist() == bbv.tolist()   # NumPy reads it too


def test_estimate_exact_on_two_warps():
    # warp 0: threads run block 1 once or 3 times -> max 3; warp 1: all 0.
    bbv = np.zeros((64, 2), dtype=np.uint32)
    bbv[:, 0] = 1
    bbv[:32, 1] = np.where(np.arange(32) % 2, 3, 1)
    m = threadmap.estimate(bbv, lat=[10.0, 100.0], block_size=64, sms=1, blocks_per_sm=1)
    assert m["warps"] == 2 and m["thread_blocks"] == 1
    np.testing.assert_array_equal(m["warp_cost_cycles"], [10 + 300, 10])
    assert m["bbv_weighted_cycles"] == 320.0
    assert m["divergent_warps_pct"] == 50.0


def test_estimate_under_a_permutation():
    bbv = np.zeros((64, 1), dtype=np.uint32)
    bbv[::2, 0] = 4                     # heavy threads interleaved
    perm = np.argsort(-bbv[:, 0].astype(int), kind="stable")
    a = threadmap.estimate(bbv, lat=[1.0], block_size=64, sms=1, blocks_per_sm=1)
    b = threadmap.estimate(bbv, lat=[1.0], perm=perm, block_size=64, sms=1, blocks_per_sm=1)
    assert a["bbv_weighted_cycles"] == 8.0 and b["bbv_weighted_cycles"] == 4.0


def _recorded_run(recorded, i):
    bbv, names = threadmap.load_bbv(str(recorded / f"run{i}.bbv.npy"))
    return threadmap.load_npy(str(recorded / f"run{i}.features.npy")), bbv, names


def test_recorded_train_predict_equal_the_cli(recorded, cli, tmp_path):
    f0, b0, names = _recorded_run(recorded, 0)
    f1, b1, _ = _recorded_run(recorded, 1)
    assert b0.shape == (65536, 17) and f0.shape == (65536, 4)
    p = threadmap.train([(f0, b0)], kernel="divergent", feature_names=NAMES, block_names=names)
    mine = p.predict(f1)
    subprocess.run([cli, "train", "--features", str(recorded / "run0.features.npy"), "--bbv",
                    str(recorded / "run0.bbv.npy"), "--kernel", "divergent", "--feature-names",
                    ",".join(NAMES), "-o", str(tmp_path / "m.txt")], check=True,
                   capture_output=True)
    subprocess.run([cli, "predict", str(tmp_path / "m.txt"), "--features",
                    str(recorded / "run1.features.npy"), "-o", str(tmp_path / "p.npy")],
                   check=True, capture_output=True)
    np.testing.assert_array_equal(mine, np.load(tmp_path / "p.npy"))
    q = threadmap.Predictor.load(str(tmp_path / "m.txt"))
    np.testing.assert_array_equal(q.coef, p.coef)
    assert q.block_names == names


def test_recorded_estimate_equals_the_cli(recorded, divergent, cli):
    import json
    _, b0, _ = _recorded_run(recorded, 0)
    mine = threadmap.estimate(b0, kernel=divergent, blocks_per_sm=8)
    out = subprocess.run([cli, "estimate", "--bbv", str(recorded / "run0.bbv.npy"), "--cfg",
                          str(recorded / "kernel.ptx"), "--kernel", "divergent",
                          "--blocks-per-sm", "8", "--json"], check=True, capture_output=True,
                         text=True).stdout
    want = json.loads(out)
    for key in ("bbv_weighted_cycles", "bbv_weighted_scheduled_cycles", "divergent_warps_pct",
                "simd_active_threads_per_inst", "warps", "thread_blocks", "sm90_cycles"):
        assert mine[key] == pytest.approx(want[key], rel=1e-12), key
    parts = [mine[f"sm90_{p}_cycles"] for p in ("issue", "latency", "memory")]
    assert parts[2] <= mine["sm90_cycles"] <= max(parts[0] + parts[1], parts[2]) * (1 + 1e-12)
    paper = threadmap.estimate(b0, kernel=divergent, blocks_per_sm=8, metric="scheduled")
    assert np.isnan(paper["sm90_cycles"])
    assert paper["bbv_weighted_scheduled_cycles"] == mine["bbv_weighted_scheduled_cycles"]


def test_predicted_by_equals_the_cli(recorded, divergent, cli, tmp_path):
    """predicted_by=(predictor, features): the expected slowest lane, as the
    CLI's --model and --features; never a shorter time than without."""
    import json
    f0, b0, names = _recorded_run(recorded, 0)
    f1, _, _ = _recorded_run(recorded, 1)
    p = threadmap.train([(f0, b0)], kernel="divergent", feature_names=NAMES, block_names=names,
                        folds=0)
    pred = p.predict(f1)
    plain = threadmap.estimate(pred, kernel=divergent, blocks_per_sm=8)
    mine = threadmap.estimate(pred, kernel=divergent, blocks_per_sm=8, predicted_by=(p, f1))
    assert mine["sm90_cycles"] >= plain["sm90_cycles"] > 0
    p.save(str(tmp_path / "m.txt"))
    threadmap.save_bbv(str(tmp_path / "p.npy"), pred, names)
    out = subprocess.run([cli, "estimate", "--bbv", str(tmp_path / "p.npy"), "--cfg",
                          str(recorded / "kernel.ptx"), "--kernel", "divergent",
                          "--blocks-per-sm", "8", "--model", str(tmp_path / "m.txt"),
                          "--features", str(recorded / "run1.features.npy"), "--json"],
                         check=True, capture_output=True, text=True).stdout
    assert mine["sm90_cycles"] == pytest.approx(json.loads(out)["sm90_cycles"], rel=1e-12)
    assert threadmap.plan(pred, kernel=divergent, blocks_per_sm=8, predicted_by=(p, f1)).perm.size
    with pytest.raises(threadmap.InvalidError, match="needs the SM model"):
        threadmap.estimate(pred, lat=np.ones(pred.shape[1]), predicted_by=(p, f1))
    with pytest.raises(threadmap.InvalidError, match="features"):
        threadmap.estimate(pred, kernel=divergent, predicted_by=(p, f1[:10]))


def test_sass_equals_the_cli(recorded, divergent, cli):
    """sass="sm_90": the SM model issues SASS counts and SIMD efficiency
    weighs by them, as the CLI's --sass (compute_90 gives the same); PTX
    counts without it.  Skips where ptxas or nvdisasm is not found."""
    import json
    try:
        divergent.sass_counts("sm_90")
    except threadmap.ThreadmapError as e:
        pytest.skip(f"no SASS counts here: {e}")
    _, b0, _ = _recorded_run(recorded, 0)
    mine = threadmap.estimate(b0, kernel=divergent, blocks_per_sm=8, sass="sm_90")
    out = subprocess.run([cli, "estimate", "--bbv", str(recorded / "run0.bbv.npy"), "--cfg",
                          str(recorded / "kernel.ptx"), "--kernel", "divergent",
                          "--blocks-per-sm", "8", "--sass", "sm_90", "--json"], check=True,
                         capture_output=True, text=True).stdout
    want = json.loads(out)
    for key in ("sm90_cycles", "simd_active_threads_per_inst"):
        assert mine[key] == pytest.approx(want[key], rel=1e-12), key
    virt = threadmap.estimate(b0, kernel=divergent, blocks_per_sm=8, sass="compute_90")
    assert virt["sm90_cycles"] == mine["sm90_cycles"]
    assert threadmap.plan(b0, kernel=divergent, blocks_per_sm=8,
                          sass="sm_90").inputs.sm.ptr.issue_sass == 1
    assert threadmap.plan(b0, kernel=divergent, blocks_per_sm=8).inputs.sm.ptr.issue_sass == 0
    with pytest.raises(threadmap.InvalidError, match="sass needs a kernel"):
        threadmap.estimate(b0, lat=np.ones(b0.shape[1]), sass="sm_90")


_KEYED_PTX = """.version 8.0
.target sm_90
.address_size 64
.const .align 1 .b8 tab[4096];
.visible .entry keyed(.param .u64 pk)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [pk];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  cvt.u64.u32 %rd4, %r2;
  mov.u64 %rd5, tab;
  add.s64 %rd6, %rd5, %rd4;
  ld.const.u8 %r3, [%rd6];
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_features_key_the_constant_reads(cli, tmp_path):
    """features=: a table of 4096 bytes read at tab[key[tid]] (the thread's
    own data) is priced by the constant cache's capacity: each SM's
    residents read all 256 keys (4 KB, twice the cache) when every lane has
    a key of its own, one row when all share one; the same figure as the
    CLI's --features alone; none without features (the report's caveat)."""
    import json
    k = threadmap.Kernel.from_ptx(_KEYED_PTX, "keyed")
    n = 256 * 8 * 4
    bbv = np.ones((n, 1), np.uint32)
    own = (np.arange(n) % 256).astype(np.float64)
    opts = dict(kernel=k, sms=4, blocks_per_sm=8, block_size=256)
    spread = threadmap.estimate(bbv, features=own, **opts)
    one = threadmap.estimate(bbv, features=np.zeros(n), **opts)
    plain = threadmap.estimate(bbv, **opts)
    assert spread["sm90_constant_cycles"] > 10 * one["sm90_constant_cycles"] > 0
    assert plain["sm90_constant_cycles"] == 0
    assert spread["sm90_cycles"] >= spread["sm90_constant_cycles"]
    threadmap.save_bbv(str(tmp_path / "b.npy"), bbv, ["keyed/+0"])
    np.save(tmp_path / "f.npy", own)
    (tmp_path / "k.ptx").write_text(_KEYED_PTX)
    out = subprocess.run([cli, "estimate", "--bbv", str(tmp_path / "b.npy"), "--cfg",
                          str(tmp_path / "k.ptx"), "--kernel", "keyed", "--sms", "4",
                          "--blocks-per-sm", "8", "--features", str(tmp_path / "f.npy"), "--json"],
                         check=True, capture_output=True, text=True).stdout
    assert spread["sm90_cycles"] == pytest.approx(json.loads(out)["sm90_cycles"], rel=1e-12)
    assert "constant cache" in (threadmap.report(bbv, **opts).json()["model_caveat"] or "")
    assert "constant cache" not in threadmap.report(bbv, features=own, **opts).json()["model_caveat"]
    with pytest.raises(threadmap.InvalidError, match="features needs the SM model"):
        threadmap.estimate(bbv, lat=np.ones(1), features=own)
    with pytest.raises(threadmap.InvalidError, match="threads"):
        threadmap.estimate(bbv, features=own[:10], **opts)
