"""test_kernel.py -- Kernel: NVRTC, PTX, the CFG, safety, the counter pass
and the redirection, block latencies; exact values for a kernel written
here, and the CLI's own answers on the bundled PTX."""
import json
import subprocess

import numpy as np

import threadmap


def test_from_source_compiles_and_names_the_entry(loop_kernel):
    assert loop_kernel.name == "loop"
    assert loop_kernel.kernels == ["loop"]
    assert ".entry loop(" in loop_kernel.ptx


def test_cfg_of_the_loop_kernel(loop_kernel):
    cfg = loop_kernel.cfg()
    assert [f.name for f in cfg.functions] == ["loop"]
    assert cfg.functions[0].is_entry
    terms = [b.term for b in cfg.blocks]
    assert terms[-1] in ("ret", "exit")
    # the loop: some block is its own successor's predecessor (a back edge)
    assert any(j <= i for i, b in enumerate(cfg.blocks) for j in b.successors)
    assert all(b.name.startswith("loop/") for b in cfg.blocks)


def test_cfg_equals_the_cli(divergent, recorded, cli):
    out = subprocess.run([cli, "cfg", str(recorded / "kernel.ptx"), "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    want = json.loads(out)
    text = json.dumps(want)
    names = [b.name for b in divergent.cfg().blocks]
    assert len(names) == 17
    for n in names:
        assert json.dumps(n) in text
    side = json.loads((recorded / "run0.bbv.npy.json").read_text())
    assert names == side["blocks"]


def test_safety_of_the_loop_kernel(loop_kernel):
    s = loop_kernel.safety()
    assert s.scope == "grid"
    assert s.counts["barriers"] == 0 and s.counts["shared_memory"] == 0
    assert s.counts["tid_in_control"] == 1          # the bounds check
    assert s.layout_ok and s.redirect_ok
    assert s.mechanism == "layout transform"
    # PTX compiled from source: the description of the PTX, never "loop.cu:PTX-LINE"
    assert any(r.startswith("<PTX of loop compiled by NVRTC from loop.cu>:") for r in s.reasons)
    assert not any(r.startswith("loop.cu:") for r in s.reasons)


def test_safety_sees_a_barrier():
    k = threadmap.Kernel.from_source(r'''
extern "C" __global__ void shared(float *y) {
    __shared__ float s[128];
    s[threadIdx.x] = y[threadIdx.x];
    __syncthreads();
    y[threadIdx.x] = s[127 - threadIdx.x];
}''', "shared")
    s = k.safety()
    assert s.counts["barriers"] >= 1 and s.counts["shared_memory"] >= 1
    assert s.scope != "grid"


def test_instrument_adds_the_counters(loop_kernel):
    inst = loop_kernel.instrument()
    assert "__tmap_bbv_base" in inst.ptx and "__tmap_bbv_base" not in loop_kernel.ptx
    assert inst.name == "loop"
    red = loop_kernel.instrument(redirect=True)
    assert "__tmap_perm" in red.ptx


def test_block_latencies_from_the_default_table(divergent):
    bl = divergent.block_latencies()
    assert bl.lat.shape == (17,)
    assert np.all(bl.lat > 0)
    assert bl.table.endswith("sm_90.tsv")
