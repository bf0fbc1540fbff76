"""threadmap._lib -- finds and loads libthreadmap.so and declares, with ctypes,
the C structs and functions of the public API (include/threadmap/*.h) that
the package uses.  Nothing here computes: every struct mirrors a C struct
field for field (tests/test_abi.py checks sizes and offsets against the
headers), every function is declared with its C prototype.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, c_char, c_char_p, c_double, c_float, c_int, c_int64,
                    c_size_t, c_uint, c_uint32, c_uint64, c_void_p)
from pathlib import Path
from typing import List, Optional

LIBRARY_ENV = "THREADMAP_LIBRARY"
_SONAMES = ("libthreadmap.so", "libthreadmap.so.0")


class LibraryNotFound(OSError):
    """libthreadmap.so was not found (or could not be loaded) anywhere searched."""


def _repo_roots() -> List[Path]:
    """The threadmap checkouts this package may sit in or was installed from."""
    roots = [Path(__file__).resolve().parents[2]]
    try:
        from threadmap import _install  # written by setup.py at install time
        roots.append(Path(_install.REPO_ROOT))
    except ImportError:
        pass
    return [r for r in roots if (r / "include" / "threadmap.h").exists()]


def candidates() -> List[str]:
    """Where the library is looked for, in order: $THREADMAP_LIBRARY, the
    repository's build/ folder, then the system loader's search path."""
    found: List[str] = []
    env = os.environ.get(LIBRARY_ENV)
    if env:
        return [env]
    for root in _repo_roots():
        for name in _SONAMES:
            found.append(str(root / "build" / name))
    system = ctypes.util.find_library("threadmap")
    found.extend([system] if system else list(_SONAMES))
    return found


def load() -> ctypes.CDLL:
    """Loads the first library of candidates() that exists and loads."""
    tried = []
    for path in candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (missing)")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise LibraryNotFound(
        "threadmap: libthreadmap.so not found; build it (cmake -S . -B build && cmake --build "
        f"build) or set {LIBRARY_ENV} to its path. Tried: " + "; ".join(tried))


# ------------------------------------------------------------------ structs

class Error(ctypes.Structure):
    _fields_ = [("message", c_char * 2048), ("status", c_int)]


class Bbv(ctypes.Structure):
    _fields_ = [("nthreads", c_size_t), ("nblocks", c_size_t), ("counts", POINTER(c_uint32))]


class CompileOpts(ctypes.Structure):
    _fields_ = [("arch", c_char_p), ("options", POINTER(c_char_p)), ("noptions", c_size_t),
                ("include_dirs", POINTER(c_char_p)), ("ninclude_dirs", c_size_t),
                ("names", POINTER(c_char_p)), ("nnames", c_size_t)]


class Compiled(ctypes.Structure):
    _fields_ = [("ptx", c_char_p), ("log", c_char_p), ("nnames", c_size_t),
                ("names", POINTER(c_char_p)), ("lowered", POINTER(c_char_p))]


class CfgBlock(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("func", c_uint32), ("line", c_uint32), ("ninstr", c_uint32),
                ("opcodes", POINTER(c_char_p)), ("term", c_int), ("predicated_term", c_int),
                ("nsucc", c_uint32), ("succ", POINTER(c_uint32)), ("ipdom", ctypes.c_int32),
                ("src_file", c_char_p), ("src_line", c_uint32)]


class CfgFunc(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("is_entry", c_int), ("first_block", c_uint32),
                ("nblocks", c_uint32)]


class Cfg(ctypes.Structure):
    _fields_ = [("nfuncs", c_size_t), ("funcs", POINTER(CfgFunc)), ("nblocks", c_size_t),
                ("blocks", POINTER(CfgBlock))]


class Safety(ctypes.Structure):
    _fields_ = [(n, c_int) for n in ("barriers", "shared_memory", "warp_collectives",
                                     "hardware_ids", "tid_as_value", "tid_in_control", "atomics",
                                     "cluster", "unredirectable")] + [
        ("reasons", c_char * 2048), ("scope", c_int), ("layout_ok", c_int), ("redirect_ok", c_int),
        ("non_thread_arrays", c_int)]


class LatLookup(ctypes.Structure):
    _fields_ = [("latency", c_double), ("issue", c_double), ("match", c_int),
                ("key", c_char * 96)]


class LatFallback(ctypes.Structure):
    _fields_ = [("opcode", c_char_p), ("how", LatLookup), ("count", c_size_t)]


class LatReport(ctypes.Structure):
    _fields_ = [("n", c_size_t), ("items", POINTER(LatFallback))]


class SmParams(ctypes.Structure):
    _fields_ = [("nsms", c_size_t), ("blocks_per_sm", c_size_t), ("subpartitions", c_size_t),
                ("warps_per_block", c_size_t), ("bytes_per_cycle", c_double),
                ("const_replay", c_double), ("redirect", c_int),
                ("gather_sectors_per_cycle", c_double), ("one_sm_bytes_per_cycle", c_double),
                ("one_sm_gather_sectors_per_cycle", c_double), ("l1_local_bytes", c_double),
                ("local_miss_cycles", c_double), ("const_cache_bytes", c_double),
                ("idc_cycles", c_double), ("idc_fill_cycles", c_double)]


class SmBlock(ctypes.Structure):
    _fields_ = [(n, c_double) for n in ("issue", "latency", "affine_n", "affine_bytes", "data_n",
                                        "data_bytes", "gather_n", "uniform_n", "const_n",
                                        "const_keyed_n", "walk",
                                        "walk_base", "walk_q", "local_loads", "local_fill",
                                        "local_fixed", "rewalk_bytes")] + [
                    (n, c_uint32) for n in ("visit_parent", "loop_id", "rewalk_loop")]


class SassSplits(ctypes.Structure):
    _fields_ = [("n", c_size_t), ("v", c_void_p), ("keys", c_void_p)]


class SmModel(ctypes.Structure):
    _fields_ = [("params", SmParams), ("block_size", c_size_t), ("blocks", POINTER(SmBlock)),
                ("nblocks", c_size_t), ("noise", c_void_p), ("group", c_void_p),
                ("group_n", c_size_t), ("ngroups", c_size_t), ("const_loads", c_size_t),
                ("const_bytes", c_size_t), ("issue_sass", c_int)]


class ModelParams(ctypes.Structure):
    _fields_ = [("block_size", c_size_t), ("nsms", c_size_t), ("blocks_per_sm", c_size_t),
                ("simd_weights", POINTER(c_double)), ("simd_splits", c_void_p),
                ("sm", POINTER(SmModel))]


class SmTimeParts(ctypes.Structure):
    _fields_ = [(n, c_double) for n in ("cycles", "issue", "latency", "memory", "constant")]


class Metrics(ctypes.Structure):
    _fields_ = [("nwarps", c_size_t), ("nthread_blocks", c_size_t)] + [
        (n, c_double) for n in ("bbv_weighted", "bbv_weighted_scheduled", "zero_divergence",
                                "divergent_warps_pct", "divergent_branches",
                                "branch_executions")] + [
        ("branches_unestimated", c_size_t)] + [
        (n, c_double) for n in ("simd_active_threads_per_inst", "thread_instructions",
                                "warp_instructions")] + [
        ("warp_cost", POINTER(c_double)), ("block_cost", POINTER(c_double)),
        ("ideal_warp_cost", POINTER(c_double)), ("sm", SmTimeParts)]


class RegressRun(ctypes.Structure):
    _fields_ = [("features", POINTER(c_double)), ("bbv", POINTER(Bbv))]


class BbvNoise(ctypes.Structure):
    _fields_ = [("nblocks", c_size_t), ("edge", POINTER(c_double)), ("mean", POINTER(c_double)),
                ("sd", POINTER(c_double)), ("cap", POINTER(c_double)), ("rho", POINTER(c_double))]


class Predictor(ctypes.Structure):
    _fields_ = [("kernel", c_char_p), ("cfg_hash", c_uint64), ("nblocks", c_size_t),
                ("block_names", POINTER(c_char_p)), ("nfeatures", c_size_t),
                ("feature_names", POINTER(c_char_p)), ("coef", POINTER(c_double)),
                ("r2", POINTER(c_double)), ("rms", POINTER(c_double)),
                ("rank", POINTER(c_size_t)), ("noise", BbvNoise)]


class CvResult(ctypes.Structure):
    _fields_ = [("nblocks", c_size_t), ("rms", POINTER(c_double)), ("total_rms", c_double),
                ("folds", c_size_t), ("by_run", c_int)]


class RegroupOpts(ctypes.Structure):
    _fields_ = [("groupsize", c_size_t), ("scope", c_int), ("block_size", c_size_t),
                ("threads", c_size_t)]


class PlanOpts(ctypes.Structure):
    _fields_ = [("model", ModelParams), ("regroup", RegroupOpts), ("key", POINTER(c_double)),
                ("algos", c_uint), ("threshold", c_double), ("original_ms", c_double),
                ("apply_ms", c_double), ("launches", c_double)]


class Candidate(ctypes.Structure):
    _fields_ = [("available", c_int), ("algo", c_int), ("note", c_char * 200),
                ("perm", POINTER(c_uint32)), ("m", Metrics), ("algo_ms", c_double),
                ("gain", c_double), ("total_ms", c_double)]


ALGO_COUNT = 6  # TMAP_ALGO_COUNT


class Plan(ctypes.Structure):
    _fields_ = [("n", c_size_t), ("cand", Candidate * ALGO_COUNT), ("chosen", c_int),
                ("why", c_char * 512)]


class ReportRow(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("available", c_int), ("note", c_char_p),
                ("m", POINTER(Metrics)), ("gain", c_double), ("algo_ms", c_double),
                ("measured_ms", c_double), ("apply_ms", c_double), ("outputs_equal", c_int),
                ("chosen", c_int)]


class Report(ctypes.Structure):
    _fields_ = [("kernel", c_char_p), ("origin", c_char_p), ("device", c_char_p),
                ("bbv", POINTER(Bbv)), ("lat", POINTER(c_double)),
                ("block_names", POINTER(c_char_p)), ("params", POINTER(ModelParams)),
                ("latency_table", c_char_p), ("fallbacks", POINTER(LatReport)),
                ("nrows", c_size_t), ("rows", POINTER(ReportRow)), ("decision", c_char_p),
                ("mechanism", c_char_p), ("gpu_path", c_char * 1024), ("cfg", c_void_p)]


class DeviceInfo(ctypes.Structure):
    _fields_ = [("name", c_char * 256)] + [
        (n, c_int) for n in ("cc_major", "cc_minor", "sms", "clock_khz", "mem_clock_khz",
                             "mem_bus_width_bits", "max_threads_per_sm", "max_blocks_per_sm",
                             "driver_version", "ptx_major", "ptx_minor")]


class Launch(ctypes.Structure):
    _fields_ = [("grid", c_uint * 3), ("block", c_uint * 3), ("shared_bytes", c_uint),
                ("args", POINTER(c_void_p)), ("nargs", c_size_t)]


class KernelStats(ctypes.Structure):
    _fields_ = [(n, c_int) for n in ("registers", "local_bytes", "static_shared_bytes",
                                     "blocks_per_sm")]


class Profile(ctypes.Structure):
    _fields_ = [("bbv", Bbv), ("cfg", POINTER(Cfg)), ("sample", c_uint32),
                ("original", KernelStats), ("instrumented", KernelStats)]


class ThreadArray(ctypes.Structure):
    _fields_ = [("arg", c_uint), ("elem_size", c_size_t), ("per_thread", c_size_t),
                ("input", c_int), ("output", c_int)]


KEY_FN = CFUNCTYPE(c_int, c_void_p, c_uint64, c_void_p)


class RegrouperOpts(ctypes.Structure):
    _fields_ = [("candidates", c_uint), ("scope", c_int), ("trial_launches", c_int),
                ("threshold", c_double), ("key", KEY_FN), ("key_user", c_void_p),
                ("model", POINTER(Predictor)), ("lat", POINTER(c_double)),
                ("features", c_uint64), ("redirected", c_void_p),
                ("alt_model", POINTER(Predictor)), ("alt_lat", POINTER(c_double)),
                ("alt_name", ctypes.c_char_p), ("overlap", c_int)]


# ---------------------------------------------------------------- functions

E = POINTER(Error)
P = c_void_p  # an opaque object (tmap_ptx_module *, tmap_cfg * kept opaque, ...)
_U32P, _F64P = POINTER(c_uint32), POINTER(c_double)

# name: (restype, argtypes); status-returning functions return c_int.
PROTOTYPES = {
    "tmap_status_string": (c_char_p, [c_int]),
    "tmap_bbv_create": (c_int, [POINTER(Bbv), c_size_t, c_size_t, E]),
    "tmap_bbv_free": (None, [POINTER(Bbv)]),
    "tmap_bbv_load": (c_int, [c_char_p, POINTER(Bbv), POINTER(POINTER(c_char_p)), E]),
    "tmap_bbv_save": (c_int, [c_char_p, POINTER(Bbv), POINTER(c_char_p), E]),
    "tmap_names_free": (None, [POINTER(c_char_p), c_size_t]),
    "tmap_npy_load_f64": (c_int, [c_char_p, c_int, POINTER(_F64P), POINTER(c_size_t), E]),
    "tmap_compile": (c_int, [c_char_p, c_char_p, POINTER(CompileOpts), POINTER(Compiled), E]),
    "tmap_compiled_free": (None, [POINTER(Compiled)]),
    "tmap_ptx_parse": (c_int, [c_char_p, c_size_t, c_char_p, POINTER(P), E]),
    "tmap_ptx_free": (None, [P]),
    "tmap_ptx_print": (c_int, [P, POINTER(c_void_p), E]),
    "tmap_ptx_num_kernels": (c_size_t, [P]),
    "tmap_ptx_kernel_name": (c_char_p, [P, c_size_t]),
    "tmap_cfg_build": (c_int, [P, c_char_p, POINTER(POINTER(Cfg)), E]),
    "tmap_cfg_free": (None, [POINTER(Cfg)]),
    "tmap_bbv_instrument": (c_int, [P, c_char_p, POINTER(POINTER(Cfg)), E]),
    "tmap_redirect_instrument": (c_int, [P, c_char_p, E]),
    "tmap_safety_analyze": (c_int, [P, c_char_p, POINTER(Safety), E]),
    "tmap_scope_advice_name": (c_char_p, [c_int]),
    "tmap_lat_load": (c_int, [c_char_p, POINTER(P), E]),
    "tmap_lat_free": (None, [P]),
    "tmap_lat_blocks": (c_int, [P, POINTER(Cfg), POINTER(_F64P), POINTER(LatReport), E]),
    "tmap_lat_report_free": (None, [POINTER(LatReport)]),
    "tmap_lat_default_path": (c_int, [c_char_p, c_char_p, c_size_t, E]),
    "tmap_sm_model_make": (c_int, [P, P, c_char_p, POINTER(Cfg), _F64P, c_size_t, c_size_t,
                                   c_size_t, c_int, POINTER(SmModel), E]),
    "tmap_sm_model_free": (None, [POINTER(SmModel)]),
    "tmap_sm_model_features": (c_int, [POINTER(SmModel), _F64P, c_size_t, c_size_t, E]),
    "tmap_sass_block_counts": (c_int, [c_char_p, POINTER(Cfg), c_char_p, _F64P,
                                       POINTER(SassSplits), E]),
    "tmap_sass_splits_free": (None, [POINTER(SassSplits)]),
    "tmap_metrics_compute": (c_int, [POINTER(Bbv), _F64P, _U32P, POINTER(Cfg),
                                     POINTER(ModelParams), POINTER(Metrics), E]),
    "tmap_metrics_free": (None, [POINTER(Metrics)]),
    "tmap_perm_check": (c_int, [_U32P, c_size_t, c_char_p, E]),
    "tmap_regress_fit": (c_int, [POINTER(RegressRun), c_size_t, c_size_t, c_char_p,
                                 POINTER(c_char_p), POINTER(c_char_p), POINTER(Predictor), E]),
    "tmap_regress_cv": (c_int, [POINTER(RegressRun), c_size_t, c_size_t, c_size_t, c_int,
                                POINTER(CvResult), E]),
    "tmap_cv_result_free": (None, [POINTER(CvResult)]),
    "tmap_predict": (c_int, [POINTER(Predictor), _F64P, c_size_t, POINTER(Bbv), E]),
    "tmap_predictor_save": (c_int, [c_char_p, POINTER(Predictor), E]),
    "tmap_predictor_load": (c_int, [c_char_p, c_char_p, c_size_t, POINTER(c_char_p),
                                    POINTER(Predictor), E]),
    "tmap_predictor_free": (None, [POINTER(Predictor)]),
    "tmap_algo_name": (c_char_p, [c_int]),
    "tmap_algo_parse": (c_int, [c_char_p]),
    "tmap_plan_make": (c_int, [POINTER(Bbv), _F64P, POINTER(Cfg), POINTER(PlanOpts),
                               POINTER(Plan), E]),
    "tmap_plan_free": (None, [POINTER(Plan)]),
    "tmap_mechanism_name": (c_char_p, [c_int]),
    "tmap_mechanism_choose": (c_int, [POINTER(Safety), c_int]),
    "tmap_report_html": (c_int, [POINTER(Report), c_void_p, E]),
    "tmap_report_text": (c_int, [POINTER(Report), c_void_p, E]),
    "tmap_report_markdown": (c_int, [POINTER(Report), c_void_p, E]),
    "tmap_report_json": (c_int, [POINTER(Report), c_void_p, E]),
    "tmap_report_write_dir": (c_int, [POINTER(Report), c_char_p, E]),
    # the GPU
    "tmap_cuda_open": (c_int, [c_int, POINTER(P), E]),
    "tmap_cuda_close": (None, [P]),
    "tmap_cuda_info": (c_int, [P, POINTER(DeviceInfo), E]),
    "tmap_cuda_alloc": (c_int, [P, c_size_t, POINTER(c_uint64), E]),
    "tmap_cuda_free": (None, [P, c_uint64]),
    "tmap_cuda_upload": (c_int, [P, c_uint64, c_void_p, c_size_t, E]),
    "tmap_cuda_download": (c_int, [P, c_void_p, c_uint64, c_size_t, E]),
    "tmap_profile_run": (c_int, [P, c_char_p, c_char_p, POINTER(Launch), c_uint32,
                                 POINTER(Profile), E]),
    "tmap_profile_free": (None, [POINTER(Profile)]),
    "tmap_gpu_regroup_create": (c_int, [P, c_size_t, POINTER(P), E]),
    "tmap_gpu_regroup_free": (None, [P]),
    "tmap_gpu_regroup_model": (c_int, [P, _F64P, _F64P, c_size_t, c_size_t, E]),
    "tmap_gpu_regroup_run": (c_int, [P, c_uint64, c_int, c_size_t, c_uint64, c_void_p, E]),
    "tmap_gpu_regroup_sort": (c_int, [P, c_uint64, c_int, c_size_t, c_uint64, c_void_p, E]),
    "tmap_gpu_regroup_deal": (c_int, [P, c_uint64, c_size_t, c_uint64, c_void_p, E]),
    "tmap_gpu_regroup_sync": (c_int, [P, c_void_p, E]),
    "tmap_regrouper_create": (c_int, [P, POINTER(Launch), POINTER(ThreadArray), c_size_t,
                                      POINTER(RegrouperOpts), POINTER(P), E]),
    "tmap_regrouper_free": (None, [P]),
    "tmap_regrouper_begin": (c_int, [P, c_uint64, c_void_p, E]),
    "tmap_regrouper_ptr": (c_uint64, [P, c_size_t]),
    "tmap_regrouper_end": (c_int, [P, c_void_p, E]),
    "tmap_regrouper_poll": (c_int, [P, c_int, c_void_p, E]),
    "tmap_regrouper_prepare": (c_int, [P, c_uint64, c_void_p, E]),
    "tmap_regrouper_overlap_counts": (None, [P, POINTER(c_size_t), POINTER(c_size_t)]),
    "tmap_regrouper_chosen": (c_int, [P]),
    "tmap_regrouper_why": (c_char_p, [P]),
    "tmap_regrouper_chosen_name": (c_char_p, [P]),
    "tmap_regrouper_cand_name": (c_char_p, [c_int]),
}


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    for name, (res, args) in PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    return lib


_libc = ctypes.CDLL(None)
_libc.open_memstream.restype = c_void_p
_libc.open_memstream.argtypes = [POINTER(c_void_p), POINTER(c_size_t)]
_libc.fclose.argtypes = [c_void_p]
_libc.free.argtypes = [c_void_p]
libc = _libc

_lib: Optional[ctypes.CDLL] = None


def lib() -> ctypes.CDLL:
    """The loaded, declared library (loaded on first use)."""
    global _lib
    if _lib is None:
        _lib = _declare(load())
    return _lib


class Owned:
    """A C object (a pointer, or a struct the library filled) and the C
    function that frees it, called once when this object goes."""

    def __init__(self, ptr, free: str, by_ref: bool = False):
        self.ptr, self._free, self._by_ref = ptr, free, by_ref

    def __del__(self):
        if self.ptr is not None:
            fn = getattr(lib(), self._free)
            fn(ctypes.byref(self.ptr) if self._by_ref else self.ptr)
            self.ptr = None


def take_string(ptr: int) -> str:
    """The NUL-terminated string at ptr (malloc'ed by the library), freed."""
    try:
        return ctypes.string_at(ptr).decode()
    finally:
        libc.free(ptr)


__all__ = ["lib", "libc", "load", "candidates", "LibraryNotFound", "take_string", "Owned",
           "c_float", "c_int64"]
