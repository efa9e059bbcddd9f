"""StridedMemoryView, args_viewable_as_strided_memory and the tensor map
options without a GPU: NumPy arrays (DLPack and the array interface), host
objects that expose one protocol each, and the errors."""
import ctypes
import subprocess
import sys

import pytest

np = pytest.importorskip("numpy")

import cubind.core as cb  # noqa: E402
from cubind.core import _tensor_map_options as tm  # noqa: E402
from cubind.core.utils import StridedMemoryView, args_viewable_as_strided_memory  # noqa: E402

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128]


def _expected_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def _arrays():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    return {
        "contiguous": base,
        "strided": base[:, ::2],
        "sliced": base[1:3, 2:5],
        "transposed": base.T,
        "zero-size": np.zeros((0, 3)),
        "3-d": np.arange(60, dtype=np.int16).reshape(3, 4, 5)[:, 1:, ::-1],
    }


@pytest.mark.parametrize("name", list(_arrays()))
def test_numpy_through_dlpack(name):
    a = _arrays()[name]
    v = StridedMemoryView.from_dlpack(a, stream_ptr=-1)
    assert v.ptr == a.__array_interface__["data"][0]
    assert v.shape == a.shape
    assert v.strides == _expected_strides(a)
    assert v.dtype == a.dtype
    assert v.size == a.size
    assert v.device_id == -1
    assert not v.is_device_accessible
    assert not v.readonly
    assert v.exporting_obj is a
    assert v.__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("name", list(_arrays()))
def test_numpy_through_the_array_interface(name):
    a = _arrays()[name]
    v = StridedMemoryView.from_array_interface(a)
    assert v.ptr == a.__array_interface__["data"][0]
    assert v.shape == a.shape
    expected = None if a.__array_interface__["strides"] is None else _expected_strides(a)
    assert v.strides == expected
    assert v.dtype == a.dtype
    assert (v.device_id, v.is_device_accessible, v.readonly) == (-1, False, False)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_dtype(dtype):
    a = np.zeros(5, dtype=dtype)
    for v in (StridedMemoryView.from_dlpack(a, -1), StridedMemoryView.from_array_interface(a)):
        assert v.dtype == np.dtype(dtype)
        assert v._layout.itemsize == np.dtype(dtype).itemsize
    back = np.from_dlpack(StridedMemoryView.from_dlpack(a, -1))
    assert back.dtype == a.dtype and back.shape == a.shape


def test_read_only_arrays():
    a = np.arange(4.0)
    a.flags.writeable = False
    assert StridedMemoryView.from_dlpack(a, -1).readonly
    assert StridedMemoryView.from_array_interface(a).readonly


def test_zero_dimensional():
    a = np.array(3.5)
    v = StridedMemoryView.from_dlpack(a, -1)
    assert v.shape == () and v.size == 1 and v.dtype == np.float64
    assert np.from_dlpack(v) == 3.5


def test_stream_none_is_ambiguous():
    with pytest.raises(BufferError, match="stream=None is ambiguous"):
        StridedMemoryView.from_dlpack(np.zeros(3))
    with pytest.raises(BufferError, match="stream=None is ambiguous"):
        StridedMemoryView.from_any_interface(np.zeros(3))


def test_direct_construction_is_deprecated():
    a = np.zeros(3)
    with pytest.warns(DeprecationWarning):
        v = StridedMemoryView(a, -1)
    assert v.shape == (3,)
    with pytest.warns(DeprecationWarning):
        empty = StridedMemoryView()
    with pytest.raises(ValueError, match="Cannot infer layout"):
        empty.shape


def test_no_protocol():
    for obj in (3, [1, 2], b"abc"):
        with pytest.raises((BufferError, AttributeError)):
            StridedMemoryView.from_any_interface(obj, -1)


class _OnlyArrayInterface:
    def __init__(self, array, **changes):
        self._array = array
        self.__array_interface__ = dict(array.__array_interface__, **changes)


class _OnlyDLPack:
    def __init__(self, array, versioned=True):
        self._array = array
        self._versioned = versioned
        self.calls = []

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        self.calls.append((stream, max_version))
        if not self._versioned:
            if max_version is not None:
                raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
            return self._array.__dlpack__()
        return self._array.__dlpack__(max_version=max_version)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


