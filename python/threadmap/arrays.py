"""threadmap.arrays -- moving arrays between Python and the C library without
computing anything: NumPy arrays as the C structs' borrowed memory (BBVs,
features, permutations), C results copied into NumPy and freed; device
arrays of any framework (``__cuda_array_interface__``: CuPy, PyTorch,
Numba; or DLPack) read as device pointers without copies; CUDA streams from
ints or framework objects; and DeviceArray, a device allocation that other
frameworks see through ``__cuda_array_interface__``.

>>> import numpy as np, threadmap
>>> bbv = np.array([[1, 2], [3, 4]], dtype=np.uint32)
>>> threadmap.arrays.as_bbv(bbv).nthreads
2
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as np

from . import _lib
from .errors import InvalidError


def as_f64(a: Any, name: str, ndim: int = 2) -> np.ndarray:
    """a as a C-contiguous float64 array; a 1-D array becomes one column
    when ndim is 2."""
    arr = np.ascontiguousarray(np.asarray(a, dtype=np.float64))
    if ndim == 2 and arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != ndim:
        raise InvalidError(f"{name}: wants {ndim} dimensions, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InvalidError(f"{name}: values must be finite")
    return arr


def f64_ptr(a: Optional[np.ndarray]):
    """A double * into a float64 array (NULL for None)."""
    if a is None:
        return None
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))


def as_u32(a: Any, name: str, ndim: int) -> np.ndarray:
    """a as a C-contiguous uint32 array, refusing values out of range."""
    arr = np.asarray(a)
    if arr.ndim != ndim:
        raise InvalidError(f"{name}: wants {ndim} dimensions, got shape {arr.shape}")
    if arr.dtype != np.uint32:
        if not np.issubdtype(arr.dtype, np.integer):
            raise InvalidError(f"{name}: wants integers, got {arr.dtype}")
        if arr.size and (arr.min() < 0 or arr.max() > 0xFFFFFFFF):
            raise InvalidError(f"{name}: values must lie in [0, 2^32 - 1]")
    return np.ascontiguousarray(arr, dtype=np.uint32)


def u32_ptr(a: Optional[np.ndarray]):
    """A uint32_t * into a uint32 array (NULL for None)."""
    if a is None:
        return None
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32))


def as_bbv(counts: Any, name: str = "bbv") -> _lib.Bbv:
    """A BBV matrix (uint32 [threads, blocks]) as a tmap_bbv borrowing the
    array's memory (kept alive by it as ._keep; never tmap_bbv_free'd)."""
    arr = as_u32(counts, name, 2)
    if arr.shape[0] < 1 or arr.shape[1] < 1:
        raise InvalidError(f"{name}: needs at least one thread and one block, got {arr.shape}")
    b = _lib.Bbv(arr.shape[0], arr.shape[1], u32_ptr(arr))
    b._keep = arr
    return b


def take_bbv(b: _lib.Bbv) -> np.ndarray:
    """The counts of a tmap_bbv the library filled, copied out; b is freed."""
    try:
        if not b.counts:
            return np.zeros((b.nthreads, b.nblocks), dtype=np.uint32)
        flat = np.ctypeslib.as_array(b.counts, shape=(b.nthreads * b.nblocks,))
        return flat.reshape(b.nthreads, b.nblocks).copy()
    finally:
        _lib.lib().tmap_bbv_free(ctypes.byref(b))


def take_f64(ptr, n: int) -> np.ndarray:
    """n doubles malloc'ed by the library, copied out and freed."""
    try:
        return np.ctypeslib.as_array(ptr, shape=(n,)).copy() if n else np.zeros(0)
    finally:
        _lib.libc.free(ctypes.cast(ptr, ctypes.c_void_p))


def copy_f64(ptr, n: int) -> np.ndarray:
    """n doubles the library owns, copied out (NaN-free or not)."""
    if not ptr or not n:
        return np.zeros(0)
    return np.ctypeslib.as_array(ptr, shape=(n,)).copy()


