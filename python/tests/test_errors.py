"""test_errors.py -- every failure is a ThreadmapError (a subclass per C
status) carrying the C library's message; bad arguments are refused
before the C call with InvalidError; a missing library says where it
looked."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import threadmap
from threadmap import errors


def test_bad_ptx_is_a_parse_error_naming_the_line():
    with pytest.raises(threadmap.ParseError) as e:
        threadmap.Kernel.from_ptx(".version 9.0\n.target sm_90\n.address_size 64\nbogus;\n",
                                  filename="bad.ptx")
    assert str(e.value).startswith("bad.ptx:4")
    assert e.value.status == "parse" and isinstance(e.value, threadmap.ThreadmapError)


def test_compile_error_carries_nvrtc_log():
    with pytest.raises(threadmap.CompileError) as e:
        threadmap.Kernel.from_source("__global__ void k() { int x = ; }", "k", filename="bad.cu")
    assert "bad.cu" in str(e.value)


def test_unknown_kernel_name():
    k = threadmap.Kernel.from_source('extern "C" __global__ void a() {}', "a")
    with pytest.raises(threadmap.InvalidError, match="no kernel 'b'"):
        threadmap.Kernel.from_ptx(k.ptx, "b")


def test_missing_files():
    with pytest.raises(threadmap.FileError, match="/nonexistent/b.npy"):
        threadmap.load_bbv("/nonexistent/b.npy")
    with pytest.raises(threadmap.ThreadmapError, match="/nonexistent/m.txt"):
        threadmap.Predictor.load("/nonexistent/m.txt")


def test_corrupt_predictor_file(tmp_path):
    f = np.arange(32.0) % 5
    p = threadmap.train([(f, np.stack([f, f], 1).astype(np.uint32))], kernel="k", folds=0)
    p.save(str(tmp_path / "m.txt"))
    text = re.sub(r"\nversion \d+\n", "\nversion 7\n", (tmp_path / "m.txt").read_text())
    (tmp_path / "m.txt").write_text(text)
    with pytest.raises(threadmap.ThreadmapError, match="m.txt"):
        threadmap.Predictor.load(str(tmp_path / "m.txt"))


def test_shapes_and_values_refused():
    with pytest.raises(threadmap.InvalidError, match="bbv"):
        threadmap.estimate(np.ones(5, np.uint32), lat=[1.0])
    with pytest.raises(threadmap.InvalidError, match="2\\^32"):
        threadmap.estimate(-np.ones((4, 1), np.int64), lat=[1.0])
    with pytest.raises(threadmap.InvalidError, match="block latencies"):
        threadmap.estimate(np.ones((4, 2), np.uint32), lat=[1.0])
    with pytest.raises(threadmap.InvalidError, match="finite"):
        threadmap.train([(np.array([1.0, np.nan]), np.ones((2, 1), np.uint32))], kernel="k")
    with pytest.raises(threadmap.InvalidError, match="columns"):
        threadmap.train([(np.arange(8.0) % 3, np.ones((8, 1), np.uint32))], kernel="k",
                        folds=0).predict(np.zeros((2, 3)))
    with pytest.raises(threadmap.InvalidError, match="algo"):
        threadmap.regroup(np.ones((64, 1), np.uint32), lat=[1.0], algo="fastest")


def test_bad_permutation_is_the_c_librarys_error():
    with pytest.raises(threadmap.InvalidError) as e:
        threadmap.estimate(np.ones((4, 1), np.uint32), lat=[1.0], perm=[0, 0, 1, 2])
    assert "perm" in str(e.value) and e.value.code == 1


def test_c_error_and_status_mapping():
    err = errors.new_error()
    err.message = b"f.ptx:3: broken"
    with pytest.raises(threadmap.UnsupportedError, match="f.ptx:3: broken"):
        errors.check(9, err)
    errors.check(0, err)  # TMAP_OK: nothing


def test_regroup_on_gpu_wants_a_device_array_and_its_own_options():
    with pytest.raises(threadmap.InvalidError, match="device array"):
        threadmap.regroup(features=np.zeros((4, 1)), predictor=None, lat=[1.0])

    class OnDevice:
        __cuda_array_interface__ = {"data": (0x1000, False), "shape": (4, 1), "typestr": "<f8",
                                    "version": 3}

    with pytest.raises(threadmap.InvalidError, match="needs predictor and lat"):
        threadmap.regroup(features=OnDevice(), lat=[1.0])
    with pytest.raises(threadmap.InvalidError, match="not threshold"):
        threadmap.regroup(features=OnDevice(), predictor=object(), lat=[1.0], threshold=0.1)


def test_missing_library_says_where_it_looked():
    env = dict(os.environ, THREADMAP_LIBRARY="/nonexistent/libthreadmap.so")
    code = ("import threadmap\n"
            "try:\n    threadmap.estimate([[1]], lat=[1.0])\n"
            "except OSError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert "libthreadmap.so not found" in out and "/nonexistent/libthreadmap.so" in out
    assert "THREADMAP_LIBRARY" in out


def test_library_search_order(monkeypatch):
    from threadmap import _lib
    monkeypatch.setenv("THREADMAP_LIBRARY", "/x/libthreadmap.so")
    assert _lib.candidates() == ["/x/libthreadmap.so"]
    monkeypatch.delenv("THREADMAP_LIBRARY")
    found = _lib.candidates()
    repo_build = [c for c in found if c.endswith("/build/libthreadmap.so")]
    assert repo_build and found.index(repo_build[0]) == 0   # the checkout's build/ first
    assert "libthreadmap.so" in found[-1]                   # the system loader last


def test_a_module_of_two_kernels_needs_a_name():
    k = threadmap.Kernel.from_source('extern "C" __global__ void a() {}\n'
                                     'extern "C" __global__ void b() {}', "a")
    assert sorted(k.kernels) == ["a", "b"]
    with pytest.raises(threadmap.InvalidError, match="2 kernels"):
        threadmap.Kernel.from_ptx(k.ptx)
    assert threadmap.Kernel.from_ptx(k.ptx, "b").name == "b"