class _OnlyCAI:
    def __init__(self, **interface):
        self.__cuda_array_interface__ = dict({"version": 3}, **interface)


def test_object_with_only_the_array_interface():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    obj = _OnlyArrayInterface(a)
    v = StridedMemoryView.from_array_interface(obj)
    assert (v.shape, v.dtype, v.exporting_obj) == ((2, 3), np.int32, obj)
    with pytest.raises(BufferError, match="v3"):
        StridedMemoryView.from_array_interface(_OnlyArrayInterface(a, version=2))
    with pytest.raises(BufferError, match="mask"):
        StridedMemoryView.from_array_interface(_OnlyArrayInterface(a, mask=a))


@pytest.mark.parametrize("versioned", [True, False])
def test_object_with_only_dlpack(versioned):
    a = np.arange(6, dtype=np.float64).reshape(3, 2)
    obj = _OnlyDLPack(a, versioned)
    v = StridedMemoryView.from_dlpack(obj, -1)
    assert v.shape == (3, 2) and v.dtype == np.float64 and v.exporting_obj is obj
    assert obj.calls[0] == (None, (1, 0))   # -1 on the host: no stream passed
    if not versioned:
        assert obj.calls[1] == (None, None)
    assert not hasattr(obj, "__cuda_array_interface__")


def test_protocols_found_per_type_still_answer_each_object():
    # from_any_interface remembers what each type offers; objects of types that
    # alternate, and an instance carrying DLPack methods its type lacks, are
    # each read through what they offer, with the dtype of each.
    class PerInstance:
        pass

    f32 = np.arange(6, dtype=np.float32).reshape(2, 3)
    i16 = np.arange(4, dtype=np.int16)
    holder = PerInstance()
    holder.__dlpack__ = lambda stream=None, max_version=None: i16.__dlpack__(max_version=max_version)
    holder.__dlpack_device__ = i16.__dlpack_device__
    for _ in range(3):
        for obj, shape, dtype in ((f32, (2, 3), np.float32), (_OnlyDLPack(i16), (4,), np.int16),
                                  (holder, (4,), np.int16), (f32[:, ::2], (2, 2), np.float32)):
            v = StridedMemoryView.from_any_interface(obj, -1)
            assert (v.shape, v.dtype, v.exporting_obj) == (shape, dtype, obj)
    with pytest.raises(BufferError, match="protocol"):
        StridedMemoryView.from_any_interface(PerInstance(), -1)
    # A subclass gets views of its own class, from each classmethod and view().
    class Sub(StridedMemoryView):
        pass

    for made in (Sub.from_any_interface(f32, -1), Sub.from_dlpack(f32, -1), Sub.from_array_interface(f32)):
        assert type(made) is Sub and type(made.view()) is Sub and made.shape == (2, 3)
    assert type(StridedMemoryView.from_any_interface(f32, -1).view()) is StridedMemoryView
    # Shapes and strides of up to 8 extents are shared between views of one
    # layout; more are not, and both read back right either way.
    wide = np.zeros((1, 2) * 5, dtype=np.int8)
    for obj in (wide, f32, wide[:, :, ::2], f32):
        v = StridedMemoryView.from_any_interface(obj, -1)
        assert v.shape == obj.shape
        assert v.strides == tuple(s // obj.itemsize for s in obj.strides)


def test_object_with_only_the_cuda_array_interface_checks_before_the_driver():
    with pytest.raises(BufferError, match="v3"):
        StridedMemoryView.from_cuda_array_interface(
            _OnlyCAI(shape=(2,), typestr="<f4", data=(0, False), version=2), -1)
    with pytest.raises(BufferError, match="mask"):
        StridedMemoryView.from_cuda_array_interface(_OnlyCAI(shape=(2,), typestr="<f4", data=(0, False), mask=1), -1)
    with pytest.raises(BufferError, match="ambiguous"):
        StridedMemoryView.from_cuda_array_interface(_OnlyCAI(shape=(2,), typestr="<f4", data=(0, False)), None)


class _Capsules:
    """A producer whose capsule is whatever the test hands back."""

    def __init__(self, capsule, device=(1, 0)):
        self.capsule = capsule
        self.device = device

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


def test_dlpack_version_two_is_refused_and_freed():
    capsule = np.arange(3.0).__dlpack__(max_version=(1, 0))
    # DLManagedTensorVersioned begins with {uint32 major, uint32 minor}.
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    ctypes.c_uint32.from_address(get(capsule, b"dltensor_versioned")).value = 2
    with pytest.raises(BufferError, match="DLPack 2.0 is not supported"):
        StridedMemoryView.from_dlpack(_Capsules(capsule), -1)


def test_a_used_capsule_or_another_object_is_refused():
    capsule = np.arange(3.0).__dlpack__()
    np.from_dlpack(_Capsules(capsule))  # consumes it
    with pytest.raises(BufferError, match="not an unconsumed DLPack capsule"):
        StridedMemoryView.from_dlpack(_Capsules(capsule), -1)
    with pytest.raises(BufferError, match="not an unconsumed DLPack capsule"):
        StridedMemoryView.from_dlpack(_Capsules(object()), -1)


def test_unsupported_device_and_dtype():
    with pytest.raises(BufferError, match="device not supported"):
        StridedMemoryView.from_dlpack(_Capsules(None, device=(4, 0)), -1)
    with pytest.raises(BufferError):
        StridedMemoryView.from_dlpack(np.zeros(3, "M8[s]"), -1)   # NumPy itself refuses to export


def test_bad_interface_strides():
    a = np.zeros(4, dtype=np.float32)
    v = StridedMemoryView.from_array_interface(_OnlyArrayInterface(a, strides=(6,)))
    with pytest.raises(ValueError, match="not a multiple of the itemsize"):
        v.strides


def test_view_exports_keep_the_data():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, 1:]
    v = StridedMemoryView.from_dlpack(a, -1)
    for max_version in (None, (1, 0)):
        back = np.from_dlpack(v) if max_version is None else np.from_dlpack(_Capsules(v.__dlpack__(max_version=max_version)))
        assert (back == a).all()
    r = a.copy()
    r.flags.writeable = False
    exported = np.from_dlpack(StridedMemoryView.from_dlpack(r, -1))
    assert not exported.flags.writeable
    v.__dlpack__(dl_device=(1, 0))   # its own device
    with pytest.raises(BufferError, match="differs"):
        v.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError):
        v.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        v.__dlpack__(max_version=[1, 0])
    back = np.from_dlpack(StridedMemoryView.from_array_interface(a))
    assert (back == a).all()


