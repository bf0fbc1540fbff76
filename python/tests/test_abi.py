"""test_abi.py -- the ctypes mirrors of the C structs (threadmap/_lib.py)
have the C compiler's sizes and field offsets, and every function the
binding declares is in the public headers.  Compiles a small probe against
include/ with the system C compiler (skips without one)."""
import re
import shutil
import subprocess

import ctypes
import pytest

from threadmap import _lib, errors

from conftest import REPO

STATUS_CLASSES = list(errors._BY_CODE.values())
C_NAMES = {
    "Error": "tmap_error", "Bbv": "tmap_bbv", "CompileOpts": "tmap_compile_opts",
    "Compiled": "tmap_compiled", "CfgBlock": "tmap_cfg_block", "CfgFunc": "tmap_cfg_func",
    "Cfg": "tmap_cfg", "Safety": "tmap_safety", "LatLookup": "tmap_lat_lookup",
    "LatFallback": "tmap_lat_fallback", "LatReport": "tmap_lat_report",
    "SmParams": "tmap_sm_params", "SmBlock": "tmap_sm_block", "SmModel": "tmap_sm_model",
    "ModelParams": "tmap_model_params", "SmTimeParts": "tmap_sm_time_parts",
    "Metrics": "tmap_metrics",
    "RegressRun": "tmap_regress_run", "BbvNoise": "tmap_bbv_noise", "Predictor": "tmap_predictor",
    "CvResult": "tmap_cv_result", "RegroupOpts": "tmap_regroup_opts",
    "PlanOpts": "tmap_plan_opts", "Candidate": "tmap_candidate", "Plan": "tmap_plan",
    "ReportRow": "tmap_report_row", "Report": "tmap_report", "DeviceInfo": "tmap_device_info",
    "Launch": "tmap_launch", "KernelStats": "tmap_kernel_stats", "Profile": "tmap_profile",
    "ThreadArray": "tmap_thread_array", "RegrouperOpts": "tmap_regrouper_opts",
}


def _probe(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to compare the struct layouts with")
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "threadmap.h"',
             "int main(void) {",
             '  printf("ALGO_COUNT %d\\n", (int)TMAP_ALGO_COUNT);']
    for cls in STATUS_CLASSES:
        macro = "TMAP_ERR_" + cls.status.upper()
        lines.append(f'  printf("{cls.__name__} %d\\n", (int){macro});')
    for py, c in C_NAMES.items():
        lines.append(f'  printf("{py} %zu\\n", sizeof({c}));')
        for f, *_ in getattr(_lib, py)._fields_:
            lines.append(f'  printf("{py}.{f} %zu\\n", offsetof({c}, {f}));')
    lines += ["  return 0;", "}"]
    src = tmp_path / "probe.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "probe"
    subprocess.run([cc, "-std=c11", "-I", str(REPO / "include"), str(src), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return dict(line.rsplit(" ", 1) for line in out.splitlines())


def test_struct_layouts_match_the_headers(tmp_path):
    want = _probe(tmp_path)
    assert int(want["ALGO_COUNT"]) == _lib.ALGO_COUNT
    for cls in STATUS_CLASSES:
        assert cls.code == int(want[cls.__name__]), cls.__name__
    for py in C_NAMES:
        cls = getattr(_lib, py)
        assert ctypes.sizeof(cls) == int(want[py]), f"sizeof {py}"
        for f, *_ in cls._fields_:
            assert getattr(cls, f).offset == int(want[f"{py}.{f}"]), f"{py}.{f}"


def test_declared_functions_are_public():
    headers = "".join(p.read_text() for p in (REPO / "include" / "threadmap").glob("*.h"))
    for name in _lib.PROTOTYPES:
        assert re.search(rf"\b{name}\s*\(", headers), name
    _lib.lib()  # every declared name resolves in the library


def test_names_are_the_librarys():
    from threadmap.gpu import REGROUPER_CANDIDATES
    from threadmap.regroup import ALGOS
    L = _lib.lib()
    assert ALGOS == tuple(L.tmap_algo_name(i).decode() for i in range(_lib.ALGO_COUNT))
    assert REGROUPER_CANDIDATES == tuple(L.tmap_regrouper_cand_name(i).decode()
                                         for i in range(len(REGROUPER_CANDIDATES)))
    assert L.tmap_regrouper_cand_name(len(REGROUPER_CANDIDATES)) == b"?"