def c_strings(names: Optional[Sequence[str]]):
    """A char ** of names (NULL for None); the array keeps the bytes alive."""
    if names is None:
        return None
    arr = (ctypes.c_char_p * len(names))(*[s.encode() for s in names])
    return arr


def py_strings(ptr, n: int) -> list:
    """n C strings (char **) as Python str (empty for NULL entries)."""
    if not ptr:
        return []
    return [(ptr[i] or b"").decode() for i in range(n)]


# ------------------------------------------------------------ device arrays

@dataclass
class DeviceView:
    """A device array's pointer, shape and NumPy type string, read from its
    framework (the object is kept so that the memory stays alive)."""
    ptr: int
    shape: Tuple[int, ...]
    typestr: str
    owner: Any


_DL_TYPES = {(0, 32): "<i4", (0, 64): "<i8", (1, 32): "<u4", (1, 64): "<u8",
             (2, 32): "<f4", (2, 64): "<f8"}  # (DLDataTypeCode, bits)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_capsule_ptr = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_ptr.restype, _capsule_ptr.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_KDL_CUDA, _KDL_CUDA_MANAGED = 2, 13


def _from_dlpack(obj: Any, name: str) -> DeviceView:
    """A DLPack producer's CUDA tensor (the capsule is kept, unconsumed: its
    destructor releases the tensor when the view goes)."""
    cap = obj.__dlpack__()
    t = _DLTensor.from_address(_capsule_ptr(cap, b"dltensor"))
    if t.device.device_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        raise InvalidError(f"{name}: a DLPack tensor on device type {t.device.device_type}, "
                           "not CUDA")
    typestr = _DL_TYPES.get((t.code, t.bits))
    if typestr is None or t.lanes != 1:
        raise InvalidError(f"{name}: DLPack type code {t.code}, {t.bits} bits is not supported")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    if strides is not None and strides != _c_strides(shape, 1):
        raise InvalidError(f"{name}: must be C-contiguous (no copies are made)")
    return DeviceView(t.data + t.byte_offset, shape, typestr, (obj, cap))


def _c_strides(shape: Tuple[int, ...], itemsize: int) -> Tuple[int, ...]:
    out, step = [], itemsize
    for d in reversed(shape):
        out.append(step)
        step *= d
    return tuple(reversed(out))


def device_view(obj: Any, name: str) -> DeviceView:
    """obj's device memory, from ``__cuda_array_interface__`` or DLPack;
    InvalidError for a host array or a non-contiguous one."""
    iface = getattr(obj, "__cuda_array_interface__", None)
    if iface is None:
        if hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
            return _from_dlpack(obj, name)
        raise InvalidError(f"{name}: not a device array (no __cuda_array_interface__ or "
                           "DLPack); give a CuPy array, a CUDA PyTorch tensor or a Numba "
                           "device array")
    shape = tuple(iface["shape"])
    typestr = iface["typestr"]
    strides = iface.get("strides")
    if strides is not None and tuple(strides) != _c_strides(shape, np.dtype(typestr).itemsize):
        raise InvalidError(f"{name}: must be C-contiguous (no copies are made)")
    return DeviceView(int(iface["data"][0]), shape, typestr, obj)


def is_device_array(obj: Any) -> bool:
    """Whether obj is a device array device_view would take."""
    return hasattr(obj, "__cuda_array_interface__") or (
        hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")
        and not isinstance(obj, np.ndarray) and obj.__dlpack_device__()[0] in (2, 13))


def device_checked(obj: Any, name: str, typestr: str, shape: Tuple[Optional[int], ...]) -> DeviceView:
    """device_view, checked against a type and a shape (None: any extent)."""
    v = device_view(obj, name)
    if np.dtype(v.typestr) != np.dtype(typestr):
        raise InvalidError(f"{name}: wants {np.dtype(typestr).name}, got "
                           f"{np.dtype(v.typestr).name} (convert it first: no copies are made)")
    if len(v.shape) != len(shape) or any(w is not None and w != g for w, g in zip(shape, v.shape)):
        raise InvalidError(f"{name}: wants shape {shape}, got {v.shape}")
    return v


