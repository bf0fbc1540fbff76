"""test_install.py -- the package away from a checkout finds the library
through the system loader: the build installed into a temporary prefix
(`cmake --install`), the package copied elsewhere, LD_LIBRARY_PATH naming
the prefix's lib/."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO


def test_installed_library_through_the_system_loader(tmp_path):
    lib = os.environ.get("THREADMAP_LIBRARY")
    build = Path(lib).parent if lib else REPO / "build"
    if not shutil.which("cmake") or not (build / "cmake_install.cmake").exists():
        pytest.skip(f"no cmake or no build tree at {build} to install")
    subprocess.run(["cmake", "--install", str(build), "--prefix", str(tmp_path / "prefix")],
                   check=True, capture_output=True)
    libdir = next(p.parent for p in (tmp_path / "prefix").glob("lib*/libthreadmap.so"))
    shutil.copytree(REPO / "python" / "threadmap", tmp_path / "pkg" / "threadmap",
                    ignore=shutil.ignore_patterns("_install.py", "__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "THREADMAP_LIBRARY"}
    # the prefix first; the paths already there stay (its dependencies may be there)
    paths = [str(libdir)] + [p for p in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
    env.update(PYTHONPATH=str(tmp_path / "pkg"), LD_LIBRARY_PATH=os.pathsep.join(paths))
    code = ("import threadmap\n"
            "from threadmap import _lib\n"
            "m = threadmap.estimate([[1, 2]] * 32, lat=[1.0, 2.0])\n"
            "maps = open('/proc/self/maps').read().split()\n"
            "print(_lib.lib()._name, m['warps'], [p for p in maps if 'libthreadmap' in p][0])\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(tmp_path),
                         capture_output=True, text=True, check=True).stdout
    name, warps, mapped = out.split()
    assert warps == "1"
    assert "/" not in name and name.startswith("libthreadmap.so")  # asked of the loader
    assert Path(mapped).resolve().parent == libdir.resolve()      # which found the prefix's