def test_view_changes_layout_and_dtype():
    from cubind.core._layout import _StridedLayout

    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    v = StridedMemoryView.from_dlpack(a, -1)
    assert v.view() is v
    as_int = v.view(dtype=np.int32)
    assert as_int.dtype == np.int32 and as_int.shape == (3, 4) and as_int.ptr == v.ptr
    assert (np.from_dlpack(as_int) == a.view(np.int32)).all()
    t = v.view(v._layout.permuted((1, 0)))
    assert t.shape == (4, 3) and t.strides == (1, 4)
    assert (np.from_dlpack(t) == a.T).all()
    with pytest.raises(ValueError, match="does not match the layout's itemsize"):
        v.view(dtype=np.int8)
    assert v._layout == _StridedLayout((3, 4), (4, 1), 4)


def test_repr_names_the_fields():
    text = repr(StridedMemoryView.from_dlpack(np.zeros((2, 3), np.float32), -1))
    for part in ("shape=(2, 3)", "strides=(3, 1)", "itemsize=4", "dtype=numpy.dtypes.Float32DType",
                 "device_id=-1", "exporting_obj=numpy.ndarray"):
        assert part in text


def test_layout_helpers():
    from cubind.core._layout import _StridedLayout

    assert _StridedLayout.dense((5, 3, 7), 1, "C") == _StridedLayout((5, 3, 7), (21, 7, 1), 1)
    assert _StridedLayout.dense((5, 3, 7), 1, "F") == _StridedLayout((5, 3, 7), (1, 5, 15), 1)
    assert _StridedLayout.dense((5, 3, 7), 1, (2, 0, 1)) == _StridedLayout((5, 3, 7), (3, 1, 15), 1)
    layout = _StridedLayout.dense((5, 3, 7), 1).permuted((2, 0, 1))
    assert layout == _StridedLayout((7, 5, 3), (1, 21, 7), 1)
    assert _StridedLayout.dense_like(layout, "C") == _StridedLayout((7, 5, 3), (15, 3, 1), 1)
    assert _StridedLayout((4, 4), (8, 1), 4, ).required_size_in_bytes == (3 * 8 + 3 + 1) * 4
    assert _StridedLayout((2, 3), (12, 4), 4, divide_strides=True).strides == (3, 1)
    assert _StridedLayout((2, 3), None, 4).is_contiguous_c
    assert not _StridedLayout((2, 3), (1, 2), 4).is_contiguous_c


