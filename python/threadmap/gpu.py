"""threadmap.gpu -- the GPU stages from Python: the device (the CUDA driver's
primary context, shared with CuPy and PyTorch), profile() (per-thread BBVs
of a kernel launched on the caller's device arrays), GpuRegroup (the
device-side regroup path: predicted cost, sort, bin-and-deal; the
permutation stays on the device) and Regrouper (regroup() on the GPU with
measured feedback, in front of the caller's own launch).  Device arrays
are taken through ``__cuda_array_interface__`` or DLPack, never copied.

>>> import cupy as cp, numpy as np, threadmap                       # doctest: +SKIP
>>> prof = threadmap.profile(k, grid=256, block=256,
...                          args=[steps, x, y, np.int32(n)])       # doctest: +SKIP
>>> prof.bbv.shape                                                  # doctest: +SKIP
(65536, 17)
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _lib
from .arrays import (DeviceArray, as_f64, device_checked, device_view, empty_like_framework,
                     f64_ptr, like, stream_handle)
from .errors import InvalidError, check, new_error
from .kernel import Kernel

Dim3 = Union[int, Tuple[int, ...]]


class Device:
    """One GPU's primary context (the one CuPy and PyTorch use).  Device(0)
    raises NoDeviceError without a driver or a GPU."""

    _open: dict = {}

    def __init__(self, ordinal: int = 0):
        L, err, c = _lib.lib(), new_error(), ctypes.c_void_p()
        check(L.tmap_cuda_open(ordinal, ctypes.byref(c), ctypes.byref(err)), err)
        self.ptr, self.ordinal = c, ordinal

    @classmethod
    def get(cls, ordinal: int = 0) -> "Device":
        """The Device of an ordinal, opened once per process."""
        if ordinal not in cls._open:
            cls._open[ordinal] = cls(ordinal)
        return cls._open[ordinal]

    def info(self) -> dict:
        """name, compute capability, SMs, clocks, driver (tmap_device_info)."""
        err, d = new_error(), _lib.DeviceInfo()
        check(_lib.lib().tmap_cuda_info(self.ptr, ctypes.byref(d), ctypes.byref(err)), err)
        out = {n: getattr(d, n) for n, _ in _lib.DeviceInfo._fields_[1:]}
        out["name"] = d.name.decode()
        return out

    def alloc(self, shape: Tuple[int, ...], dtype: Any) -> DeviceArray:
        """Device memory (cuMemAlloc) freed when the DeviceArray goes."""
        dt = np.dtype(dtype)
        nbytes = max(1, int(np.prod(shape)) * dt.itemsize)
        err, ptr = new_error(), ctypes.c_uint64()
        check(_lib.lib().tmap_cuda_alloc(self.ptr, nbytes, ctypes.byref(ptr), ctypes.byref(err)),
              err)
        p = ptr.value
        return DeviceArray(p, shape, dt.str, release=lambda: _lib.lib().tmap_cuda_free(self.ptr, p),
                           owner=self)

    def upload(self, ptr: int, host: np.ndarray) -> None:
        err, h = new_error(), np.ascontiguousarray(host)
        check(_lib.lib().tmap_cuda_upload(self.ptr, ptr, h.ctypes.data, h.nbytes,
                                          ctypes.byref(err)), err)

    def download(self, host: np.ndarray, ptr: int) -> None:
        err = new_error()
        check(_lib.lib().tmap_cuda_download(self.ptr, host.ctypes.data, ptr, host.nbytes,
                                            ctypes.byref(err)), err)


def _dim3(d: Dim3, name: str):
    t = (d,) if isinstance(d, int) else tuple(d)
    if not 1 <= len(t) <= 3 or any(int(v) < 1 for v in t):
        raise InvalidError(f"{name}: wants 1 to 3 positive extents, got {d}")
    return (ctypes.c_uint * 3)(*(list(t) + [1] * (3 - len(t))))


_SCALARS = {np.dtype(t): c for t, c in (
    ("int8", ctypes.c_int8), ("uint8", ctypes.c_uint8), ("int16", ctypes.c_int16),
    ("uint16", ctypes.c_uint16), ("int32", ctypes.c_int32), ("uint32", ctypes.c_uint32),
    ("int64", ctypes.c_int64), ("uint64", ctypes.c_uint64), ("float32", ctypes.c_float),
    ("float64", ctypes.c_double))}


def kernel_arg(a: Any, i: int):
    """One kernel argument as a ctypes value: a device array's pointer, or a
    NumPy scalar of its own type (plain Python numbers are refused: their C
    type would be a guess)."""
    if isinstance(a, ctypes._SimpleCData):
        return a
    if isinstance(a, np.generic):
        if a.dtype not in _SCALARS:
            raise InvalidError(f"args[{i}]: a {a.dtype} scalar is not a kernel argument type")
        return _SCALARS[a.dtype](a.item())
    if isinstance(a, (int, float)):
        raise InvalidError(f"args[{i}]: give scalars typed (np.int32(n), np.float32(x)), not "
                           f"a Python {type(a).__name__}")
    return ctypes.c_uint64(device_view(a, f"args[{i}]").ptr)


class Launch:
    """A tmap_launch: geometry and the arguments' values (kept alive here)."""

    def __init__(self, grid: Dim3, block: Dim3, args: Sequence[Any], shared_bytes: int = 0):
        self.values = [kernel_arg(a, i) for i, a in enumerate(args)]
        self.ptrs = (ctypes.c_void_p * max(1, len(args)))(
            *[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in self.values])
        self.c = _lib.Launch(_dim3(grid, "grid"), _dim3(block, "block"), shared_bytes,
                             self.ptrs, len(args))
        self.threads = int(np.prod(list(self.c.grid)) * np.prod(list(self.c.block)))


