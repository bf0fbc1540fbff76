"""threadmap.model -- the model stage from Python: BBV files, the BBV
regression (train, Predictor.predict, cross-validation, predictor files),
and estimate(): the model's metrics for a BBV under a grouping.  NumPy in,
NumPy out; the C library computes.

>>> import numpy as np, threadmap
>>> feats = (np.arange(64.0) * 37) % 64           # one feature per thread
>>> bbv = np.stack([np.ones(64), feats], 1).astype(np.uint32)
>>> p = threadmap.train([(feats, bbv)], kernel="k", folds=0)
>>> p.predict(np.array([3.0, 7.0])).tolist()
[[1, 3], [1, 7]]
>>> m = threadmap.estimate(bbv, lat=[4.0, 10.0], block_size=64, sms=1, blocks_per_sm=1)
>>> m["warps"]
2
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _lib
from .arrays import (as_bbv, as_f64, as_u32, c_strings, copy_f64, f64_ptr, py_strings, take_bbv,
                     take_f64, u32_ptr)
from .errors import InvalidError, check, new_error
from .kernel import BlockLatencies, Kernel

# ------------------------------------------------------------------ BBV files


def load_bbv(path: str) -> Tuple[np.ndarray, Optional[List[str]]]:
    """A BBV file (PATH.npy and its sidecar PATH.npy.json): the counts,
    uint32 [threads, blocks], and the block names (None without them)."""
    L, err, b, names = _lib.lib(), new_error(), _lib.Bbv(), ctypes.POINTER(ctypes.c_char_p)()
    check(L.tmap_bbv_load(path.encode(), ctypes.byref(b), ctypes.byref(names),
                          ctypes.byref(err)), err)
    n = b.nblocks
    out = py_strings(names, n) if names else None
    L.tmap_names_free(names, n)
    return take_bbv(b), out


def save_bbv(path: str, counts: Any, block_names: Optional[Sequence[str]] = None) -> None:
    """Writes PATH.npy and its sidecar PATH.npy.json (`threadmap` reads them)."""
    L, err, b = _lib.lib(), new_error(), as_bbv(counts)
    if block_names is not None and len(block_names) != b.nblocks:
        raise InvalidError(f"{path}: {len(block_names)} block names for {b.nblocks} blocks")
    check(L.tmap_bbv_save(path.encode(), ctypes.byref(b), c_strings(block_names),
                          ctypes.byref(err)), err)


def load_npy(path: str) -> np.ndarray:
    """A .npy file as float64 (any numeric dtype; 1-D stays 1-D), read by
    the library as the CLI reads features."""
    L, err = _lib.lib(), new_error()
    data, dim = ctypes.POINTER(ctypes.c_double)(), (ctypes.c_size_t * 2)()
    check(L.tmap_npy_load_f64(path.encode(), 0, ctypes.byref(data), dim, ctypes.byref(err)), err)
    return take_f64(data, dim[0] * dim[1]).reshape(dim[0], dim[1])


# ------------------------------------------------------------------ training

@dataclass
class CrossValidation:
    kind: str              # "k-fold over threads" or "leave one run out"
    folds: int
    rms_error: float
    rms_error_per_block: np.ndarray


class Predictor:
    """Eq. 1 fitted per basic block: BBV_t[b] ~ c0 + c . features_t + c' tid.
    Made by train() or Predictor.load(); predict() gives BBVs."""

    def __init__(self, c: _lib.Predictor):
        self._owned, self._c = _lib.Owned(c, "tmap_predictor_free", by_ref=True), c
        self._gpu: dict = {}   # GpuRegroup by (threads, latencies, device): Predictor.gpu
        self.cross_validation: List[CrossValidation] = []

    @property
    def kernel(self) -> str:
        return self._c.kernel.decode()

    @property
    def nblocks(self) -> int:
        return self._c.nblocks

    @property
    def nfeatures(self) -> int:
        return self._c.nfeatures

    @property
    def block_names(self) -> List[str]:
        return py_strings(self._c.block_names, self.nblocks)

    @property
    def feature_names(self) -> List[str]:
        return py_strings(self._c.feature_names, self.nfeatures)

    @property
    def coef(self) -> np.ndarray:
        """[nblocks, nfeatures + 2]: intercept, the features, the thread id."""
        return copy_f64(self._c.coef, self.nblocks * (self.nfeatures + 2)).reshape(
            self.nblocks, self.nfeatures + 2)

    @property
    def r2(self) -> np.ndarray:
        return copy_f64(self._c.r2, self.nblocks)

    @property
    def rms(self) -> np.ndarray:
        return copy_f64(self._c.rms, self.nblocks)

    @property
    def rank(self) -> np.ndarray:
        return np.array(self._c.rank[:self.nblocks], dtype=np.int64)

    def predict(self, features: Any) -> np.ndarray:
        """Predicted BBVs, uint32 [threads, blocks], for features [threads,
        nfeatures] (row t is thread t).

        >>> p.predict(np.zeros((2, p.nfeatures))).shape  # doctest: +SKIP
        (2, 17)
        """
        f = as_f64(features, "features")
        if f.shape[1] != self.nfeatures:
            raise InvalidError(f"features: {f.shape[1]} columns, the predictor has "
                               f"{self.nfeatures} features")
        L, err, out = _lib.lib(), new_error(), _lib.Bbv()
        check(L.tmap_predict(ctypes.byref(self._c), f64_ptr(f), f.shape[0], ctypes.byref(out),
                             ctypes.byref(err)), err)
        return take_bbv(out)

    def save(self, path: str) -> None:
        """Writes the checksummed predictor file (`threadmap predict` reads it)."""
        err = new_error()
        check(_lib.lib().tmap_predictor_save(path.encode(), ctypes.byref(self._c),
                                             ctypes.byref(err)), err)

    @classmethod
    def load(cls, path: str, kernel: Optional[str] = None) -> "Predictor":
        """Loads and verifies a predictor file (kernel: must match if given)."""
        err, c = new_error(), _lib.Predictor()
        check(_lib.lib().tmap_predictor_load(path.encode(), kernel.encode() if kernel else None,
                                             0, None, ctypes.byref(c), ctypes.byref(err)), err)
        return cls(c)

    def gpu(self, lat: Any, nthreads: int, device=None):
        """The GPU regroup path for this predictor: a threadmap.gpu.GpuRegroup
        with scratch for nthreads threads and the block latencies lat, made
        on the first call for these arguments and kept with the predictor."""
        from .gpu import Device, GpuRegroup
        dev = device or Device.get()
        key = (int(nthreads), as_f64(lat, "lat", ndim=1).tobytes(), dev.ordinal)
        if key not in self._gpu:
            self._gpu[key] = GpuRegroup(nthreads, predictor=self, lat=lat, device=dev)
        return self._gpu[key]

    def __repr__(self) -> str:
        return f"Predictor({self.kernel!r}, {self.nblocks} blocks, {self.nfeatures} features)"


RunLike = Tuple[Any, Any]


def _runs(runs: Sequence[RunLike]):
    """The runs as tmap_regress_run (and what keeps their memory alive)."""
    if not runs:
        raise InvalidError("train: no runs")
    keep, arr = [], (_lib.RegressRun * len(runs))()
    p = None
    for i, (features, bbv) in enumerate(runs):
        f, b = as_f64(features, f"runs[{i}] features"), as_bbv(bbv, f"runs[{i}] bbv")
        if p is not None and f.shape[1] != p:
            raise InvalidError(f"runs[{i}]: {f.shape[1]} features, run 0 has {p}")
        if f.shape[0] != b.nthreads:
            raise InvalidError(f"runs[{i}]: {f.shape[0]} feature rows for {b.nthreads} threads")
        p = f.shape[1]
        keep += [f, b]
        arr[i] = _lib.RegressRun(f64_ptr(f), ctypes.pointer(b))
    return arr, p, keep


def train(runs: Sequence[RunLike], *, kernel: str, feature_names: Optional[Sequence[str]] = None,
          block_names: Optional[Sequence[str]] = None, folds: int = 5) -> Predictor:
    """Fits eq. 1 on profiling runs: each a (features [threads, p], BBV
    uint32 [threads, blocks]) pair.  folds: k-fold cross-validation over
    threads (0: none); with 2+ runs leave-one-run-out is computed too
    (Predictor.cross_validation).

    >>> p = threadmap.train([(f0, bbv0), (f1, bbv1)], kernel="divergent")  # doctest: +SKIP
    """
    arr, p, keep = _runs(runs)
    nblocks = keep[1].nblocks
    if feature_names is not None and len(feature_names) != p:
        raise InvalidError(f"feature_names: {len(feature_names)} names for {p} features")
    if block_names is not None and len(block_names) != nblocks:
        raise InvalidError(f"block_names: {len(block_names)} names for {nblocks} blocks")
    L, err, c = _lib.lib(), new_error(), _lib.Predictor()
    check(L.tmap_regress_fit(arr, len(runs), p, kernel.encode(), c_strings(block_names),
                             c_strings(feature_names), ctypes.byref(c), ctypes.byref(err)), err)
    pred = Predictor(c)
    threads = sum(k.nthreads for k in keep[1::2])
    for by_run in (0, 1):
        if (by_run and len(runs) < 2) or (not by_run and (folds == 0 or folds > threads)):
            continue
        cv = _lib.CvResult()
        check(L.tmap_regress_cv(arr, len(runs), p, folds, by_run, ctypes.byref(cv),
                                ctypes.byref(err)), err)
        pred.cross_validation.append(CrossValidation(
            "leave one run out" if cv.by_run else "k-fold over threads", cv.folds, cv.total_rms,
            copy_f64(cv.rms, cv.nblocks)))
        L.tmap_cv_result_free(ctypes.byref(cv))
    return pred


# ---------------------------------------------------------------- the model

METRICS = ("sm90", "scheduled")  # what ranks groupings: the CLI's --metric


@dataclass
class ModelInput:
    """What the model's calls take, borrowed by the C structs: the BBV, the
    block latencies, the CFG (or None), the launch shape, and the SM model
    that params.sm points to (None: the paper's metric ranks)."""
    bbv: Any
    lat: np.ndarray
    cfg: Any
    params: _lib.ModelParams
    latencies: Optional[BlockLatencies]
    block_names: Optional[List[str]]
    sm: Optional[_lib.Owned] = None
    noise: Any = None      # the predictor whose residuals sm points to
    sass: Any = None       # the SASS counts and splits params and sm point to


def _groups(sm: _lib.Owned, b: Any, features: Any) -> int:
    """The SM model's groups of equal feature rows (tmap_sm_model_features)
    from features [threads, p] ([threads] for p = 1); returns p."""
    f = as_f64(features, "features")
    if f.ndim == 1:
        f = f.reshape(-1, 1)
    if f.shape[0] != b.nthreads:
        raise InvalidError(f"features: {f.shape[0]} threads, but the BBV has {b.nthreads}")
    err = new_error()
    check(_lib.lib().tmap_sm_model_features(ctypes.byref(sm.ptr), f64_ptr(f), f.shape[0],
                                            f.shape[1], ctypes.byref(err)), err)
    return f.shape[1]


def _noise(sm: _lib.Owned, b: Any, predicted_by: Any) -> Any:
    """predicted_by = (Predictor, features): the SM model takes each warp's
    expected slowest lane from the predictor's residuals (docs/model.md),
    as the CLI's --model and --features; the features' groups also key the
    constant reads, as there."""
    try:
        predictor, features = predicted_by
    except (TypeError, ValueError):
        raise InvalidError("predicted_by: give (predictor, features)") from None
    if not isinstance(predictor, Predictor):
        raise InvalidError("predicted_by: its first item must be a threadmap.Predictor")
    if not predictor._c.noise.nblocks:
        raise InvalidError("predicted_by: the predictor has no residuals (a predictor file of "
                           "version 1): train it again")
    p = _groups(sm, b, features)
    if p != predictor.nfeatures:
        raise InvalidError(f"features: {p} features a thread, but the predictor has "
                           f"{predictor.nfeatures}")
    if predictor._c.noise.nblocks != b.nblocks:
        raise InvalidError(f"predicted_by: the predictor has {predictor._c.noise.nblocks} "
                           f"blocks, the BBV {b.nblocks}")
    sm.ptr.noise = ctypes.addressof(predictor._c.noise)
    return predictor


def model_input(bbv: Any, kernel: Optional[Kernel], lat: Any, table: Optional[str],
                block_size: int, sms: int, blocks_per_sm: Optional[int],
                metric: str, predicted_by: Any = None, sass: Optional[str] = None,
                features: Any = None) -> ModelInput:
    """Checks and converts the model's inputs: block latencies from the
    kernel's CFG and a latency table, or given as lat; with a kernel and
    metric "sm90", the SM model made from the same table and CFG, as the
    CLI makes it (without a kernel the paper's metric ranks, as in the CLI);
    predicted_by (predictor, features): the BBV's predictions and their
    residuals, as the CLI's --model and --features (needs the SM model);
    sass (an arch, "sm_90"): SASS counts, as the CLI's --sass (needs a
    kernel); features [threads, p] without predicted_by: the threads'
    features key the constant reads, as the CLI's --features alone (needs
    the SM model; predicted_by's features do the same)."""
    if metric not in METRICS:
        raise InvalidError(f"metric: '{metric}' is not one of {', '.join(METRICS)}")
    b = as_bbv(bbv)
    if (kernel is None) == (lat is None):
        raise InvalidError("give either kernel (latencies from its CFG) or lat (per block)")
    latencies, cfg, names = None, None, None
    if kernel is not None:
        latencies = kernel.block_latencies(table)
        cfg, names = kernel.cfg_handle(), kernel.cfg().block_names
        lat = latencies.lat
    lat = as_f64(lat, "lat", ndim=1)
    if lat.shape[0] != b.nblocks:
        raise InvalidError(f"the BBV has {b.nblocks} blocks but there are {lat.shape[0]} "
                           "block latencies" + (f" ({kernel.name}'s CFG)" if kernel else ""))
    if blocks_per_sm is None:
        blocks_per_sm = max(1, min(32, 2048 // block_size))
    if sass is not None and kernel is None:
        raise InvalidError("sass needs a kernel (its PTX is what ptxas assembles)")
    counts = kernel.sass_counts(sass) if sass is not None else None
    sm, noise = None, None
    if kernel is not None and metric == "sm90":
        sm = kernel.sm_model(table, sms=sms, blocks_per_sm=blocks_per_sm, block_size=block_size,
                             counts=counts[0] if counts else None)
    if predicted_by is not None and features is not None:
        raise InvalidError("give features once: predicted_by=(predictor, features) carries them")
    if (predicted_by is not None or features is not None) and sm is None:
        raise InvalidError(f"{'predicted_by' if features is None else 'features'} needs the SM "
                           "model: a kernel, metric 'sm90'")
    if predicted_by is not None:
        noise = _noise(sm, b, predicted_by)
    elif features is not None:
        _groups(sm, b, features)
    params = _lib.ModelParams(block_size, sms, blocks_per_sm,
                              f64_ptr(counts[0]) if counts else None,
                              ctypes.addressof(counts[1].ptr) if counts else None,
                              ctypes.pointer(sm.ptr) if sm else None)
    return ModelInput(b, lat, cfg, params, latencies, names, sm, noise, counts)


_METRIC_KEYS = (("bbv_weighted_cycles", "bbv_weighted"),
                ("bbv_weighted_scheduled_cycles", "bbv_weighted_scheduled"),
                ("zero_divergence_cycles", "zero_divergence"),
                ("divergent_warps_pct", "divergent_warps_pct"),
                ("divergent_branches", "divergent_branches"),
                ("branch_executions", "branch_executions"),
                ("branches_unestimated", "branches_unestimated"),
                ("simd_active_threads_per_inst", "simd_active_threads_per_inst"),
                ("thread_instructions", "thread_instructions"),
                ("warp_instructions", "warp_instructions"),
                ("warps", "nwarps"), ("thread_blocks", "nthread_blocks"))
_SM_PARTS = ("issue", "latency", "memory", "constant")


def metrics_dict(m: _lib.Metrics) -> dict:
    """A tmap_metrics as a dict with the CLI's JSON keys (docs/cli.md), and
    the per-warp and per-block costs as arrays."""
    d = {key: getattr(m, field) for key, field in _METRIC_KEYS}
    d["sm90_cycles"] = m.sm.cycles
    d.update((f"sm90_{part}_cycles", getattr(m.sm, part)) for part in _SM_PARTS)
    d["warp_cost_cycles"] = copy_f64(m.warp_cost, m.nwarps)
    d["block_cost_cycles"] = copy_f64(m.block_cost, m.nthread_blocks)
    return d


def estimate(bbv: Any, *, kernel: Optional[Kernel] = None, lat: Any = None, perm: Any = None,
             table: Optional[str] = None, block_size: int = 256, sms: int = 132,
             blocks_per_sm: Optional[int] = None, metric: str = "sm90",
             predicted_by: Any = None, sass: Optional[str] = None, features: Any = None) -> dict:
    """The model's metrics (BBV-weighted, BBV-weighted-scheduled,
    divergent warps, SIMD efficiency...) for a BBV under a grouping: perm
    (slot i runs thread perm[i]; None: the original order).  Block
    latencies come from kernel's CFG (which also enables SIMD efficiency
    and divergent branches) or are given as lat.  metric: "sm90" (with a
    kernel, the SM model's time is computed too: sm90_cycles and its
    terms sm90_issue/latency/memory/constant_cycles; NaN otherwise) or "scheduled"
    (the paper's metrics alone), as `threadmap estimate --metric`.
    predicted_by=(predictor, features): bbv was predicted by predictor from
    features; the SM model takes each warp's expected slowest lane from the
    predictor's residuals (`threadmap estimate --model --features`).
    sass="sm_90": each block's SASS instructions (ptxas and nvdisasm) issue
    in the SM model and weigh SIMD efficiency (`threadmap estimate --sass`);
    None: PTX instructions.  features=[threads, p] (without predicted_by):
    the threads' features key the kernel's __constant__ reads, so the SM
    model prices the constant cache's capacity (`--features` alone).

    >>> threadmap.estimate(bbv, kernel=k, blocks_per_sm=8)["divergent_warps_pct"]  # doctest: +SKIP
    """
    mi = model_input(bbv, kernel, lat, table, block_size, sms, blocks_per_sm, metric,
                     predicted_by, sass, features)
    p = None
    if perm is not None:
        p = as_u32(perm, "perm", 1)
        if p.shape[0] != mi.bbv.nthreads:
            raise InvalidError(f"perm: {p.shape[0]} entries for {mi.bbv.nthreads} threads")
    L, err, m = _lib.lib(), new_error(), _lib.Metrics()
    if p is not None:
        check(L.tmap_perm_check(u32_ptr(p), p.shape[0], b"perm", ctypes.byref(err)), err)
    check(L.tmap_metrics_compute(ctypes.byref(mi.bbv), f64_ptr(mi.lat), u32_ptr(p),
                                 mi.cfg.ptr if mi.cfg else None, ctypes.byref(mi.params),
                                 ctypes.byref(m), ctypes.byref(err)), err)
    try:
        return metrics_dict(m)
    finally:
        L.tmap_metrics_free(ctypes.byref(m))

