"""test_regroup_report.py -- plan/regroup (NumPy permutations) and the report
(HTML and the four files), exact where the answer is known, and on the
recorded BBVs the same decision as `threadmap regroup --algo auto`."""
import json
import subprocess

import numpy as np
import pytest

import threadmap


def _two_kinds(n=128):
    """Even threads run block 1 nine times, odd ones never."""
    bbv = np.zeros((n, 2), dtype=np.uint32)
    bbv[:, 0] = 1
    bbv[::2, 1] = 9
    return bbv


def test_sorting_separates_the_two_kinds():
    perm = threadmap.regroup(_two_kinds(), lat=[1.0, 10.0], algo="sorting", block_size=128)
    assert perm.dtype == np.uint32 and sorted(perm.tolist()) == list(range(128))
    # ascending BBV rows: the 64 odd threads (row [1, 0]) first, in thread order
    assert perm[:64].tolist() == list(range(1, 128, 2))
    assert perm[64:].tolist() == list(range(0, 128, 2))


def test_plan_auto_chooses_and_says_why():
    p = threadmap.plan(_two_kinds(), lat=[1.0, 10.0], block_size=128, blocks_per_sm=1, sms=1)
    assert p.candidates[0].name == "original"
    assert p.algorithm != "original" and "threshold" in p.why
    assert p.candidates[p.chosen].gain == pytest.approx(0.5, abs=0.01)
    np.testing.assert_array_equal(np.asarray(p), p.perm)
    assert p.candidates[0].metrics["divergent_warps_pct"] == 100.0
    assert p.candidates[p.chosen].metrics["divergent_warps_pct"] == 0.0


def test_candidates_limit_the_plan():
    p = threadmap.plan(_two_kinds(), lat=[1.0, 10.0], block_size=128,
                       candidates=["sorting", "bin-and-deal"])
    assert [c.name for c in p.candidates] == ["original", "sorting", "bin-and-deal"]
    with pytest.raises(threadmap.InvalidError, match="fastest"):
        threadmap.plan(_two_kinds(), lat=[1.0, 10.0], candidates=["fastest"])


def test_identity_when_nothing_pays():
    bbv = np.ones((64, 2), dtype=np.uint32)
    p = threadmap.plan(bbv, lat=[1.0, 1.0], block_size=64)
    assert p.algorithm == "original"
    assert p.perm.tolist() == list(range(64))


def test_key_candidate_sorts_descending():
    key = np.arange(64.0)
    perm = threadmap.regroup(np.ones((64, 1), np.uint32), lat=[1.0], algo="key", key=key,
                             block_size=64)
    assert perm.tolist() == list(range(63, -1, -1))


@pytest.fixture(scope="module")
def recorded_plan(recorded, divergent):
    """The plan of recorded run 0 (every candidate: Greedy takes seconds)."""
    bbv, _ = threadmap.load_bbv(str(recorded / "run0.bbv.npy"))
    return threadmap.plan(bbv, kernel=divergent, blocks_per_sm=8)


def test_recorded_decision_equals_the_cli(recorded, recorded_plan, cli, tmp_path):
    subprocess.run([cli, "regroup", "--algo", "auto", "--bbv", str(recorded / "run0.bbv.npy"),
                    "--cfg", str(recorded / "kernel.ptx"), "--kernel", "divergent",
                    "--blocks-per-sm", "8", "-o", str(tmp_path / "perm.npy")],
                   check=True, capture_output=True)
    cli_perm = np.load(tmp_path / "perm.npy")
    np.testing.assert_array_equal(recorded_plan.perm, cli_perm.astype(np.uint32))


def _without_times(x):
    """A report's JSON less what differs from run to run (the algorithms'
    CPU times, and the decision's words, which quote them)."""
    if isinstance(x, dict):
        return {k: _without_times(v) for k, v in x.items() if k not in ("algo_ms", "decision")}
    if isinstance(x, list):
        return [_without_times(v) for v in x]
    return x


