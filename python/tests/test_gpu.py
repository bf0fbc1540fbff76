"""test_gpu.py -- the GPU stages: profile() on the test's own kernel, the
device regroup path (GpuRegroup) with CuPy and PyTorch arrays, and the
Regrouper in front of a CuPy launch.  Each test skips, saying why, without
a GPU (or without CuPy / PyTorch)."""
import numpy as np
import pytest

import threadmap

from conftest import LOOP_SRC


@pytest.fixture(scope="module")
def device():
    try:
        return threadmap.Device.get()
    except threadmap.NoDeviceError as e:
        pytest.skip(f"no GPU: {e}")


@pytest.fixture(scope="module")
def cp(device):
    return pytest.importorskip("cupy", reason="CuPy is not installed")


N, BLOCK = 4096, 256


def _trips(n=N):
    """Trip counts 0, 16, ..., 112: far enough apart that the device sort's
    rounded keys (bfloat16) never tie two of them."""
    return (((np.arange(n) * 2654435761) % 8) * 16).astype(np.int32)


def test_device_info(device):
    info = device.info()
    assert info["sms"] > 0 and info["name"]


def test_profile_counts_the_loop_exactly(cp, loop_kernel):
    trips = _trips()
    y = cp.zeros(N, dtype=cp.float32)
    prof = threadmap.profile(loop_kernel, N // BLOCK, BLOCK,
                             [cp.asarray(trips), y, np.int32(N)])
    assert prof.bbv.shape == (N, len(loop_kernel.cfg().blocks))
    # the loop body's block runs trips[i] times in thread i
    body = [b for b in range(prof.bbv.shape[1]) if np.array_equal(prof.bbv[:, b], trips)]
    assert body, "no block counts the trip counts"
    assert float(y[5]) > 0 or trips[5] == 0       # the kernel ran for real


def _model(loop_kernel, cp):
    trips = _trips()
    prof = threadmap.profile(loop_kernel, N // BLOCK, BLOCK,
                             [cp.asarray(trips), cp.zeros(N, cp.float32), np.int32(N)])
    p = threadmap.train([(trips.astype(float), prof.bbv)], kernel="loop", folds=0)
    return p, loop_kernel.block_latencies().lat, trips


def test_gpu_regroup_with_cupy_sorts_heaviest_first(cp, loop_kernel):
    p, lat, trips = _model(loop_kernel, cp)
    f = cp.asarray(trips.astype(np.float64).reshape(-1, 1))
    perm = threadmap.regroup(features=f, predictor=p, lat=lat)
    assert isinstance(perm, cp.ndarray) and perm.dtype == cp.uint32
    h = cp.asnumpy(perm)
    assert sorted(h.tolist()) == list(range(N))
    np.testing.assert_array_equal(h, np.argsort(-trips, kind="stable"))
    # the permutation indexes CuPy arrays directly
    t = cp.asarray(trips)
    assert np.all(np.diff(cp.asnumpy(t[perm])) <= 0)


def test_gpu_regroup_with_torch(device, loop_kernel):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    cp = pytest.importorskip("cupy", reason="CuPy is not installed (profiling input)")
    p, lat, trips = _model(loop_kernel, cp)
    f = torch.as_tensor(trips.astype(np.float64).reshape(-1, 1), device="cuda")
    s = torch.cuda.Stream()
    g = p.gpu(lat, N)
    perm = g.run(f, stream=s)
    s.synchronize()
    assert isinstance(perm, torch.Tensor) and perm.is_cuda
    np.testing.assert_array_equal(perm.cpu().numpy(), np.argsort(-trips, kind="stable"))
    t = torch.as_tensor(trips, device="cuda")
    assert bool((t[perm.long()].diff() <= 0).all())


def test_regrouper_in_front_of_a_cupy_launch(cp, loop_kernel):
    trips = cp.asarray(_trips())
    y_plain, y = cp.zeros(N, cp.float32), cp.zeros(N, cp.float32)
    k = cp.RawKernel(LOOP_SRC, "loop")
    k((N // BLOCK,), (BLOCK,), (trips, y_plain, np.int32(N)))

    def key(out, stream):   # enqueued on the regrouper's stream (None: the legacy default)
        with cp.cuda.ExternalStream(stream) if stream else cp.cuda.Stream.null:
            cp.asarray(out)[...] = trips.astype(cp.float64)

    r = threadmap.Regrouper(N // BLOCK, BLOCK, [(trips, "in", 1), (y, "out", 1)], key=key)
    for i in range(20):
        with r.launch(signature=i + 1) as (t_r, y_r):
            k((N // BLOCK,), (BLOCK,), (t_r, y_r, np.int32(N)))
        r.poll(wait=True)
        cp.testing.assert_array_equal(y, y_plain)
        y[...] = 0
    assert r.chosen is not None and r.why


def test_regrouper_overlap_with_cupy(cp, loop_kernel):
    """prepare() announces each next input: its key and sort run beside the
    current launch, the next launch takes them, and every launch's outputs
    equal the plain launch's."""
    trips = cp.asarray(_trips())
    y_plain, y = cp.zeros(N, cp.float32), cp.zeros(N, cp.float32)
    k = cp.RawKernel(LOOP_SRC, "loop")
    k((N // BLOCK,), (BLOCK,), (trips, y_plain, np.int32(N)))

    def key(out, stream):
        with cp.cuda.ExternalStream(stream) if stream else cp.cuda.Stream.null:
            cp.asarray(out)[...] = trips.astype(cp.float64)

    r = threadmap.Regrouper(N // BLOCK, BLOCK, [(trips, "in", 1), (y, "out", 1)], key=key,
                            overlap=True)
    for i in range(40):
        r.prepare(i + 2)
        with r.launch(signature=i + 1) as (t_r, y_r):
            k((N // BLOCK,), (BLOCK,), (t_r, y_r, np.int32(N)))
        r.poll(wait=True)
        cp.testing.assert_array_equal(y, y_plain)
        y[...] = 0
    used, late = r.overlap_counts
    assert r.chosen is not None
    if r.chosen != "original":   # prepared permutations are taken once the trial kept one
        assert used + late > 0 and used > 0
    assert r.overlap_counts == (used, late)
