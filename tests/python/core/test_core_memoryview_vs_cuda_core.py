"""StridedMemoryView, args_viewable_as_strided_memory, the tensor map options
and cubind.core.typing against cuda.core 1.2, side by side: the same names,
parameters and values, and the same answers for the calls that need no GPU
(NumPy arrays through DLPack; the CUDA Array Interface and tensor maps against
the stand-in driver, in a child process)."""
import enum
import inspect

import pytest

cc = pytest.importorskip("cuda.core", reason="cuda.core 1.2 is not installed (pip install 'cuda-core==1.2.*')")
np = pytest.importorskip("numpy")

import cuda.core.typing as cc_typing  # noqa: E402
import cuda.core.utils as cc_utils  # noqa: E402
from cuda.core import _tensor_map as cc_tm  # noqa: E402

import cubind.core.typing as cb_typing  # noqa: E402
import cubind.core.utils as cb_utils  # noqa: E402
from cubind.core import _tensor_map as cb_tm  # noqa: E402
from conftest import run_with_fake_driver  # noqa: E402
from test_core_vs_cuda_core import _from_inspect, _members, _positional_ok  # noqa: E402

# cuda.core.utils names cubind.core.utils provides; the rest are listed in
# docs/migration-from-cuda-core.md ("Not provided").
UTILS = ["StridedMemoryView", "args_viewable_as_strided_memory", "FileStreamProgramCache", "InMemoryProgramCache",
         "ProgramCacheResource", "make_program_cache_key", "CopyOptions", "MemcpyOverlapMode", "MemcpySrcAccessOrder",
         "copy_batch", "discard_batch", "discard_prefetch_batch", "prefetch_batch"]
UTILS_LEFT_OUT = set()


def test_utils_names():
    assert set(cc_utils.__all__) == set(UTILS) | UTILS_LEFT_OUT
    for name in UTILS:
        assert hasattr(cb_utils, name), name
    for name in UTILS_LEFT_OUT:
        assert not hasattr(cb_utils, name), name


def test_strided_memory_view_members_and_parameters():
    ours, theirs = cb_utils.StridedMemoryView, cc_utils.StridedMemoryView
    problems = []
    for member in _members(theirs) + ["__dlpack__", "__dlpack_device__", "_layout"]:
        if not hasattr(ours, member):
            problems.append(f"{member} is missing")
            continue
        their_static = inspect.getattr_static(theirs, member)
        if not callable(their_static) or inspect.isdatadescriptor(their_static):
            continue
        expected = _from_inspect(getattr(theirs, member), drop_self=True)
        got = _from_inspect(getattr(ours, member), drop_self=True)
        if expected is not None and _positional_ok(got) != _positional_ok(expected):
            problems.append(f"{member}: cubind {got} != cuda.core {expected}")
    assert not problems, "\n".join(problems)
    assert _from_inspect(ours, False) == _from_inspect(theirs, False) or _from_inspect(theirs, False) is None
    assert inspect.signature(cb_utils.args_viewable_as_strided_memory).parameters.keys() == \
        inspect.signature(cc_utils.args_viewable_as_strided_memory).parameters.keys()


def test_typing_names_and_values():
    assert sorted(cb_typing.__all__) == sorted(cc_typing.__all__)
    for name in cc_typing.__all__:
        theirs, ours = getattr(cc_typing, name), getattr(cb_typing, name)
        if isinstance(theirs, type) and issubclass(theirs, enum.Enum):
            assert issubclass(ours, enum.Enum) and issubclass(ours, str), name
            assert [(m.name, m.value) for m in ours] == [(m.name, m.value) for m in theirs], name
    assert cb_typing.ProcessStateType == cc_typing.ProcessStateType


@pytest.mark.parametrize("name", ["TensorMapDataType", "TensorMapInterleave", "TensorMapSwizzle",
                                  "TensorMapL2Promotion", "TensorMapOOBFill", "TensorMapIm2ColWideMode"])
def test_tensor_map_enums(name):
    ours, theirs = getattr(cb_tm, name), getattr(cc_tm, name)
    assert [(m.name, int(m.value)) for m in ours] == [(m.name, int(m.value)) for m in theirs]


def _arrays():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    ro = np.arange(6.0)
    ro.flags.writeable = False
    return [base, base[:, ::2], base[1:3, 2:5], base.T, np.zeros((0, 3)), np.array(2.5), ro,
            np.arange(10, dtype=np.int16)[::-3]] + [np.zeros(3, dtype=d) for d in (
                np.bool_, np.int8, np.uint16, np.int64, np.float16, np.complex64, np.complex128)]


