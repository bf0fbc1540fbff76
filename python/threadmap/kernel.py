"""threadmap.kernel -- a CUDA kernel as threadmap sees it: compiled by NVRTC
(Kernel.from_source) or given as PTX (Kernel.from_ptx); its CFG, safety
analysis, instrumented or redirected PTX, and block latencies from a
latency table.  Each is one call into the C library's instrument and model
stages.

>>> import threadmap
>>> k = threadmap.Kernel.from_source('''
... extern "C" __global__ void twice(float *x, int n) {
...     int i = blockIdx.x * blockDim.x + threadIdx.x;
...     if (i < n) x[i] *= 2.0f;
... }''', "twice")
>>> k.name, len(k.cfg().blocks) > 1, k.safety().scope
('twice', True, 'grid')
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from . import _lib
from .arrays import c_strings, f64_ptr, take_f64
from .errors import InvalidError, check, new_error

TERMS = ("fall", "bra", "cbra", "brx", "ret", "exit", "trap")


@dataclass
class Block:
    """One basic block: its BBV column is its index in Cfg.blocks."""
    name: str
    func: int
    line: int
    opcodes: List[str]
    term: str
    successors: List[int]
    ipdom: int  # -1: the virtual exit


@dataclass
class Function:
    name: str
    is_entry: bool
    first_block: int
    nblocks: int


@dataclass
class Cfg:
    """The CFG of one kernel and the .funcs it calls (Cfg.blocks[i] is BBV
    column i)."""
    functions: List[Function]
    blocks: List[Block]

    @property
    def block_names(self) -> List[str]:
        return [b.name for b in self.blocks]


@dataclass
class Safety:
    """What the safety analysis found (docs/safety.md): instruction counts
    per finding, the reasons in words, and the regroupings allowed."""
    counts: dict
    reasons: List[str]
    scope: str         # "grid", "block", "warps" or "none"
    layout_ok: bool
    redirect_ok: bool
    mechanism: str     # what `threadmap run` would use: "layout transform", ...


@dataclass
class BlockLatencies:
    """Per-block latencies in cycles from a latency table, and the opcodes
    that fell back to a less specific entry."""
    lat: np.ndarray
    table: str
    fallbacks: List[Tuple[str, str, int]] = field(default_factory=list)  # opcode, key, count
    c_report: Any = field(default=None, repr=False)  # the C tmap_lat_report, for the report


class Kernel:
    """One kernel of a PTX module.  Make it with from_source or from_ptx."""

    def __init__(self, ptx: str, name: str, filename: str, module):
        self.ptx, self.name, self.filename = ptx, name, filename
        self._module = module
        self._cfg: Optional[_lib.Owned] = None

    # ---------------------------------------------------------------- making
    @classmethod
    def from_source(cls, source: str, name: str, *, filename: Optional[str] = None,
                    arch: Optional[str] = None, options: Sequence[str] = (),
                    include_dirs: Sequence[str] = ()) -> "Kernel":
        """Compiles CUDA source with NVRTC; name is the kernel's name (an
        extern "C" name or a C++ expression such as "ns::k<int>"); filename
        names the source in messages (by default "<CUDA source of NAME>").
        Messages about the PTX name it "<PTX of ENTRY compiled by NVRTC from
        FILENAME>", with its PTX line.

        >>> threadmap.Kernel.from_source("bad", "k")  # doctest: +SKIP
        Traceback (most recent call last):
        threadmap.errors.CompileError: <CUDA source of k>: ...
        """
        src_name = filename if filename is not None else f"<CUDA source of {name}>"
        L, err = _lib.lib(), new_error()
        opts_s, dirs_s, names_s = c_strings(list(options)), c_strings(list(include_dirs)), \
            c_strings([name])
        o = _lib.CompileOpts(arch.encode() if arch else None, opts_s, len(options), dirs_s,
                             len(include_dirs), names_s, 1)
        out = _lib.Compiled()
        check(L.tmap_compile(source.encode(), src_name.encode(), ctypes.byref(o),
                             ctypes.byref(out), ctypes.byref(err)), err)
        try:
            ptx = out.ptx.decode()
            entry = (out.lowered[0] or name.encode()).decode()
        finally:
            L.tmap_compiled_free(ctypes.byref(out))
        origin = f" from {filename}" if filename is not None else ""
        return cls.from_ptx(ptx, entry, filename=f"<PTX of {entry} compiled by NVRTC{origin}>")

    @classmethod
    def from_ptx(cls, ptx: str, name: Optional[str] = None, *,
                 filename: str = "<PTX given to Kernel.from_ptx>") -> "Kernel":
        """Parses PTX text; name: its .entry (may be left out when the module
        has one); filename names the text in messages: the path it was read
        from, or a description in angle brackets."""
        module = _parse(ptx, filename)
        L = _lib.lib()
        entries = [L.tmap_ptx_kernel_name(module.ptr, i).decode()
                   for i in range(L.tmap_ptx_num_kernels(module.ptr))]
        if name is None:
            if len(entries) != 1:
                raise InvalidError(f"{filename}: {len(entries)} kernels ({', '.join(entries)}); "
                                   "name one")
            name = entries[0]
        elif name not in entries:
            raise InvalidError(f"{filename}: no kernel '{name}' (it has: {', '.join(entries)})")
        return cls(ptx, name, filename, module)

    @classmethod
    def from_file(cls, path: str, name: Optional[str] = None, **compile_opts) -> "Kernel":
        """A .ptx file (parsed) or a .cu file (compiled)."""
        with open(path) as f:
            text = f.read()
        if path.endswith(".ptx"):
            return cls.from_ptx(text, name, filename=path)
        if name is None:
            raise InvalidError(f"{path}: name the kernel to compile")
        return cls.from_source(text, name, filename=path, **compile_opts)

    @property
    def kernels(self) -> List[str]:
        """Every .entry of the module."""
        L = _lib.lib()
        return [L.tmap_ptx_kernel_name(self._module.ptr, i).decode()
                for i in range(L.tmap_ptx_num_kernels(self._module.ptr))]

    # --------------------------------------------------------------- analyses
    def cfg_handle(self) -> _lib.Owned:
        """The C CFG (built once), for the model's calls."""
        if self._cfg is None:
            L, err, out = _lib.lib(), new_error(), ctypes.POINTER(_lib.Cfg)()
            check(L.tmap_cfg_build(self._module.ptr, self.name.encode(), ctypes.byref(out),
                                   ctypes.byref(err)), err)
            self._cfg = _lib.Owned(out, "tmap_cfg_free")
        return self._cfg

    def cfg(self) -> Cfg:
        """The basic blocks, their instructions and edges, post-dominators.

        >>> [b.term for b in k.cfg().blocks][-1]  # doctest: +SKIP
        'ret'
        """
        c = self.cfg_handle().ptr.contents
        funcs = [Function(f.name.decode(), bool(f.is_entry), f.first_block, f.nblocks)
                 for f in c.funcs[:c.nfuncs]]
        blocks = [Block(b.name.decode(), b.func, b.line,
                        [b.opcodes[i].decode() for i in range(b.ninstr)], TERMS[b.term],
                        list(b.succ[:b.nsucc]), b.ipdom) for b in c.blocks[:c.nblocks]]
        return Cfg(funcs, blocks)

    def safety(self) -> Safety:
        """Which regroupings keep the kernel's results, and why."""
        L, err, s = _lib.lib(), new_error(), _lib.Safety()
        check(L.tmap_safety_analyze(self._module.ptr, self.name.encode(), ctypes.byref(s),
                                    ctypes.byref(err)), err)
        counts = {n: getattr(s, n) for n, _ in _lib.Safety._fields_[:9]}
        counts["non_thread_arrays"] = s.non_thread_arrays
        mech = L.tmap_mechanism_name(L.tmap_mechanism_choose(ctypes.byref(s), 1)).decode()
        return Safety(counts, [r for r in s.reasons.decode().split("\n") if r],
                      L.tmap_scope_advice_name(s.scope).decode(), bool(s.layout_ok),
                      bool(s.redirect_ok), mech)

    def instrument(self, *, redirect: bool = False) -> "Kernel":
        """A new Kernel whose PTX counts each thread's executions of each
        block (the counter pass), or (redirect=True) has the thread-id
        redirection instead."""
        L, err = _lib.lib(), new_error()
        module = _parse(self.ptx, self.filename)
        if redirect:
            st = L.tmap_redirect_instrument(module.ptr, self.name.encode(), ctypes.byref(err))
        else:
            st = L.tmap_bbv_instrument(module.ptr, self.name.encode(), None, ctypes.byref(err))
        check(st, err)
        text = ctypes.c_void_p()
        check(L.tmap_ptx_print(module.ptr, ctypes.byref(text), ctypes.byref(err)), err)
        ptx = _lib.take_string(text.value)
        label = f"<{'redirected' if redirect else 'instrumented'} PTX of {self.name}>"
        return Kernel(ptx, self.name, label, _parse(ptx, label))

    def block_latencies(self, table: Optional[str] = None) -> BlockLatencies:
        """lat[b]: the summed latencies of block b's instructions, from a
        latency table (default: sm_90's, found as the CLI finds it)."""
        L, err = _lib.lib(), new_error()
        table, t = _lat_table(table)
        lat, rep = ctypes.POINTER(ctypes.c_double)(), _lib.LatReport()
        check(L.tmap_lat_blocks(t.ptr, self.cfg_handle().ptr, ctypes.byref(lat),
                                ctypes.byref(rep), ctypes.byref(err)), err)
        holder = _lib.Owned(rep, "tmap_lat_report_free", by_ref=True)
        fb = [(i.opcode.decode(), i.how.key.decode(), i.count) for i in rep.items[:rep.n]]
        return BlockLatencies(take_f64(lat, self.cfg_handle().ptr.contents.nblocks), table, fb,
                              holder)

    def sass_counts(self, arch: str) -> Tuple[np.ndarray, _lib.Owned]:
        """Each CFG block's SASS instructions (tmap_sass_block_counts: ptxas
        -arch=ARCH, "sm_90" or "compute_90", and nvdisasm, found as the CLI
        finds them), float64 [blocks], and the code a warp may run in parts
        (an Owned tmap_sass_splits), as the CLI's --sass."""
        L, err = _lib.lib(), new_error()
        counts = np.zeros(self.cfg_handle().ptr.contents.nblocks, np.float64)
        splits = _lib.SassSplits()
        check(L.tmap_sass_block_counts(self.ptx.encode(), self.cfg_handle().ptr, arch.encode(),
                                       f64_ptr(counts), ctypes.byref(splits), ctypes.byref(err)),
              err)
        return counts, _lib.Owned(splits, "tmap_sass_splits_free", by_ref=True)

    def sm_model(self, table: Optional[str] = None, *, sms: int, blocks_per_sm: int,
                 block_size: int, counts: Optional[np.ndarray] = None) -> _lib.Owned:
        """The SM model "sm90" of this kernel (tmap_sm_model_make, as the
        CLI makes it: the latency table's parameters, the grouping applied
        by the layout transform; each block's issue from counts, its SASS
        counts (sass_counts), else from its PTX instructions) on sms SMs
        with blocks_per_sm resident blocks of block_size threads; an Owned
        tmap_sm_model, freed with it."""
        L, err, out = _lib.lib(), new_error(), _lib.SmModel()
        _, t = _lat_table(table)
        check(L.tmap_sm_model_make(t.ptr, self._module.ptr, self.name.encode(),
                                   self.cfg_handle().ptr, f64_ptr(counts), sms, blocks_per_sm,
                                   block_size, 0, ctypes.byref(out), ctypes.byref(err)), err)
        return _lib.Owned(out, "tmap_sm_model_free", by_ref=True)

    def __repr__(self) -> str:
        return f"Kernel({self.name!r}, {self.filename!r})"


def _lat_table(table: Optional[str]) -> Tuple[str, _lib.Owned]:
    """The latency table's path (None: sm_90's default, found as the CLI
    finds it) and the loaded table."""
    L, err = _lib.lib(), new_error()
    if table is None:
        buf = ctypes.create_string_buffer(4096)
        check(L.tmap_lat_default_path(b"sm_90", buf, len(buf), ctypes.byref(err)), err)
        table = buf.value.decode()
    t = ctypes.c_void_p()
    check(L.tmap_lat_load(table.encode(), ctypes.byref(t), ctypes.byref(err)), err)
    return table, _lib.Owned(t, "tmap_lat_free")


def _parse(ptx: str, filename: str) -> _lib.Owned:
    L, err, m = _lib.lib(), new_error(), ctypes.c_void_p()
    data = ptx.encode()
    check(L.tmap_ptx_parse(data, len(data), filename.encode(), ctypes.byref(m),
                           ctypes.byref(err)), err)
    return _lib.Owned(m, "tmap_ptx_free")
