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

from typing import Dict

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


def _status_error(code: int, name: str, status: str, doc: str, *bases) -> type:
    """The subclass of ThreadmapError for one tmap_status."""
    return type(name, (ThreadmapError,) + bases, {"__doc__": doc, "status": status,
                                                  "code": code, "__module__": __name__})


# tmap_status 1, 2, ... in order: class name, status name, meaning, other bases.
_STATUSES = (
    ("InvalidError", "invalid", "a bad argument or a bad value in an input", ValueError),
    ("NoMemoryError", "nomem", "an allocation failed"),
    ("FileError", "io", "a file could not be read or written"),
    ("ParseError", "parse", "PTX, a table, a manifest... is malformed"),
    ("FormatError", "format", "a file is of the wrong kind or version"),
    ("CompileError", "nvrtc", "NVRTC refused to compile (its log is the message)"),
    ("CudaError", "cuda", "a CUDA driver call failed"),
    ("NoDeviceError", "no_device", "no CUDA driver or no GPU on this machine"),
    ("UnsupportedError", "unsupported", "valid, but threadmap cannot do it (yet)"),
    ("NumericError", "numeric", "a numerical method failed (GSL)", ArithmeticError),
)
(InvalidError, NoMemoryError, FileError, ParseError, FormatError, CompileError, CudaError,
 NoDeviceError, UnsupportedError, NumericError) = [
    _status_error(code, *row) for code, row in enumerate(_STATUSES, start=1)]

_BY_CODE: Dict[int, type] = {
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
