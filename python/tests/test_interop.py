"""test_interop.py -- how device arrays and streams of other frameworks are
read, without a GPU: objects with __cuda_array_interface__ (as CuPy,
PyTorch and Numba give them), DLPack producers, stream objects, and
DeviceArray as others see it.  Nothing here touches device memory."""
import numpy as np
import pytest

import threadmap
from threadmap import arrays


class FakeCuda:
    """What a CuPy array shows of itself (pointer, shape, type, strides)."""

    def __init__(self, ptr, shape, typestr, strides=None):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape,
                                         "typestr": typestr, "strides": strides, "version": 3}


def test_cuda_array_interface_is_read_without_copy():
    v = arrays.device_checked(FakeCuda(0x7000, (1024, 4), "<f8"), "features", "<f8", (1024, None))
    assert v.ptr == 0x7000 and v.shape == (1024, 4)
    # explicit C-contiguous strides are fine
    arrays.device_checked(FakeCuda(0x7000, (8, 4), "<f8", (32, 8)), "f", "<f8", (8, 4))


def test_wrong_type_shape_or_layout_refused():
    with pytest.raises(threadmap.InvalidError, match="float64"):
        arrays.device_checked(FakeCuda(1, (8, 4), "<f4"), "features", "<f8", (8, 4))
    with pytest.raises(threadmap.InvalidError, match="shape"):
        arrays.device_checked(FakeCuda(1, (8, 3), "<f8"), "features", "<f8", (8, 4))
    with pytest.raises(threadmap.InvalidError, match="C-contiguous"):
        arrays.device_checked(FakeCuda(1, (8, 4), "<f8", (8, 64)), "features", "<f8", (8, 4))


def test_host_arrays_are_not_device_arrays():
    assert not arrays.is_device_array(np.zeros(3))
    with pytest.raises(threadmap.InvalidError, match="not a device array"):
        arrays.device_view(np.zeros(3), "features")


def test_dlpack_of_a_host_array_is_refused():
    class HostDL:
        def __init__(self):
            self.a = np.zeros(4)

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(threadmap.InvalidError, match="not CUDA"):
        arrays.device_view(HostDL(), "features")


def test_streams_from_every_framework():
    class CupyStream:
        ptr = 0x1234

    class TorchStream:
        cuda_stream = 0x5678

    class ProtocolStream:
        def __cuda_stream__(self):
            return (0, 0x9abc)

    assert arrays.stream_handle(None) is None
    assert arrays.stream_handle(0) is None            # the legacy default stream
    assert arrays.stream_handle(0x42) == 0x42
    assert arrays.stream_handle(CupyStream()) == 0x1234
    assert arrays.stream_handle(TorchStream()) == 0x5678
    assert arrays.stream_handle(ProtocolStream()) == 0x9abc
    with pytest.raises(threadmap.InvalidError, match="not a stream"):
        arrays.stream_handle("s")


def test_device_array_exposes_the_interface():
    released = []
    a = threadmap.DeviceArray(0x1000, (16,), "<u4", release=lambda: released.append(1))
    i = a.__cuda_array_interface__
    assert i["data"] == (0x1000, False) and i["shape"] == (16,) and i["typestr"] == "<u4"
    assert i["version"] == 3 and a.nbytes == 64
    v = a.view("<i4")
    assert v.__cuda_array_interface__["typestr"] == "<i4" and v.ptr == a.ptr
    del a
    assert not released                              # the view keeps it alive
    del v
    assert released == [1]


def test_kernel_arguments_are_typed():
    from threadmap.gpu import Launch
    l = Launch(4, (32, 2), [FakeCuda(0xabc, (256,), "<f4"), np.int32(7), np.float32(0.5)])
    assert l.threads == 256 and l.c.nargs == 3
    assert list(l.c.grid) == [4, 1, 1] and list(l.c.block) == [32, 2, 1]
    assert l.values[0].value == 0xabc and l.values[1].value == 7
    with pytest.raises(threadmap.InvalidError, match="np.int32"):
        Launch(1, 32, [7])
    with pytest.raises(threadmap.InvalidError, match="bool"):
        Launch(1, 32, [np.bool_(True)])
    with pytest.raises(threadmap.InvalidError, match="grid"):
        Launch(0, 32, [])


def test_regrouper_tables_without_a_gpu():
    from threadmap.arrays import DeviceView
    from threadmap.gpu import _candidate_bits, _thread_arrays
    views = [DeviceView(1, (4,), "<f4", None), DeviceView(2, (8,), "<f8", None)]
    t = _thread_arrays([(None, "in", 1), (None, "inout", 2)], views)
    assert [(a.arg, a.elem_size, a.per_thread, a.input, a.output) for a in t[:2]] == \
        [(0, 4, 1, 1, 0), (1, 8, 2, 1, 1)]
    with pytest.raises(threadmap.InvalidError, match="role 'io'"):
        _thread_arrays([(None, "io", 1)], views)
    assert _candidate_bits([]) == 0
    assert _candidate_bits(["original", "bin-and-deal"]) == 0b1001
    with pytest.raises(threadmap.InvalidError, match="candidates"):
        _candidate_bits(["greedy"])
