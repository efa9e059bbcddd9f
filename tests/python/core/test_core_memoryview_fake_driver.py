"""StridedMemoryView and TensorMapDescriptor against the stand-in driver
(tests/python/fake_driver/fake_libcuda.c): views of the CUDA Array Interface
and of Buffers, the stream order made for a producer's stream, and a tensor
map passed to launch by value from its own 64-byte aligned storage."""
import textwrap

import pytest

from conftest import run_with_fake_driver

pytest.importorskip("numpy")

PRELUDE = textwrap.dedent("""
    import ctypes, struct
    import numpy as np
    import cubind.core as cb
    from cubind.core.utils import StridedMemoryView
    fake = ctypes.CDLL("libcuda.so.1")
    dev = cb.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    code = cb.ObjectCode.from_cubin(b"stand-in cubin", name="standin")

    class CAI:
        def __init__(self, shape, typestr="<f4", ptr=0x10000000, strides=None, stream=None):
            self.__cuda_array_interface__ = dict(shape=shape, typestr=typestr, data=(ptr, False), version=3,
                                                 strides=strides, stream=stream)
""")


def run(fake_driver_dir, body):
    run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


def test_cuda_array_interface_views(fake_driver_dir):
    run(fake_driver_dir, """
        v = StridedMemoryView.from_cuda_array_interface(CAI((4, 8), strides=(64, 4)), int(stream.handle))
        assert (v.ptr, v.shape, v.strides, v.dtype, v.device_id) == (0x10000000, (4, 8), (16, 1), np.float32, 0)
        assert v.is_device_accessible and not v.readonly and v.__dlpack_device__() == (2, 0)
        # Ordered after the producer's stream (an event), or not at all with -1.
        StridedMemoryView.from_cuda_array_interface(CAI((4,), stream=1), int(stream.handle))
        StridedMemoryView.from_cuda_array_interface(CAI((4,), stream=1), -1)
        try:
            StridedMemoryView.from_cuda_array_interface(CAI((4,), stream=0), int(stream.handle))
        except BufferError as e:
            assert "stream 0" in str(e)
        else:
            raise AssertionError("stream 0 accepted")
        proxy_seen = []

        @cb.utils.args_viewable_as_strided_memory((0,))
        def f(x):
            proxy_seen.append(x.has_dlpack)
            return x.view(-1)

        assert f(CAI((3,), "<i8")).dtype == np.int64 and proxy_seen == [False]
    """)


def test_buffer_views(fake_driver_dir):
    run(fake_driver_dir, """
        buf = dev.allocate(4096, stream=stream)
        v = StridedMemoryView.from_buffer(buf, (16, 16), dtype=np.float32)
        assert (v.ptr, v.shape, v.strides, v.device_id, v.exporting_obj) == (buf.handle, (16, 16), None, 0, buf)
        assert v.__dlpack_device__() == (2, 0) and v.is_device_accessible
        w = StridedMemoryView.from_buffer(buf, (8, 8), (32, 2), itemsize=4, is_readonly=True)
        assert w.dtype is None and w.readonly and w.strides == (32, 2)
        try:
            w.__dlpack__()
        except BufferError as e:
            assert "dtype" in str(e)
        try:
            StridedMemoryView.from_buffer(buf, (64, 64), dtype=np.float32)
        except ValueError as e:
            assert "too small" in str(e)
        else:
            raise AssertionError("a layout larger than the buffer was accepted")
        t = v.view(v._layout.permuted((1, 0)), np.int32)
        assert (t.shape, t.strides, t.dtype, t.ptr) == ((16, 16), (1, 16), np.int32, buf.handle)
        foreign = cb.Buffer.from_handle(0x20000000, 256)
        assert StridedMemoryView.from_buffer(foreign, (64,), itemsize=4).device_id == 0
        try:
            v.copy_from(w, stream)
        except ValueError as e:
            assert "shapes differ" in str(e)
        try:
            w.copy_from(v, stream)
        except ValueError as e:
            assert "read-only" in str(e)
    """)


def test_tensor_map_is_passed_by_value_from_aligned_storage(fake_driver_dir):
    run(fake_driver_dir, """
        buf = dev.allocate(64 * 64 * 4, stream=stream)
        view = StridedMemoryView.from_buffer(buf, (64, 64), dtype=np.float32)
        tmap = view.as_tensor_map((8, 8))
        assert repr(tmap) == "TensorMapDescriptor(tiled, rank=2, dtype=FLOAT32, swizzle=NONE)"
        assert tmap.device.device_id == 0
        words = struct.unpack("<16Q", tmap._bytes())
        assert words[:4] == (buf.handle, 2, 7, 8)
        k = code.get_kernel("k128_8")
        cb.launch(stream, cb.LaunchConfig(grid=1, block=1, shmem_size=2), k, tmap, buf)
        first = (ctypes.c_size_t * 16).in_dll(fake, "fake_param_addresses")[0]
        raw = (ctypes.c_ubyte * 256).in_dll(fake, "fake_params")
        # The map itself (its address, 64-byte aligned), then the buffer.
        assert first % 64 == 0 and first == tmap._address()
        assert bytes(raw[:16]) == tmap._bytes()[:16]
        assert struct.unpack("<Q", bytes(raw[16:24])) == (buf.handle,)
        assert cb._launch._packed_arguments([128], [tmap])[0] == tmap._bytes()
        try:
            cb.launch(stream, cb.LaunchConfig(grid=1, block=1, shmem_size=2), code.get_kernel("k8_8"), tmap, buf)
        except TypeError as e:
            assert "TensorMapDescriptor" in str(e)
        else:
            raise AssertionError("a tensor map went to an 8-byte parameter")
        other = dev.allocate(64 * 64 * 4, stream=stream)
        tmap.replace_address(StridedMemoryView.from_buffer(other, (64, 64), dtype=np.float32))
        assert struct.unpack("<Q", tmap._bytes()[:8]) == (other.handle,)
        opts = cb.TensorMapDescriptorOptions(box_dim=(4, 16), element_strides=(2, 1))
        assert "rank=2" in repr(view.as_tensor_map(options=opts))
        for bad, kind, text in (
                (lambda: view.as_tensor_map((8, 2)), ValueError, "multiple of 16 bytes"),
                (lambda: view.as_tensor_map((8, 8), options=opts), TypeError, "not both"),
                (lambda: StridedMemoryView.from_buffer(buf, (64, 32), (64, 2), dtype=np.float32).as_tensor_map((8, 8)),
                 ValueError, "last dimension must be contiguous"),
                (lambda: StridedMemoryView.from_buffer(buf, (64, 63), (63, 1), dtype=np.float32).as_tensor_map((8, 8)),
                 ValueError, "multiple of 16"),
                (lambda: view.as_tensor_map((8, 8), data_type=np.int8), ValueError, "Unsupported dtype int8"),
                (lambda: cb.TensorMapDescriptor._from_im2col(view, (0,), (1,), 4, 4), ValueError, "between 3 and 5")):
            try:
                bad()
            except kind as e:
                assert text in str(e), (text, str(e))
            else:
                raise AssertionError(text)
    """)
