"""threadmap.errors -- the one exception class of the package, ThreadmapError,
with a subclass per C status (tmap_status), and check(), which turns a
failed C call into the exception carrying the C library's message.

>>> import threadmap
>>> try:
...     threadmap.Kernel.from_ptx("not ptx", filename="bad.ptx")
... except threadmap.ThreadmapError as e:
...     print(type(e).__name__, e.status)
ParseError parse
"""
from __future__ import annotations

from typing import Dict, Type

from . import _lib


class ThreadmapError(Exception):
    """A threadmap call failed.  ``str(e)`` is the C library's message (it
    names the file, PTX line or CUDA call); ``e.status`` the status name
    ("invalid", "parse", "cuda", ...); ``e.code`` the tmap_status number."""

    status = "error"
    code = -1

    def __init__(self, message: str, code: int = -1):
        super().__init__(message)
        if code >= 0:
            self.code = code


class InvalidError(ThreadmapError, ValueError):
    """TMAP_ERR_INVALID: a bad argument or a bad value in an input."""
    status, code = "invalid", 1


class NoMemoryError(ThreadmapError):
    """TMAP_ERR_NOMEM: an allocation failed."""
    status, code = "nomem", 2


class FileError(ThreadmapError):
    """TMAP_ERR_IO: a file could not be read or written."""
    status, code = "io", 3


class ParseError(ThreadmapError):
    """TMAP_ERR_PARSE: PTX, a table, a manifest... is malformed."""
    status, code = "parse", 4


class FormatError(ThreadmapError):
    """TMAP_ERR_FORMAT: a file is of the wrong kind or version."""
    status, code = "format", 5


class CompileError(ThreadmapError):
    """TMAP_ERR_NVRTC: NVRTC refused to compile (its log is the message)."""
    status, code = "nvrtc", 6


class CudaError(ThreadmapError):
    """TMAP_ERR_CUDA: a CUDA driver call failed."""
    status, code = "cuda", 7


class NoDeviceError(ThreadmapError):
    """TMAP_ERR_NO_DEVICE: no CUDA driver or no GPU on this machine."""
    status, code = "no_device", 8


class UnsupportedError(ThreadmapError):
    """TMAP_ERR_UNSUPPORTED: valid, but threadmap cannot do it (yet)."""
    status, code = "unsupported", 9


class NumericError(ThreadmapError, ArithmeticError):
    """TMAP_ERR_NUMERIC: a numerical method failed (GSL)."""
    status, code = "numeric", 10


_BY_CODE: Dict[int, Type[ThreadmapError]] = {
    c.code: c for c in (InvalidError, NoMemoryError, FileError, ParseError, FormatError,
                        CompileError, CudaError, NoDeviceError, UnsupportedError, NumericError)}


def error_for(code: int, message: str) -> ThreadmapError:
    """The exception for a tmap_status code and message."""
    return _BY_CODE.get(code, ThreadmapError)(message, code)


def check(status: int, err: "_lib.Error") -> None:
    """Raises the exception for a failed call (status != TMAP_OK)."""
    if status:
        raise error_for(status, err.message.decode(errors="replace"))


def new_error() -> "_lib.Error":
    """A zeroed tmap_error to pass as a call's last argument."""
    return _lib.Error()