def test_decorator_gives_proxies():
    seen = {}

    @args_viewable_as_strided_memory((0, 2))
    def library_function(x, scale, y, stream_ptr):
        seen["types"] = (type(x).__name__, type(y).__name__)
        return x.view(stream_ptr), y.view(stream_ptr), scale

    a, b = np.zeros(3), np.ones((2, 2))
    va, vb, scale = library_function(a, 2.0, b, -1)
    assert seen["types"] == ("_StridedMemoryViewProxy", "_StridedMemoryViewProxy")
    assert va.exporting_obj is a and vb.shape == (2, 2) and scale == 2.0
    assert library_function.__name__ == "library_function"
    with pytest.raises(TypeError):
        args_viewable_as_strided_memory([0])
    with pytest.raises(BufferError, match="does not support any data exchange protocol"):
        library_function(3, 1, b, -1)


def test_from_buffer_checks_its_arguments():
    buffer = cb.Buffer.from_handle(0x10000000, 64)
    with pytest.raises(ValueError, match="Either itemsize or dtype"):
        StridedMemoryView.from_buffer(buffer, (4,))
    with pytest.raises(ValueError, match="does not match"):
        StridedMemoryView.from_buffer(buffer, (4,), itemsize=2, dtype=np.float32)
    with pytest.raises(TypeError, match="must be a Buffer"):
        StridedMemoryView.from_buffer(np.zeros(4), (4,), itemsize=4)
    with pytest.raises(ValueError, match="differ in length"):
        StridedMemoryView.from_buffer(buffer, (4, 4), (4,), itemsize=4)
    with pytest.raises(TypeError, match="must hold ints"):
        StridedMemoryView.from_buffer(buffer, (4, 4), (4.0, 1), itemsize=4)
    with pytest.raises(ValueError, match="negative extent"):
        StridedMemoryView.from_buffer(buffer, (-1,), itemsize=4)


def test_tensor_map_options():
    o = cb.TensorMapDescriptorOptions(box_dim=[2, 3])
    assert o.box_dim == (2, 3) and o.swizzle is tm.TensorMapSwizzle.NONE
    with pytest.raises(TypeError, match="box_dim must be a tuple of ints"):
        cb.TensorMapDescriptorOptions(box_dim=5)
    with pytest.raises(TypeError, match=r"box_dim\[0\] must be an int"):
        cb.TensorMapDescriptorOptions(box_dim=(1.5,))
    with pytest.raises(TypeError, match="swizzle must be a TensorMapSwizzle"):
        cb.TensorMapDescriptorOptions(box_dim=(1,), swizzle=3)
    with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
        cb.TensorMapDescriptor()
    with pytest.raises(ValueError, match="must be device-accessible"):
        StridedMemoryView.from_dlpack(np.zeros((16, 16), np.float32), -1).as_tensor_map((4, 4))


def test_tensor_map_checks():
    assert tm._check_tiled(2, (8, 8), None, tm.TensorMapInterleave.NONE, tm.TensorMapSwizzle.NONE, 4) == (1, 1)
    with pytest.raises(ValueError, match=r"box_dim\[0\] must be in \[1, 256\]"):
        tm._check_tiled(2, (0, 8), None, tm.TensorMapInterleave.NONE, tm.TensorMapSwizzle.NONE, 4)
    with pytest.raises(ValueError, match="multiple of 16 bytes"):
        tm._check_tiled(2, (8, 2), None, tm.TensorMapInterleave.NONE, tm.TensorMapSwizzle.NONE, 4)
    with pytest.raises(ValueError, match="swizzle span"):
        tm._check_tiled(2, (8, 16), None, tm.TensorMapInterleave.NONE, tm.TensorMapSwizzle.SWIZZLE_32B, 4)
    with pytest.raises(ValueError, match="Unsupported dtype int8"):
        tm._data_type_of(np.dtype(np.int8), None)
    assert tm._data_type_of(np.dtype(np.float32), None) is tm.TensorMapDataType.FLOAT32
    assert tm._data_type_of(None, tm.TensorMapDataType.TFLOAT32) is tm.TensorMapDataType.TFLOAT32


