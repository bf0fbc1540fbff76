"""cupy_regroup.py -- threadmap from CuPy (or PyTorch) end to end, on the GPU.

A CuPy RawKernel whose threads each loop over their own trip count (one
thread in 16, at random, runs 2000 iterations, the others 4 to 40, so
nearly every warp holds a long thread and waits for it) is
  1. launched plainly, timed with CUDA events (the reference outputs);
  2. profiled by threadmap on two inputs (per-thread BBVs) and trained
     (the regression of eq. 1 on per-thread features: the trip count);
  3. regrouped before its launch on a third input: the trained model
     predicts each thread's cost from its device features and the threads
     are sorted by it on the GPU (GpuRegroup, one CUDA graph); the
     permutation comes back as a CuPy (or PyTorch) array and applies as a
     layout transform: inputs gathered x[perm], the unchanged kernel on the
     copies, outputs scattered back y[perm] = y_r;
  4. the same through threadmap's Regrouper (measured feedback: it times
     the original and each candidate on real launches and keeps the
     fastest), keyed by the trained model on the device features;
  5. timed (CUDA events), the outputs compared with the plain launch's,
     the Python overhead of regroup() over its C call measured, and the
     report printed and written (report/report.html; inline in Jupyter).

    python cupy_regroup.py [--torch] [--threads N] [--out DIR]

Needs an NVIDIA GPU, CuPy (and PyTorch for --torch) and libthreadmap.so
(THREADMAP_LIBRARY, the repository's build/, or the system's).
"""
import argparse
import ctypes
import time

import cupy as cp
import numpy as np

import threadmap
from threadmap import _lib
from threadmap.arrays import stream_handle

SRC = r'''
extern "C" __global__ void trips(const int *steps, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    for (int k = 0; k < steps[i]; k++)
        v = v * 0.999f + __sinf(v) * 0.5f;
    y[i] = v;
}
'''
BLOCK = 256


HEAVY = 2000


def make_input(n, seed):
    """Trip counts: HEAVY for one thread in 16 at random, 4..40 for the
    rest; values in [0, 1)."""
    rng = np.random.default_rng(seed)
    steps = np.where(rng.random(n) < 1 / 16, HEAVY, rng.integers(4, 41, n)).astype(np.int32)
    return steps, rng.random(n, dtype=np.float32)


def features_of(steps):
    """The per-thread features the model learns from: the trip count."""
    return steps.astype(np.float64).reshape(-1, 1)