def stream_handle(stream: Any) -> Optional[int]:
    """A CUstream / cudaStream_t value from None (the legacy default
    stream), an int, a CuPy stream (.ptr), a PyTorch stream (.cuda_stream)
    or an object of the ``__cuda_stream__`` protocol."""
    if stream is None:
        return None
    if isinstance(stream, int):
        return stream or None
    if hasattr(stream, "__cuda_stream__"):
        return int(stream.__cuda_stream__()[1]) or None
    for attr in ("ptr", "cuda_stream", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr)) or None
    raise InvalidError(f"stream: {type(stream).__name__} is not a stream (give an int, a "
                       "CuPy or PyTorch stream)")


class DeviceArray:
    """Device memory owned by the library's CUDA context (or borrowed), seen
    by CuPy, PyTorch and Numba through ``__cuda_array_interface__``:
    ``cupy.asarray(a)``, ``torch.as_tensor(a, device="cuda")``, without a copy.

    >>> perm = gpu.run(features)                     # doctest: +SKIP
    >>> x_regrouped = x[cupy.asarray(perm)]          # doctest: +SKIP
    """

    def __init__(self, ptr: int, shape: Tuple[int, ...], typestr: str,
                 release: Optional[Callable[[], None]] = None, owner: Any = None):
        self.ptr, self.shape, self.typestr = int(ptr), tuple(shape), typestr
        self._release, self._owner = release, owner

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.typestr)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.dtype.itemsize

    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "typestr": self.typestr, "data": (self.ptr, False),
                "version": 3, "strides": None}

    def view(self, typestr: str) -> "DeviceArray":
        """The same memory as another type of the same size (e.g. "<i4" for
        frameworks that index with signed integers); keeps self alive."""
        if np.dtype(typestr).itemsize != self.dtype.itemsize:
            raise InvalidError(f"view: {typestr} is not the size of {self.typestr}")
        return DeviceArray(self.ptr, self.shape, typestr, owner=self)

    def to_cupy(self):
        """A CuPy array on this memory (no copy)."""
        import cupy
        return cupy.asarray(self)

    def to_torch(self):
        """A CUDA PyTorch tensor on this memory (no copy; u32 is seen as
        int32, which PyTorch indexes with)."""
        import torch
        src = self.view("<i4") if self.typestr == "<u4" else self
        return torch.as_tensor(src, device="cuda")

    def copy_to_host(self) -> np.ndarray:
        """A NumPy copy (waits for the legacy default stream's work)."""
        out = np.empty(self.shape, dtype=self.dtype)
        from .gpu import Device
        Device.get().download(out, self.ptr)
        return out

    def free(self) -> None:
        """Releases the memory now (else when the object goes)."""
        if self._release:
            self._release()
            self._release = None

    def __del__(self):
        self.free()

    def __repr__(self) -> str:
        return f"DeviceArray(ptr=0x{self.ptr:x}, shape={self.shape}, typestr={self.typestr!r})"


def empty_like_framework(template: Any, n: int, device) -> Any:
    """A new device array of n 32-bit integers from template's framework's
    own allocator (CuPy's pool, PyTorch's caching allocator: no wait when
    it is freed): uint32 in CuPy, int32 in PyTorch (which indexes with
    signed integers); else a DeviceArray (u32) from the library."""
    mod = type(template).__module__.split(".")[0]
    if mod == "cupy":
        import cupy
        return cupy.empty(n, dtype=cupy.uint32)
    if mod == "torch":
        import torch
        return torch.empty(n, dtype=torch.int32, device=template.device)
    return device.alloc((n,), np.uint32)


def like(template: Any, arr: DeviceArray) -> Any:
    """arr in template's framework when that is CuPy or PyTorch (no copy),
    else arr itself."""
    mod = type(template).__module__.split(".")[0]
    if mod == "cupy":
        return arr.to_cupy()
    if mod == "torch":
        return arr.to_torch()
    return arr