@dataclass
class Profile:
    """What one profiling launch measured: per-thread BBVs (rows: the
    profiled threads, in order), the CFG's block names (the columns), the
    sample, and the registers and occupancy of the kernel and its
    instrumented version."""
    bbv: np.ndarray
    block_names: List[str]
    sample: int
    original: dict
    instrumented: dict


def profile(kernel: Kernel, grid: Dim3, block: Dim3, args: Sequence[Any], *, sample: int = 1,
            shared_bytes: int = 0, device: Optional[Device] = None) -> Profile:
    """Instruments the kernel, launches it on the caller's arguments (device
    arrays and typed scalars; the kernel runs for real) and returns each
    thread's BBV.  sample: profile every sample-th thread block only."""
    dev = device or Device.get()
    launch = Launch(grid, block, args, shared_bytes)
    L, err, out = _lib.lib(), new_error(), _lib.Profile()
    check(L.tmap_profile_run(dev.ptr, kernel.ptx.encode(), kernel.name.encode(),
                             ctypes.byref(launch.c), sample, ctypes.byref(out),
                             ctypes.byref(err)), err)
    cfg = out.cfg.contents
    names = [cfg.blocks[i].name.decode() for i in range(cfg.nblocks)]
    stats = [{n: getattr(s, n) for n, _ in _lib.KernelStats._fields_}
             for s in (out.original, out.instrumented)]
    bbv = np.ctypeslib.as_array(out.bbv.counts, shape=(out.bbv.nthreads * out.bbv.nblocks,))
    result = Profile(bbv.reshape(out.bbv.nthreads, out.bbv.nblocks).copy(), names, out.sample,
                     *stats)
    L.tmap_profile_free(ctypes.byref(out))
    return result