def timed(fn, stream, reps=20):
    """Median ms of fn() over reps runs, CUDA events on stream (2 warm-ups)."""
    e0, e1, t = cp.cuda.Event(), cp.cuda.Event(), []
    for i in range(reps + 2):
        e0.record(stream)
        fn()
        e1.record(stream)
        e1.synchronize()
        if i >= 2:
            t.append(cp.cuda.get_elapsed_time(e0, e1))
    return float(np.median(t))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--torch", action="store_true", help="features and permutation as PyTorch tensors")
    ap.add_argument("--threads", type=int, default=1 << 20)
    ap.add_argument("--out", default="report")
    a = ap.parse_args()
    n, grid = a.threads, (a.threads // BLOCK,)
    assert n % BLOCK == 0, "threads: a multiple of 256"
    dev = threadmap.Device.get()
    print("device:", dev.info()["name"])
    stream = cp.cuda.Stream(non_blocking=True)
    kern = cp.RawKernel(SRC, "trips")
    tk = threadmap.Kernel.from_source(SRC, "trips", filename="cupy_regroup.py")

    # 2. profile two inputs, train
    runs = []
    for seed in (1, 2):
        steps, x = make_input(n, seed)
        prof = threadmap.profile(tk, grid, BLOCK, [cp.asarray(steps), cp.asarray(x),
                                                   cp.empty(n, cp.float32), np.int32(n)])
        runs.append((features_of(steps), prof.bbv))
    model = threadmap.train(runs, kernel="trips", feature_names=["steps"],
                            block_names=prof.block_names)
    lat = tk.block_latencies().lat
    print("trained:", model, "; cross-validation RMS error:",
          ", ".join(f"{cv.kind} {cv.rms_error:.3g}" for cv in model.cross_validation))

    # the third input, on the device
    steps_h, x_h = make_input(n, 3)
    steps, x = cp.asarray(steps_h), cp.asarray(x_h)
    y_plain, y = cp.empty(n, cp.float32), cp.empty(n, cp.float32)
    feats = cp.asarray(features_of(steps_h))
    if a.torch:
        import torch
        feats = torch.as_tensor(features_of(steps_h), device="cuda")

    # 1. the plain launch
    with stream:
        plain_ms = timed(lambda: kern(grid, (BLOCK,), (steps, x, y_plain, np.int32(n))), stream)

    # 3. regroup() on the GPU before each launch: cost, sort, gather, kernel, scatter
    g = model.gpu(lat, n)
    perm_buf = cp.empty(n, cp.uint32)
    steps_r, x_r, y_r = cp.empty_like(steps), cp.empty_like(x), cp.empty_like(y)

    def regrouped():
        p = g.run(feats, stream=stream, out=perm_buf)   # on the device, stream-ordered
        cp.take(steps, p, out=steps_r)
        cp.take(x, p, out=x_r)
        kern(grid, (BLOCK,), (steps_r, x_r, y_r, np.int32(n)))
        y[p] = y_r

    with stream:
        regroup_ms = timed(regrouped, stream)
    same_regroup = bool(cp.array_equal(y, y_plain))
    if a.torch:   # the permutation as PyTorch returns it, used directly
        perm_t = g.run(feats, stream=torch.cuda.current_stream())
        torch.cuda.synchronize()
        t_steps = torch.as_tensor(steps, device="cuda")
        heavy = int((t_steps == HEAVY).sum())
        assert bool((perm_t.long().sort().values == torch.arange(n, device="cuda")).all())
        # the sort key is rounded (bfloat16), so only the classes are ordered
        assert bool((t_steps[perm_t.long()][:heavy] == HEAVY).all()), "not heaviest first"

    # the Python overhead of regroup() over the C call: both only enqueue;
    # each call is timed alone on an idle stream, the two alternate, medians
    f_ptr, h = feats.__cuda_array_interface__["data"][0], stream_handle(stream)
    err, L, py, c = _lib.Error(), _lib.lib(), [], []
    for _ in range(200):
        stream.synchronize()
        t0 = time.perf_counter()
        g.run(feats, stream=stream, out=perm_buf)
        t1 = time.perf_counter()
        stream.synchronize()
        t2 = time.perf_counter()
        L.tmap_gpu_regroup_run(g.ptr, f_ptr, 1, 0, perm_buf.data.ptr, h, ctypes.byref(err))
        t3 = time.perf_counter()
        py.append(t1 - t0)
        c.append(t3 - t2)
    stream.synchronize()
    py_us, c_us = float(np.median(py)) * 1e6, float(np.median(c)) * 1e6

    # 4. the Regrouper: measured feedback, keyed by the model on the features
    y[...] = 0
    r = threadmap.Regrouper(grid, BLOCK, [(steps, "in", 1), (x, "in", 1), (y, "out", 1)],
                            predictor=model, lat=lat, features=feats)
    same_regrouper, sig = True, 0

    def through_regrouper():
        nonlocal sig
        sig += 1
        with r.launch(signature=sig, stream=stream) as (s_r, x_r2, y_r2):
            kern(grid, (BLOCK,), (s_r, x_r2, y_r2, np.int32(n)))

    with stream:
        while r.chosen is None and sig < 64:
            through_regrouper()
            r.poll(wait=True, stream=stream)
            same_regrouper = same_regrouper and bool(cp.array_equal(y, y_plain))
        regrouper_ms = timed(through_regrouper, stream)
    same_regrouper = same_regrouper and bool(cp.array_equal(y, y_plain))

    # 5. the report: the model's view of the third input
    predicted = model.predict(features_of(steps_h))
    rep = threadmap.report(predicted, kernel=tk, blocks_per_sm=8, origin="predicted by the "
                           "model trained on inputs 1 and 2", device=dev.info()["name"],
                           candidates=("sorting", "bin-and-deal"),   # Greedy: minutes at 2^20
                           original_ms=plain_ms, apply_ms=max(regroup_ms - plain_ms, 0.0),
                           out=a.out)

    print(f"threads: {n}; medians of 20 launches (CUDA events)")
    print(f"plain launch:                              {plain_ms:.3f} ms")
    print(f"regroup() on the GPU + layout transform:   {regroup_ms:.3f} ms "
          f"({plain_ms / regroup_ms:.2f}x, overhead counted)")
    print(f"the Regrouper ({r.chosen}):  {regrouper_ms:.3f} ms ({plain_ms / regrouper_ms:.2f}x)")
    print(f"  {r.why}")
    print(f"outputs equal to the plain launch's: regroup() {same_regroup}, "
          f"Regrouper {same_regrouper}")
    print(f"regroup() enqueue, median of 200 on an idle stream: {py_us:.1f} us from Python, "
          f"{c_us:.1f} us the C call alone (Python overhead {py_us - c_us:.1f} us)")
    print(rep.text())
    print(f"report written to {a.out}/ (report.html; in Jupyter `rep` displays it)")
    return 0 if same_regroup and same_regrouper else 1


if __name__ == "__main__":
    raise SystemExit(main())
