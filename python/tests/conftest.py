"""conftest.py -- shared fixtures of the package's tests: the repository,
the recorded BBVs of examples/divergent (gunzipped once), the CLI of the
build (for cross-checks: Python and the command must agree), and a small
kernel written for these tests."""
import gzip
import os
import shutil
from pathlib import Path

import pytest

import threadmap

REPO = Path(__file__).resolve().parents[2]
RECORDED = REPO / "examples" / "divergent" / "recorded"

# Each thread loops over its own trip count: the kernel of these tests.
LOOP_SRC = r'''
extern "C" __global__ void loop(const int *trips, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = 0.0f;
#pragma unroll 1
    for (int k = 0; k < trips[i]; k++)
        v = v * 0.5f + 1.0f;
    y[i] = v;
}
'''


@pytest.fixture(scope="session")
def recorded(tmp_path_factory) -> Path:
    """examples/divergent/recorded, its .gz files gunzipped."""
    out = tmp_path_factory.mktemp("recorded")
    for f in RECORDED.iterdir():
        if f.suffix == ".gz":
            with gzip.open(f) as src, open(out / f.stem, "wb") as dst:
                shutil.copyfileobj(src, dst)
        else:
            shutil.copy(f, out / f.name)
    return out


@pytest.fixture(scope="session")
def divergent(recorded) -> threadmap.Kernel:
    return threadmap.Kernel.from_file(str(recorded / "kernel.ptx"), "divergent")


@pytest.fixture(scope="session")
def loop_kernel() -> threadmap.Kernel:
    return threadmap.Kernel.from_source(LOOP_SRC, "loop", filename="loop.cu")


@pytest.fixture(scope="session")
def cli() -> str:
    """The build's `threadmap` command (the library's build beside it)."""
    lib = os.environ.get("THREADMAP_LIBRARY")
    path = Path(lib).parent / "threadmap" if lib else REPO / "build" / "threadmap"
    if not path.exists():
        pytest.skip(f"no threadmap command at {path} to compare with")
    return str(path)