class GpuRegroup:
    """The regroup path on the GPU (tmap_gpu_regroup): scratch for nthreads
    threads made once; run() predicts each thread's cost from device
    features through the predictor and sorts by it; sort() sorts by a key
    of the caller's; deal() deals a sorted order across thread blocks.
    Each returns the permutation as a new device array of its input's
    framework (CuPy uint32, PyTorch int32: it indexes with signed integers)
    or as a DeviceArray (u32), or fills `out` (any device array of
    nthreads 32-bit integers) and returns it.  Nothing
    waits: the permutation is ready in the order of `stream`.

    >>> g = predictor.gpu(lat, n)                            # doctest: +SKIP
    >>> perm = g.run(features_cupy, stream=cp.cuda.get_current_stream())  # doctest: +SKIP
    >>> y_regrouped = x[perm]                                # doctest: +SKIP
    """

    def __init__(self, nthreads: int, *, predictor=None, lat: Any = None,
                 device: Optional[Device] = None):
        self.device, self.nthreads = device or Device.get(), int(nthreads)
        L, err, g = _lib.lib(), new_error(), ctypes.c_void_p()
        check(L.tmap_gpu_regroup_create(self.device.ptr, self.nthreads, ctypes.byref(g),
                                        ctypes.byref(err)), err)
        self._owned, self.ptr, self.nfeatures = _lib.Owned(g, "tmap_gpu_regroup_free"), g, None
        if predictor is not None:
            self.model(predictor, lat)

    def model(self, predictor, lat: Any) -> None:
        """The regression and block latencies run() evaluates (copied once)."""
        lat = as_f64(lat, "lat", ndim=1)
        if lat.shape[0] != predictor.nblocks:
            raise InvalidError(f"lat: {lat.shape[0]} latencies, the predictor has "
                               f"{predictor.nblocks} blocks")
        coef, err = np.ascontiguousarray(predictor.coef), new_error()
        check(_lib.lib().tmap_gpu_regroup_model(self.ptr, f64_ptr(coef), f64_ptr(lat),
                                                predictor.nblocks, predictor.nfeatures,
                                                ctypes.byref(err)), err)
        self.nfeatures = predictor.nfeatures

    def _out(self, out: Any, template: Any) -> Tuple[int, Any]:
        """The permutation's device pointer and the array returned."""
        if out is None:
            out = empty_like_framework(template, self.nthreads, self.device)
        v = device_view(out, "out")
        if v.shape != (self.nthreads,) or np.dtype(v.typestr).itemsize != 4:
            raise InvalidError(f"out: wants {self.nthreads} 32-bit integers, got {v.shape} "
                               f"{v.typestr}")
        return v.ptr, out

    def run(self, features: Any, *, stream: Any = None, block_size: int = 0,
            descending: bool = True, out: Any = None) -> Any:
        """Cost (eq. 1 and the block latencies) of each thread from its
        device features, float64 [nthreads, nfeatures], then the stable sort
        by it (heaviest first): over the grid (block_size 0) or within each
        thread block of block_size threads.  One CUDA graph launch."""
        if self.nfeatures is None:
            raise InvalidError("GpuRegroup.run: no model (give predictor and lat)")
        f = device_checked(features, "features", "<f8", (self.nthreads, self.nfeatures))
        ptr, res = self._out(out, features)
        err = new_error()
        check(_lib.lib().tmap_gpu_regroup_run(self.ptr, f.ptr, int(descending), block_size, ptr,
                                              stream_handle(stream), ctypes.byref(err)), err)
        return res

    def sort(self, key: Any, *, stream: Any = None, block_size: int = 0,
             descending: bool = True, out: Any = None) -> Any:
        """The stable sort of the threads by a device key, float64 [nthreads]."""
        k = device_checked(key, "key", "<f8", (self.nthreads,))
        ptr, res = self._out(out, key)
        err = new_error()
        check(_lib.lib().tmap_gpu_regroup_sort(self.ptr, k.ptr, int(descending), block_size, ptr,
                                               stream_handle(stream), ctypes.byref(err)), err)
        return res

    def deal(self, order: Any, block_size: int, *, stream: Any = None, out: Any = None) -> Any:
        """Bin-and-deal: a grid-scope order (heaviest first, device u32)
        cut into warps dealt round-robin to the thread blocks."""
        o = device_view(order, "order")
        if o.shape != (self.nthreads,) or np.dtype(o.typestr).itemsize != 4:
            raise InvalidError(f"order: wants {self.nthreads} 32-bit integers")
        ptr, res = self._out(out, order)
        err = new_error()
        check(_lib.lib().tmap_gpu_regroup_deal(self.ptr, o.ptr, block_size, ptr,
                                               stream_handle(stream), ctypes.byref(err)), err)
        return res

    def synchronize(self, stream: Any = None) -> None:
        err = new_error()
        check(_lib.lib().tmap_gpu_regroup_sync(self.ptr, stream_handle(stream), ctypes.byref(err)),
              err)


