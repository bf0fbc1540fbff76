"""threadmap.regroup -- regrouping threads from Python: plan() scores every
candidate regrouping of a (predicted or measured) BBV with the model and
takes regroup()'s decision; regroup() returns the chosen permutation as a
NumPy array (slot i runs original thread perm[i]).  On the GPU, with device
features and a predictor, regroup() sorts on the device instead and returns
a device array (threadmap.gpu).

>>> import numpy as np, threadmap
>>> bbv = np.array([[1, 9], [1, 0]] * 32, dtype=np.uint32)   # 64 threads, 2 kinds
>>> perm = threadmap.regroup(bbv, lat=[1.0, 10.0], algo="sorting", block_size=64)
>>> (perm[:32] % 2).tolist() == [1] * 32      # the first warp: only odd threads
True
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence

import numpy as np

from . import _lib
from .arrays import as_f64, f64_ptr, is_device_array
from .errors import InvalidError, UnsupportedError, check, new_error
from .kernel import Kernel
from .model import ModelInput, metrics_dict, model_input

ALGOS = ("identity", "sorting", "greedy", "greedy-max", "key", "bin-and-deal")  # tmap_algo_name


@dataclass
class Candidate:
    """One scored regrouping (name "original" for the identity)."""
    name: str
    available: bool
    note: str
    perm: Optional[np.ndarray]
    metrics: Optional[dict]
    algo_ms: float
    gain: float           # predicted: 1 - t / t(original), t the SM model's time
                          # (metric "sm90" with a kernel), else BBV-weighted-scheduled
    total_ms: float       # with original_ms: kernel + algorithm + apply; else NaN


@dataclass
class Plan:
    """The candidates, the choice and why (what `threadmap regroup --algo
    auto` prints).  np.asarray(plan) is the chosen permutation."""
    candidates: List[Candidate]
    chosen: int
    why: str
    inputs: ModelInput = field(repr=False)
    options: dict = field(repr=False, default_factory=dict)
    c_plan: Any = field(repr=False, default=None)  # the C tmap_plan (Owned), for the report

    @property
    def perm(self) -> np.ndarray:
        """The chosen permutation (the identity when the launch is left alone)."""
        return self.candidates[self.chosen].perm

    @property
    def algorithm(self) -> str:
        return self.candidates[self.chosen].name

    def __array__(self, dtype=None, copy=None):
        return self.perm if dtype is None else self.perm.astype(dtype)


def _algo_bits(names: Sequence[str]) -> int:
    """tmap_plan_opts.algos for algorithm names (none: 0, every candidate)."""
    bits = 0
    for name in names:
        a = _lib.lib().tmap_algo_parse(name.encode())
        if a < 0:
            raise InvalidError(f"algo: '{name}' is not one of auto, {', '.join(ALGOS)}")
        bits |= 1 << a
    return bits


def _candidates(plan: _lib.Plan, nthreads: int) -> List[Candidate]:
    L, out = _lib.lib(), []
    for i in range(plan.n):
        c = plan.cand[i]
        perm = np.ctypeslib.as_array(c.perm, shape=(nthreads,)).copy() if c.perm else None
        out.append(Candidate("original" if i == 0 else L.tmap_algo_name(c.algo).decode(),
                             bool(c.available), c.note.decode(), perm,
                             metrics_dict(c.m) if c.available else None,
                             c.algo_ms, c.gain, c.total_ms))
    return out


def plan(bbv: Any, *, kernel: Optional[Kernel] = None, lat: Any = None, algo: str = "auto",
         candidates: Sequence[str] = (), key: Any = None, table: Optional[str] = None,
         groupsize: int = 32, scope: str = "grid", block_size: int = 256, sms: int = 132,
         blocks_per_sm: Optional[int] = None, threshold: float = 0.05,
         original_ms: float = 0.0, apply_ms: float = 0.0, launches: float = 1.0,
         threads: int = 1, metric: str = "sm90", predicted_by: Any = None,
         sass: Optional[str] = None, features: Any = None) -> Plan:
    """Runs the candidate algorithms on the BBV (uint32 [threads, blocks]),
    scores each with the model plus the costs given (original_ms, apply_ms,
    launches), and chooses as regroup() does.  metric: what ranks them, as
    the CLI's --metric: "sm90" (the SM model, docs/model.md; with a kernel,
    the default) or "scheduled" (the paper's BBV-weighted-scheduled; always
    without a kernel, when latencies are given as lat).
    algo: "auto" (every candidate; identity when nothing pays) or one
    algorithm, applied whatever the model says.  candidates: with "auto",
    the algorithms to score (default: all; Greedy and Greedy-Max take
    seconds on 10^5 threads).  key: one value per thread, adds the "key"
    candidate (sort by it, descending).  predicted_by=(predictor, features):
    bbv was predicted by predictor from features, and the SM model takes
    each warp's expected slowest lane from its residuals (the CLI's --model
    and --features).  sass="sm_90": the SM model issues each block's SASS
    instructions (ptxas and nvdisasm; the CLI's --sass); None: PTX ones.
    features=[threads, p] (without predicted_by): the threads' features key
    the kernel's __constant__ reads (the CLI's --features alone).

    >>> p = threadmap.plan(bbv, kernel=k, blocks_per_sm=8)   # doctest: +SKIP
    >>> p.algorithm, p.why                                    # doctest: +SKIP
    """
    if scope not in ("grid", "block"):
        raise InvalidError(f"scope: '{scope}' is grid or block")
    if algo == "key" and key is None:
        raise InvalidError("algo 'key' needs key (one value per thread)")
    mi = model_input(bbv, kernel, lat, table, block_size, sms, blocks_per_sm, metric,
                     predicted_by, sass, features)
    k = None if key is None else as_f64(key, "key", ndim=1)
    if k is not None and k.shape[0] != mi.bbv.nthreads:
        raise InvalidError(f"key: {k.shape[0]} values for {mi.bbv.nthreads} threads")
    ro = _lib.RegroupOpts(groupsize, 0 if scope == "grid" else 1, block_size, threads)
    if algo != "auto" and candidates:
        raise InvalidError("candidates: only with algo 'auto'")
    bits = _algo_bits(candidates if algo == "auto" else [algo])
    po = _lib.PlanOpts(mi.params, ro, f64_ptr(k), bits, threshold, original_ms,
                       apply_ms, launches)
    L, err, out = _lib.lib(), new_error(), _lib.Plan()
    check(L.tmap_plan_make(ctypes.byref(mi.bbv), f64_ptr(mi.lat), mi.cfg.ptr if mi.cfg else None,
                           ctypes.byref(po), ctypes.byref(out), ctypes.byref(err)), err)
    owner = _lib.Owned(out, "tmap_plan_free", by_ref=True)
    cands = _candidates(out, mi.bbv.nthreads)
    chosen, why = out.chosen, out.why.decode()
    if algo not in ("auto", "identity"):  # a fixed algorithm is applied whatever the model says
        if len(cands) < 2 or not cands[-1].available:
            raise UnsupportedError(f"{algo}: {cands[-1].note if len(cands) > 1 else 'not run'}")
        chosen = 1
    opts = dict(original_ms=original_ms, apply_ms=apply_ms)
    return Plan(cands, chosen, why, mi, opts, owner)


def regroup(bbv: Any = None, *, features: Any = None, predictor=None, lat: Any = None,
            stream: Any = None, out: Any = None, **plan_options) -> Any:
    """A permutation of the threads: slot i runs original thread perm[i].

    On the CPU: regroup(bbv, kernel=... or lat=..., algo="auto",
    metric="sm90", ...) takes plan()'s options (features: a host array,
    the threads' features for the SM model's constant reads) and returns
    the chosen permutation, uint32 NumPy; metric "scheduled" ranks by the
    paper's BBV-weighted-scheduled instead of the SM model (`--metric
    scheduled`).

    On the GPU: regroup(features=DEVICE_ARRAY, predictor=P, lat=LAT,
    stream=S, block_size=0, out=None) predicts each thread's cost from its device
    features (float64 [threads, nfeatures]) and sorts the threads by it,
    heaviest first, over the grid (block_size 0) or within thread blocks;
    the permutation comes back as a device array in the features'
    framework (CuPy uint32, PyTorch int32) or as a threadmap.DeviceArray;
    the device scratch is made on the first call and kept with the
    predictor (Predictor.gpu).

    >>> perm = threadmap.regroup(bbv, kernel=k, blocks_per_sm=8)          # doctest: +SKIP
    >>> perm = threadmap.regroup(features=f_cupy, predictor=p, lat=lat)    # doctest: +SKIP
    """
    if features is not None and (bbv is None or is_device_array(features)):
        if not is_device_array(features):
            raise InvalidError("features: regroup on the GPU wants a device array; on the CPU "
                               "predict the BBVs (predictor.predict) and pass them as bbv")
        if predictor is None or lat is None:
            raise InvalidError("regroup on the GPU needs predictor and lat")
        block_size = plan_options.pop("block_size", 0)
        if plan_options:
            raise InvalidError(f"regroup on the GPU takes predictor, lat, stream, block_size "
                               f"and out, not {', '.join(plan_options)}")
        from .arrays import device_view
        g = predictor.gpu(lat, device_view(features, "features").shape[0])
        return g.run(features, stream=stream, block_size=block_size, out=out)
    if bbv is None:
        raise InvalidError("regroup: give bbv (CPU) or features (GPU)")
    return plan(bbv, lat=lat, features=features, **plan_options).perm