@pytest.mark.parametrize("index", range(len(_arrays())))
def test_numpy_views_agree(index):
    a = _arrays()[index]
    ours = cb_utils.StridedMemoryView.from_dlpack(a, -1)
    theirs = cc_utils.StridedMemoryView.from_dlpack(a, -1)
    for field in ("ptr", "shape", "strides", "dtype", "device_id", "is_device_accessible", "readonly", "size"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert ours.exporting_obj is theirs.exporting_obj is a
    assert ours.__dlpack_device__() == theirs.__dlpack_device__()
    assert ours._layout == type(ours._layout)(theirs._layout.shape, theirs._layout.strides, theirs._layout.itemsize)
    assert repr(ours) == repr(theirs)
    assert np.array_equal(np.from_dlpack(ours), np.from_dlpack(theirs))


def test_errors_agree():
    for module in (cb_utils, cc_utils):
        with pytest.raises(BufferError, match="stream=None is ambiguous"):
            module.StridedMemoryView.from_dlpack(np.zeros(2))
        with pytest.raises(BufferError, match="does not support any data exchange protocol"):
            module.StridedMemoryView.from_any_interface(3, -1)
        with pytest.raises(TypeError):
            module.args_viewable_as_strided_memory([0])
        v = module.StridedMemoryView.from_dlpack(np.zeros(4, np.float32), -1)
        with pytest.raises(ValueError, match="does not match the layout's itemsize"):
            v.view(dtype=np.int8)
    for bad in ({"box_dim": 5}, {"box_dim": (1.5,)}, {"box_dim": (1,), "swizzle": 3},
                {"box_dim": (1, 2), "element_strides": 3}):
        with pytest.raises(TypeError) as theirs:
            cc_tm.TensorMapDescriptorOptions(**bad)
        with pytest.raises(TypeError) as ours:
            cb_tm.TensorMapDescriptorOptions(**bad)
        assert str(ours.value) == str(theirs.value)


# In a child against the stand-in driver: the CUDA Array Interface (its
# device from cuPointerGetAttribute) and tiled tensor maps, each encode's
# arguments as the driver received them, for both packages.
FAKE_CHILD = r"""
import ctypes, numpy as np
import cubind.core as cb, cuda.core as cc
from cubind.core.utils import StridedMemoryView as CbView
from cuda.core.utils import StridedMemoryView as CcView
import cubind.core._tensor_map as cbt, cuda.core._tensor_map as cct
fake = ctypes.CDLL("libcuda.so.1")

class CAI:
    def __init__(self, shape, typestr="<f4", ptr=0x10000000, strides=None, stream=None):
        self.__cuda_array_interface__ = dict(shape=shape, typestr=typestr, data=(ptr, False), version=3,
                                             strides=strides, stream=stream)

def recorded():
    rank = ctypes.c_uint.in_dll(fake, "fake_tensor_map_rank").value
    dims = (ctypes.c_ulonglong * 5).in_dll(fake, "fake_tensor_map_dims")[:rank]
    strides = (ctypes.c_ulonglong * 4).in_dll(fake, "fake_tensor_map_strides")[:rank - 1]
    box = (ctypes.c_uint * 5).in_dll(fake, "fake_tensor_map_box")[:rank]
    elem = (ctypes.c_uint * 5).in_dll(fake, "fake_tensor_map_element_strides")[:rank]
    enums = (ctypes.c_int * 5).in_dll(fake, "fake_tensor_map_enums")[:]
    return rank, dims, strides, box, elem, enums

cc.Device(0).set_current()
cb.Device(0).set_current()
for obj in (CAI((64, 64)), CAI((8, 16, 32), "<f2", strides=(1024, 64, 2)), CAI((5,), "<i4"), CAI((4, 4), stream=1)):
    a, b = CbView.from_cuda_array_interface(obj, 2), CcView.from_cuda_array_interface(obj, 2)
    for field in ("ptr", "shape", "strides", "dtype", "device_id", "is_device_accessible", "readonly"):
        assert getattr(a, field) == getattr(b, field), (field, getattr(a, field), getattr(b, field))
    assert repr(a) == repr(b), (repr(a), repr(b))

cases = [
    (CAI((64, 64)), dict(box_dim=(8, 8))),
    (CAI((64, 64)), dict(box_dim=(16, 8), element_strides=(1, 2))),
    (CAI((32, 64, 128), "<f2"), dict(box_dim=(2, 4, 64), swizzle="SWIZZLE_128B", l2_promotion="L2_128B")),
    (CAI((64, 64)), dict(box_dim=(8, 8), data_type=np.int32)),
    (CAI((64, 64), "<u1"), dict(box_dim=(4, 32), oob_fill="NAN_REQUEST_ZERO_FMA")),
    (CAI((16, 16), "<f8", strides=(256, 8)), dict(box_dim=(4, 4))),
]
for obj, kwargs in cases:
    results = []
    for view_cls, tm in ((CbView, cbt), (CcView, cct)):
        args = dict(kwargs)
        for key, enum_name in (("swizzle", "TensorMapSwizzle"), ("l2_promotion", "TensorMapL2Promotion"),
                               ("oob_fill", "TensorMapOOBFill")):
            if key in args:
                args[key] = getattr(getattr(tm, enum_name), args[key])
        desc = view_cls.from_cuda_array_interface(obj, -1).as_tensor_map(**args)
        results.append((recorded(), repr(desc)))
    assert results[0] == results[1], (kwargs, results)

for view_cls in (CbView, CcView):
    v = view_cls.from_cuda_array_interface(CAI((64, 64)), -1)
    for bad, kind in ((dict(box_dim=(8,)), ValueError), (dict(box_dim=(0, 8)), ValueError),
                      (dict(box_dim=(257, 8)), ValueError), (dict(), TypeError)):
        try:
            v.as_tensor_map(**bad)
        except kind:
            pass
        else:
            raise AssertionError((view_cls, bad))
    try:
        view_cls.from_cuda_array_interface(CAI((64, 64), ptr=0x10000004), -1).as_tensor_map((8, 8))
    except ValueError as e:
        assert "16-byte aligned" in str(e)
    else:
        raise AssertionError("misaligned")
"""


def test_interface_views_and_tensor_maps_agree_on_the_stand_in_driver(fake_driver_dir):
    run_with_fake_driver(fake_driver_dir, FAKE_CHILD)