REGROUPER_CANDIDATES = ("original", "sorting (grid)", "sorting (thread block)",
                        "bin-and-deal", "greedy (classes)", "greedy-max (classes)",
                        "lam")  # tmap_regrouper_cand_name


class Regrouper:
    """regroup() on the GPU with measured feedback (docs/regrouper.md), in
    front of the caller's own launch: made once per launch shape with the
    launch's per-thread arrays; each launch goes between begin() and end()
    on the kernel's stream, with the arrays begin() returns in place of the
    originals (the regrouped copies).  The first launches try each candidate
    and keep the fastest if it beats the original by `threshold`.

    arrays: (device array, "in" | "out" | "inout", per_thread elements).
    The key, one float64 per thread (larger: more work), comes from either
    key(key_out, stream), which writes it into the device array key_out on
    the stream (an int handle, None: the legacy default stream), or a
    trained predictor with its block latencies lat and the device features
    (float64 [threads, nfeatures], read at each launch that needs a key):
    each thread's predicted latency, computed on the GPU.  With CuPy, a
    key function enqueues on the stream so:
    ``with cupy.cuda.ExternalStream(stream) if stream else cupy.cuda.Stream.null: ...``

    >>> r = threadmap.Regrouper(grid, block, [(steps, "in", 1), (y, "out", 1)],
    ...                         key=lambda k, s: ...)        # doctest: +SKIP
    >>> with r.launch(signature=1, stream=s) as (steps_r, y_r):
    ...     kernel(grid, block, (steps_r, y_r, np.int32(n)), stream=s)  # doctest: +SKIP
    """

    def __init__(self, grid: Dim3, block: Dim3, arrays: Sequence[Tuple[Any, str, int]],
                 key: Optional[Callable[[DeviceArray, Optional[int]], None]] = None, *,
                 predictor=None, lat: Any = None, features: Any = None, scope: str = "grid",
                 candidates: Sequence[str] = (), trial_launches: int = 0, threshold: float = 0.0,
                 overlap: bool = False, device: Optional[Device] = None):
        if scope not in ("grid", "block"):
            raise InvalidError(f"scope: '{scope}' is grid or block")
        if (key is None) == (predictor is None):
            raise InvalidError("Regrouper: give key (a function) or predictor, lat and features")
        self.device = device or Device.get()
        self.views = [device_view(a, f"arrays[{i}]") for i, (a, _, _) in enumerate(arrays)]
        self._launch = Launch(grid, block, [a for a, _, _ in arrays])
        self._arrays = _thread_arrays(arrays, self.views)
        self._key_user, self._key_error = key, None
        self._key_fn = _lib.KEY_FN(self._call_key) if key else _lib.KEY_FN()  # C holds it
        model = self._model(predictor, lat, features) if predictor is not None else (None, None, 0)
        o = _lib.RegrouperOpts(0 if scope == "grid" else 1, _candidate_bits(candidates),
                               trial_launches, threshold, self._key_fn, None, *model)
        o.overlap = int(bool(overlap))
        L, err, r = _lib.lib(), new_error(), ctypes.c_void_p()
        check(L.tmap_regrouper_create(self.device.ptr, ctypes.byref(self._launch.c), self._arrays,
                                      len(arrays), ctypes.byref(o), ctypes.byref(r),
                                      ctypes.byref(err)), err)
        self._owned, self.ptr = _lib.Owned(r, "tmap_regrouper_free"), r
        self._templates = [a for a, _, _ in arrays]

    def _model(self, predictor, lat: Any, features: Any):
        """The model's part of tmap_regrouper_opts (kept alive here)."""
        if lat is None or features is None:
            raise InvalidError("Regrouper: a predictor needs lat and features")
        lat = as_f64(lat, "lat", ndim=1)
        if lat.shape[0] != predictor.nblocks:
            raise InvalidError(f"lat: {lat.shape[0]} latencies, the predictor has "
                               f"{predictor.nblocks} blocks")
        f = device_checked(features, "features", "<f8",
                           (self._launch.threads, predictor.nfeatures))
        self._model_keep = (predictor, lat, f)
        return ctypes.pointer(predictor._c), f64_ptr(lat), f.ptr

    def _call_key(self, user, key_ptr: int, stream) -> int:
        try:
            self._key_user(DeviceArray(key_ptr, (self._launch.threads,), "<f8"), stream)
            return 0
        except BaseException as e:  # an exception must not cross the C frames
            self._key_error = e
            return 1

    def begin(self, signature: int = 0, stream: Any = None) -> List[Any]:
        """Before the launch: the arrays to launch with (the regrouped
        copies, or the originals when the launch is left alone), each in
        its original's framework.  signature: names the input (0: new)."""
        err = new_error()
        st = _lib.lib().tmap_regrouper_begin(self.ptr, signature, stream_handle(stream),
                                             ctypes.byref(err))
        if self._key_error is not None:
            e, self._key_error = self._key_error, None
            raise e
        check(st, err)
        out = []
        for i, (v, t) in enumerate(zip(self.views, self._templates)):
            p = _lib.lib().tmap_regrouper_ptr(self.ptr, i)
            out.append(t if p == v.ptr else like(t, DeviceArray(p, v.shape, v.typestr, owner=self)))
        return out

    def end(self, stream: Any = None) -> None:
        """After the launch: the outputs scattered back to the originals."""
        err = new_error()
        check(_lib.lib().tmap_regrouper_end(self.ptr, stream_handle(stream), ctypes.byref(err)),
              err)

    def launch(self, signature: int = 0, stream: Any = None):
        """begin() and end() around a with block."""
        return _Launching(self, signature, stream)

    def prepare(self, next_signature: int, stream: Any = None) -> None:
        """Overlap (made with overlap=True): the input of the next launch,
        whose key data is in place as far as `stream` holds, is keyed and
        sorted beside the next launch's kernel (docs/regrouper.md)."""
        err = new_error()
        check(_lib.lib().tmap_regrouper_prepare(self.ptr, next_signature, stream_handle(stream),
                                                ctypes.byref(err)), err)

    @property
    def overlap_counts(self) -> Tuple[int, int]:
        """(prepared permutations taken, launches that found theirs not done)."""
        used, late = ctypes.c_size_t(), ctypes.c_size_t()
        _lib.lib().tmap_regrouper_overlap_counts(self.ptr, ctypes.byref(used), ctypes.byref(late))
        return used.value, late.value

    def poll(self, wait: bool = False, stream: Any = None) -> None:
        """Reads the trial times that are in (wait: first waits for the stream)."""
        err = new_error()
        check(_lib.lib().tmap_regrouper_poll(self.ptr, int(wait), stream_handle(stream),
                                             ctypes.byref(err)), err)

    @property
    def chosen(self) -> Optional[str]:
        """The candidate kept, or None while on trial."""
        if _lib.lib().tmap_regrouper_chosen(self.ptr) < 0:
            return None
        return _lib.lib().tmap_regrouper_chosen_name(self.ptr).decode()

    @property
    def why(self) -> str:
        """The decision in words, with every candidate's median time."""
        return (_lib.lib().tmap_regrouper_why(self.ptr) or b"").decode()


