"""threadmap.report -- the performance-estimate report from Python: the
original launch and every candidate regrouping of a plan side by side,
written by the C library as HTML (shown inline in Jupyter through
_repr_html_), text, Markdown or JSON, or as the four files of
`threadmap report -o DIR`.

>>> r = threadmap.report(bbv, kernel=k, blocks_per_sm=8, origin="recorded")  # doctest: +SKIP
>>> r.write("out/report")                                                   # doctest: +SKIP
>>> print(r.text())                                                         # doctest: +SKIP
>>> r                                   # in Jupyter: the HTML report        # doctest: +SKIP
"""
from __future__ import annotations

import ctypes
import json
import math
from typing import Any, Optional

from . import _lib
from .arrays import c_strings, f64_ptr
from .errors import NoMemoryError, check, new_error
from .kernel import Kernel
from .regroup import Plan, plan as make_plan


class Report:
    """A report of one plan.  html() gives the page; write(dir) writes
    report.{txt,md,json,html}."""

    def __init__(self, plan: Plan, kernel_name: str, origin: str, device: Optional[str],
                 mechanism: Optional[str]):
        self.plan, self.kernel_name = plan, kernel_name
        self.origin, self.device, self.mechanism = origin, device, mechanism

    def _c_report(self):
        """The tmap_report and everything it borrows (kept alive together)."""
        p, mi = self.plan, self.plan.inputs
        keep = []
        cc = p.c_plan.ptr.cand
        rows = (_lib.ReportRow * len(p.candidates))()
        for i, c in enumerate(p.candidates):
            rows[i] = _lib.ReportRow(
                c.name.encode(), int(c.available), c.note.encode(),
                ctypes.pointer(cc[i].m) if c.available else None, c.gain,
                c.algo_ms if i else math.nan,
                p.options.get("original_ms") or math.nan if i == 0 else math.nan,
                p.options.get("apply_ms") or math.nan if i else math.nan, -1, int(i == p.chosen))
        names = c_strings(mi.block_names)
        lat_report = mi.latencies.c_report.ptr if mi.latencies else _lib.LatReport()
        lat_table = mi.latencies.table.encode() if mi.latencies else None
        keep += [p.c_plan, rows, names, lat_report, mi.latencies]
        r = _lib.Report(self.kernel_name.encode(), self.origin.encode(),
                        self.device.encode() if self.device else None, ctypes.pointer(mi.bbv),
                        f64_ptr(mi.lat), names, ctypes.pointer(mi.params), lat_table,
                        ctypes.pointer(lat_report), len(p.candidates), rows, p.why.encode(),
                        self.mechanism.encode() if self.mechanism else None,
                        cfg=ctypes.cast(mi.cfg.ptr, ctypes.c_void_p) if mi.cfg else None)
        return r, keep

    def _render(self, writer: str) -> str:
        """One form of the report, as the C writer (tmap_report_<writer>) prints it."""
        r, keep = self._c_report()
        buf, size = ctypes.c_void_p(), ctypes.c_size_t()
        f = _lib.libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
        if not f:
            raise NoMemoryError("report: open_memstream failed")
        err = new_error()
        st = getattr(_lib.lib(), f"tmap_report_{writer}")(ctypes.byref(r), f, ctypes.byref(err))
        _lib.libc.fclose(f)
        text = _lib.take_string(buf.value)
        check(st, err)
        return text

    def html(self) -> str:
        """The self-contained HTML page (SVG plots inline)."""
        return self._render("html")

    def text(self) -> str:
        """The text table, as `threadmap report` prints it."""
        return self._render("text")

    def markdown(self) -> str:
        return self._render("markdown")

    def json(self) -> dict:
        """The JSON form, parsed (keys state their units: docs/report.md)."""
        return json.loads(self._render("json"))

    def write(self, directory: str) -> None:
        """Writes DIR/report.{txt,md,json,html} (DIR and parents created)."""
        r, keep = self._c_report()
        err = new_error()
        check(_lib.lib().tmap_report_write_dir(ctypes.byref(r), directory.encode(),
                                               ctypes.byref(err)), err)

    def _repr_html_(self) -> str:
        return self.html()

    def __repr__(self) -> str:
        return f"Report({self.kernel_name!r}: {self.plan.algorithm}; {self.plan.why})"


def report(bbv: Any = None, *, plan: Optional[Plan] = None, kernel: Optional[Kernel] = None,
           origin: Optional[str] = None, device: Optional[str] = None,
           mechanism: Optional[str] = None, out: Optional[str] = None,
           **plan_options) -> Report:
    """The performance-estimate report of a BBV (the plan is made as
    threadmap.plan makes it, with the same options: metric="sm90", the
    default with a kernel, ranks by the SM model, "scheduled" by the
    paper's BBV-weighted-scheduled, as `threadmap report --metric`) or of a
    plan already made.  mechanism: "layout transform" or "redirection"; default: what
    the kernel's safety analysis allows.  out: also write the four files there.

    >>> threadmap.report(bbv, kernel=k, blocks_per_sm=8, out="out/report")  # doctest: +SKIP
    """
    if plan is None:
        plan = make_plan(bbv, kernel=kernel, **plan_options)
    name = kernel.name if kernel else (plan.inputs.block_names or ["kernel/"])[0].split("/")[0]
    if mechanism is None and kernel is not None:
        mechanism = kernel.safety().mechanism
    r = Report(plan, name or "kernel", origin or "BBVs given from Python", device, mechanism)
    if out:
        r.write(out)
    return r