def test_typing_module():
    from cubind.core import typing as t

    assert t.SourceCodeType.CXX == "c++" and t.CompilerBackendType.NVJITLINK == "nvJitLink"
    assert set(t.__all__) >= {"IsStreamType", "DevicePointerType", "ProcessStateType"}


def test_importing_cubind_core_imports_no_numpy():
    code = ("import sys, cubind.core, cubind.core.utils, cubind.core.typing; "
            "assert 'numpy' not in sys.modules, 'numpy imported'")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def _exchange_producer(fail=False):
    """A producer type offering DLPack's C exchange table (made with ctypes):
    its tensors come from NumPy's versioned capsules, renamed as used."""
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype, api.PyCapsule_GetPointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                                           ctypes.c_char_p]
    api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_New.restype = ctypes.py_object
    api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    from_py_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
    stream_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))
    calls = []

    def from_py(address, out):
        obj = ctypes.cast(address, ctypes.py_object).value
        calls.append(obj)
        if fail:
            return -1
        capsule = obj.array.__dlpack__(max_version=(1, 0))
        out[0] = api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        api.PyCapsule_SetName(capsule, b"used_dltensor_versioned")
        return 0

    def current_stream(device_type, device_id, out):
        out[0] = None
        return 0

    class Table(ctypes.Structure):
        _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev", ctypes.c_void_p),
                    ("allocator", ctypes.c_void_p), ("from_py", from_py_type), ("to_py", ctypes.c_void_p),
                    ("dltensor", ctypes.c_void_p), ("stream", stream_type)]

    table = Table(1, 3, None, None, from_py_type(from_py), None, None, stream_type(current_stream))

    class Producer:
        def __init__(self, array):
            self.array = array

        def __dlpack__(self, *args, **kwargs):
            raise AssertionError("the exchange table is used, not __dlpack__")

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    Producer.__dlpack_c_exchange_api__ = api.PyCapsule_New(ctypes.addressof(table), b"dlpack_exchange_api", None)
    Producer.keep = (table, calls)
    return Producer, calls


def test_dlpack_exchange_table_is_used_when_the_type_offers_one():
    Producer, calls = _exchange_producer()
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    p = Producer(a)
    for make in (StridedMemoryView.from_any_interface, StridedMemoryView.from_dlpack):
        v = make(p, -1)
        assert (v.ptr, v.shape, v.strides, v.dtype) == (a.__array_interface__["data"][0], (3, 2), (4, 2), np.float32)
        assert (v.device_id, v.is_device_accessible, v.readonly, v.exporting_obj) == (-1, False, False, p)
        assert np.array_equal(np.from_dlpack(v), a)
        del v
    assert calls == [p, p]
    r = np.arange(3.0)
    r.flags.writeable = False
    assert StridedMemoryView.from_dlpack(Producer(r), -1).readonly
    with pytest.raises(BufferError, match="stream=None is ambiguous"):
        StridedMemoryView.from_dlpack(Producer(a))


def test_dlpack_exchange_table_failure_is_reported():
    Producer, _ = _exchange_producer(fail=True)
    with pytest.raises(BufferError, match="exchange table failed"):
        StridedMemoryView.from_dlpack(Producer(np.zeros(3)), -1)


@pytest.mark.parametrize("how", ["dlpack", "interface"])
def test_shape_and_strides_outlive_the_producer_and_hold_their_values(how):
    # Extents and steps above 256 are ints of their own (not the interpreter's
    # shared small ints): each must be held by the view's tuples, whatever
    # else is allocated and collected after them.
    import gc

    a = np.zeros((1000, 7001), dtype=np.float32)[:, ::3]
    if how == "dlpack":
        v = StridedMemoryView.from_dlpack(a, -1)
    else:
        v = StridedMemoryView.from_array_interface(a)
    shape, strides = v.shape, v.strides
    del a
    gc.collect()
    junk = [object() for _ in range(10000)]  # reuses any memory freed too early
    assert shape == (1000, 2334) and all(type(x) is int for x in shape)
    assert strides == (7001, 3) and all(type(x) is int for x in strides)
    assert v.size == 1000 * 2334
    assert all(sys.getrefcount(x) >= 2 for x in shape + strides)
    del junk