def _thread_arrays(arrays: Sequence[Tuple[Any, str, int]], views: List[Any]):
    """The tmap_thread_array table: array i is launch argument i."""
    out = (_lib.ThreadArray * max(1, len(arrays)))()
    for i, ((_, role, per), v) in enumerate(zip(arrays, views)):
        if role not in ("in", "out", "inout"):
            raise InvalidError(f"arrays[{i}]: role '{role}' is in, out or inout")
        out[i] = _lib.ThreadArray(i, np.dtype(v.typestr).itemsize, per, int("in" in role),
                                  int("out" in role))
    return out


def _candidate_bits(names: Sequence[str]) -> int:
    """tmap_regrouper_opts.candidates for candidate names (none: 0, all)."""
    bits = 0
    for c in names:
        if c not in REGROUPER_CANDIDATES:
            raise InvalidError(f"candidates: '{c}' is one of {REGROUPER_CANDIDATES}")
        bits |= 1 << REGROUPER_CANDIDATES.index(c)
    return bits


class _Launching:
    def __init__(self, r: Regrouper, signature: int, stream: Any):
        self.r, self.signature, self.stream = r, signature, stream

    def __enter__(self) -> List[Any]:
        return self.r.begin(self.signature, self.stream)

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.r.end(self.stream)