def test_report_equals_the_clis(recorded, recorded_plan, divergent, cli, tmp_path):
    r = threadmap.report(plan=recorded_plan, kernel=divergent, origin="recorded on an H200",
                         device="NVIDIA H200", out=str(tmp_path / "py"))
    subprocess.run([cli, "report", "--bbv", str(recorded / "run0.bbv.npy"), "--cfg",
                    str(recorded / "kernel.ptx"), "--kernel", "divergent", "--blocks-per-sm", "8",
                    "--origin", "recorded on an H200", "-o", str(tmp_path / "cli")],
                   check=True, capture_output=True)
    mine = json.loads((tmp_path / "py" / "report.json").read_text())
    want = json.loads((tmp_path / "cli" / "report.json").read_text())
    assert _without_times(mine) == _without_times(want)
    html = r._repr_html_()
    assert html.startswith("<!DOCTYPE html>") and "divergent" in html and "<svg" in html
    for ext in ("txt", "md", "json", "html"):
        assert (tmp_path / "py" / f"report.{ext}").stat().st_size > 0
    assert (tmp_path / "py" / "report.html").read_text() == html


def test_scheduled_metric_equals_the_clis(recorded, divergent, cli, tmp_path):
    """metric="scheduled" ranks by the paper's BBV-weighted-scheduled, as
    `--metric scheduled` does: the same decision and the same report."""
    bbv, _ = threadmap.load_bbv(str(recorded / "run0.bbv.npy"))
    p = threadmap.plan(bbv, kernel=divergent, blocks_per_sm=8, metric="scheduled")
    assert p.inputs.sm is None and not p.inputs.params.sm   # params.sm: NULL
    assert all(np.isnan(c.metrics["sm90_cycles"]) for c in p.candidates if c.available)
    args = ["--bbv", str(recorded / "run0.bbv.npy"), "--cfg", str(recorded / "kernel.ptx"),
            "--kernel", "divergent", "--blocks-per-sm", "8", "--metric", "scheduled"]
    subprocess.run([cli, "regroup", "--algo", "auto", *args, "-o", str(tmp_path / "perm.npy")],
                   check=True, capture_output=True)
    np.testing.assert_array_equal(p.perm, np.load(tmp_path / "perm.npy").astype(np.uint32))
    threadmap.report(plan=p, kernel=divergent, origin="o", device="G", out=str(tmp_path / "py"))
    subprocess.run([cli, "report", *args, "--origin", "o", "--device-name", "G", "-o",
                    str(tmp_path / "cli")],
                   check=True, capture_output=True)
    mine = json.loads((tmp_path / "py" / "report.json").read_text())
    want = json.loads((tmp_path / "cli" / "report.json").read_text())
    assert _without_times(mine) == _without_times(want)


def test_sm90_ranks_by_default_with_a_kernel(recorded_plan):
    assert recorded_plan.inputs.sm is not None
    for c in recorded_plan.candidates:
        if c.available:
            assert c.metrics["sm90_cycles"] > 0
    t0 = recorded_plan.candidates[0].metrics["sm90_cycles"]
    t = recorded_plan.candidates[recorded_plan.chosen].metrics["sm90_cycles"]
    assert recorded_plan.candidates[recorded_plan.chosen].gain == pytest.approx(1 - t / t0)


def test_a_bad_metric_name_is_refused(divergent):
    bbv = np.ones((64, len(divergent.cfg().blocks)), np.uint32)
    for call in (threadmap.plan, threadmap.regroup, threadmap.report, threadmap.estimate):
        with pytest.raises(ValueError, match="metric: 'sm80' is not one of sm90, scheduled"):
            call(bbv, kernel=divergent, metric="sm80")
    with pytest.raises(threadmap.InvalidError, match="metric"):
        threadmap.regroup(_two_kinds(), lat=[1.0, 10.0], metric="paper")


def test_report_forms_of_a_plan_with_measured_time(tmp_path):
    p = threadmap.plan(_two_kinds(), lat=[1.0, 10.0], block_size=128, original_ms=2.0,
                       apply_ms=0.1)
    r = threadmap.report(plan=p, origin="made up", out=str(tmp_path))
    j = r.json()
    assert j == json.loads((tmp_path / "report.json").read_text())
    assert r.text() == (tmp_path / "report.txt").read_text()
    assert r.markdown() == (tmp_path / "report.md").read_text()
    assert "made up" in r.text() and "2.0" in r.html()
    rows = json.dumps(j)
    assert "2.0" in rows and "0.1" in rows   # the measured and the applying times
