"""threadmap -- measures, models and removes control-flow divergence in CUDA
kernels by regrouping threads, from Python.  A thin ctypes binding of the C
library (libthreadmap.so): every computation is the library's.

>>> import threadmap
>>> k = threadmap.Kernel.from_source(src, "divergent")           # doctest: +SKIP
>>> p = threadmap.train([(features, bbv)], kernel=k.name)        # doctest: +SKIP
>>> perm = threadmap.regroup(p.predict(new_features), kernel=k)  # doctest: +SKIP
>>> threadmap.report(p.predict(new_features), kernel=k, out="report/")  # doctest: +SKIP

The library is found through $THREADMAP_LIBRARY, then the repository's
build/ folder, then the system loader (python/README.md).
"""
from .errors import (CompileError, CudaError, FileError, FormatError, InvalidError, NoDeviceError,
                     NoMemoryError, NumericError, ParseError, ThreadmapError, UnsupportedError)
from .kernel import Block, BlockLatencies, Cfg, Function, Kernel, Safety
from .model import CrossValidation, Predictor, estimate, load_bbv, load_npy, save_bbv, train
from .regroup import ALGOS, Candidate, Plan, plan, regroup
from .report import Report, report
from .arrays import DeviceArray
from .gpu import Device, GpuRegroup, Profile, Regrouper, profile
from . import arrays

__version__ = "0.1.0"




__all__ = [
    "ThreadmapError", "InvalidError", "NoMemoryError", "FileError", "ParseError", "FormatError",
    "CompileError", "CudaError", "NoDeviceError", "UnsupportedError", "NumericError",
    "Kernel", "Cfg", "Block", "Function", "Safety", "BlockLatencies",
    "train", "Predictor", "CrossValidation", "estimate", "load_bbv", "save_bbv", "load_npy",
    "plan", "regroup", "Plan", "Candidate", "ALGOS", "report", "Report",
    "Device", "DeviceArray", "GpuRegroup", "Regrouper", "Profile", "profile", "arrays",
]
