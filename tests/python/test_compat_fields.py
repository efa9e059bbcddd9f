"""Struct and union fields as cuda.bindings has them (the differential suite's
classes 4-7 and 11): numbers converted as cuda.bindings converts them, char arrays, array and
list fields, every union member, and the text of a struct. Each test asserts
cubind's behaviour on its own, and where cuda.bindings is installed, that it
is the same there."""
import ctypes

import pytest
from conftest import NO_SAME_CUDA_REFERENCE, needs_same_cuda_reference

from cubind.bindings import driver, runtime

try:
    from cuda.bindings import driver as cuda_driver
    from cuda.bindings import runtime as cuda_runtime
except ImportError:
    cuda_driver = cuda_runtime = None

both = pytest.mark.parametrize("pkg", ["cubind", "cuda.bindings"])


def modules(pkg):
    if pkg == "cubind":
        return driver, runtime
    if NO_SAME_CUDA_REFERENCE:
        pytest.skip(NO_SAME_CUDA_REFERENCE)
    return cuda_driver, cuda_runtime


class Index:
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


class Int:
    def __init__(self, value):
        self.value = value

    def __int__(self):
        return self.value


# -- 4. numbers


@both
def test_integer_fields_truncate_floats_and_take_index(pkg):
    d, r = modules(pkg)
    n = 1000
    grid = r.dim3()
    grid.x = n / 256
    assert grid.x == 3 and type(grid.x) is int
    m = d.CUDA_MEMCPY2D()
    m.WidthInBytes = 2.75
    m.Height = Int(7)
    assert (m.WidthInBytes, m.Height) == (2, 7)
    m.dstDevice = 4096.9
    assert int(m.dstDevice) == 4096


def test_integer_fields_also_take_index():
    # cuda.bindings' setters take __int__ only; cubind takes __index__ as well.
    m = driver.CUDA_MEMCPY2D()
    m.Height = Index(7)
    m.dstDevice = Index(0x100)
    assert m.Height == 7 and int(m.dstDevice) == 0x100


@both
def test_integer_fields_refuse_what_cuda_bindings_refuses(pkg):
    d, r = modules(pkg)
    m = d.CUDA_MEMCPY2D()
    m.Height = 5
    for bad, exc in ((-1, OverflowError), (2**64, OverflowError), ("x", TypeError)):
        with pytest.raises(exc):
            m.Height = bad
    assert m.Height == 5, "a refused value leaves the field as it was"
    for bad, exc in ((-1, OverflowError), ("x", TypeError)):
        with pytest.raises(exc):
            m.dstDevice = bad
        with pytest.raises(exc):
            m.srcArray = bad


@both
def test_float_fields(pkg):
    d, _ = modules(pkg)
    w = d.CUaccessPolicyWindow()
    w.hitRatio = 1
    assert w.hitRatio == 1.0 and type(w.hitRatio) is float
    with pytest.raises(TypeError):
        w.hitRatio = "x"


@both
def test_enum_fields_convert_as_cuda_bindings_does(pkg):
    d, _ = modules(pkg)
    m = d.CUDA_MEMCPY2D()
    for bad, exc in (("x", ValueError), (float("nan"), ValueError), (2**32, OverflowError),
                     (float("inf"), OverflowError), (None, TypeError), ([1], TypeError)):
        with pytest.raises(exc):
            m.srcMemoryType = bad
    if pkg == "cubind":
        # cuda.bindings 13.5 raises ValueError for -1 in a fresh process (the
        # differential suite's sweep) but not always after other writes.
        with pytest.raises(ValueError, match="srcMemoryType"):
            m.srcMemoryType = -1
    # An int that is a member, and a float, truncated to one.
    m.srcMemoryType = 2
    assert m.srcMemoryType == d.CUmemorytype.CU_MEMORYTYPE_DEVICE
    m.srcMemoryType = 3.75
    assert m.srcMemoryType == d.CUmemorytype.CU_MEMORYTYPE_ARRAY
    m.srcMemoryType = d.CUmemorytype.CU_MEMORYTYPE_DEVICE
    assert int(m.srcMemoryType) == int(d.CUmemorytype.CU_MEMORYTYPE_DEVICE)


@both
def test_none_is_null_for_handle_and_value_fields(pkg):
    d, r = modules(pkg)
    m = d.CUDA_MEMCPY3D()
    m.dstDevice = 0x1000
    m.dstDevice = None
    assert int(m.dstDevice) == 0 and isinstance(m.dstDevice, d.CUdeviceptr)
    m.srcArray = d.CUarray(0x20)
    m.srcArray = None
    assert int(m.srcArray) == 0
    p = r.cudaConditionalNodeParams()
    p.handle = None
    assert int(p.handle) == 0


def test_plain_int_setter_stays_exact():
    # The fast path stores exactly what it is given, at each width.
    m = driver.CUDA_MEMCPY3D()
    m.WidthInBytes = 2**64 - 1
    assert m.WidthInBytes == 2**64 - 1
    with pytest.raises(OverflowError):
        m.srcLOD = 2**64
    r = runtime.cudaChannelFormatDesc()
    r.x = -5
    assert r.x == -5
    with pytest.raises(TypeError, match="x"):
        r.x = None


@both
def test_pointer_fields(pkg):
    d, _ = modules(pkg)
    m = d.CUDA_MEMCPY2D()
    for bad in (-1, 2**64, float("nan"), float("inf"), 1e20, "x"):
        with pytest.raises(TypeError):
            m.srcHost = bad
    m.srcHost = 4096.5
    assert m.srcHost == 4096
    m.srcHost = 2**64 - 1
    assert m.srcHost == 2**64 - 1
    m.srcHost = Int(0x2000)
    assert m.srcHost == 0x2000
    h = d.CUDA_HOST_NODE_PARAMS()
    h.fn = 2.75
    assert int(h.fn) == 2 and isinstance(h.fn, d.CUhostFn)
    with pytest.raises(OverflowError):
        h.fn = -1
    k = d.CUDA_KERNEL_NODE_PARAMS()
    k.extra = 2.5
    assert k.extra == 2
    with pytest.raises(OverflowError):
        k.kernelParams = -1
    with pytest.raises(TypeError):
        k.kernelParams = 2.5


# -- 5. char arrays


def test_char_arrays_take_0_to_255_and_read_bytes():
    # cubind only: cuda.bindings 13.5 leaves every reserved member out, an IPC
    # handle's bytes (its only member) included; cubind keeps those
    # (reserved-only-member in the migration guide).
    d, r = driver, runtime
    h = d.CUipcMemHandle()
    h.reserved = [200] * 64
    assert h.reserved == b"\xc8" * 64
    h.reserved = [-1] * 64
    assert h.reserved == b"\xff" * 64
    h.reserved = [1.5] * 64
    assert h.reserved == b"\x01" * 64
    with pytest.raises(OverflowError):
        h.reserved = [300] * 64
    assert h.reserved == b"\x01" * 64, "a refused list leaves the field as it was"
    with pytest.raises(ValueError):
        h.reserved = b"AB"
    h.reserved = bytes(range(64))
    assert h.reserved == bytes(range(64))
    # Reserved members of other structs are left out, as in cuda.bindings 13.5.
    assert not hasattr(d.CUmemPoolProps(), "reserved")
    assert "reserved" not in str(d.CUmemPoolProps())
    assert not hasattr(d.CUgraphEdgeData(), "reserved")
    prop = r.cudaDeviceProp()
    assert prop.name == b""
    prop.luid = [200] * 8
    assert prop.luid == b"\xc8" * 8


def test_text_arrays_take_shorter_bytes():
    prop = runtime.cudaDeviceProp()
    prop.name = b"Device"
    assert prop.name == b"Device"
    prop.name = "GPU"
    assert prop.name == b"GPU", "the rest is zeroed"
    prop.name = [200, 65] + [0] * 254
    assert prop.name == b"\xc8A"
    with pytest.raises(ValueError, match="name"):
        prop.name = b"x" * 257


# -- 6. array and list fields


@both
def test_numeric_arrays_read_as_lists(pkg):
    _, r = modules(pkg)
    prop = r.cudaDeviceProp()
    prop.maxThreadsDim = [1024, 1024, 64]
    assert prop.maxThreadsDim == [1024, 1024, 64]
    assert isinstance(prop.maxThreadsDim, list)
    assert str(prop.maxThreadsDim) == "[1024, 1024, 64]"
    prop.maxThreadsDim = [1.5, 2, 3]
    assert prop.maxThreadsDim == [1, 2, 3]


def test_numeric_array_items_write_through():
    prop = runtime.cudaDeviceProp()
    dims = prop.maxThreadsDim
    dims[2] = 32
    assert dims == [0, 0, 32] and prop.maxThreadsDim == [0, 0, 32]
    dims[0:2] = [5, 6]
    assert prop.maxThreadsDim == [5, 6, 32]
    with pytest.raises(OverflowError):
        dims[0] = 2**40
    with pytest.raises(TypeError):
        dims.append(1)
    assert prop.maxThreadsDim == [5, 6, 32]
    with pytest.raises(ValueError, match="maxThreadsDim"):
        prop.maxThreadsDim = [1, 2]
    with pytest.raises(TypeError, match="maxThreadsDim"):
        prop.maxThreadsDim = None
    with pytest.raises(OverflowError):
        prop.maxThreadsDim = [2**31, 1, 1]


@both
def test_enum_arrays_read_as_members(pkg):
    d, r = modules(pkg)
    desc = d.CUDA_TEXTURE_DESC()
    assert desc.addressMode == [d.CUaddress_mode.CU_TR_ADDRESS_MODE_WRAP] * 3
    assert all(type(m) is d.CUaddress_mode for m in desc.addressMode)
    desc.addressMode = [d.CUaddress_mode.CU_TR_ADDRESS_MODE_CLAMP, d.CUaddress_mode.CU_TR_ADDRESS_MODE_BORDER,
                        d.CUaddress_mode.CU_TR_ADDRESS_MODE_MIRROR]
    assert desc.addressMode == [d.CUaddress_mode.CU_TR_ADDRESS_MODE_CLAMP, d.CUaddress_mode.CU_TR_ADDRESS_MODE_BORDER,
                                d.CUaddress_mode.CU_TR_ADDRESS_MODE_MIRROR]
    assert type(r.cudaTextureDesc().addressMode[0]) is r.cudaTextureAddressMode


def test_enum_array_items_write_through_as_members():
    desc = runtime.cudaTextureDesc()
    modes = desc.addressMode
    modes[1] = runtime.cudaTextureAddressMode.cudaAddressModeBorder
    assert modes[1] is runtime.cudaTextureAddressMode.cudaAddressModeBorder
    assert desc.addressMode[1] is runtime.cudaTextureAddressMode.cudaAddressModeBorder


@both
def test_handle_list_fields(pkg):
    d, r = modules(pkg)
    sems = [d.CUexternalSemaphore(0x10), d.CUexternalSemaphore(0x20)]
    p = d.CUDA_EXT_SEM_SIGNAL_NODE_PARAMS()
    assert p.extSemArray == []
    p.extSemArray = sems
    got = p.extSemArray
    assert [int(s) for s in got] == [0x10, 0x20] and all(isinstance(s, d.CUexternalSemaphore) for s in got)
    p.paramsArray = [d.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS(), d.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS()]
    assert len(p.paramsArray) == 2 and isinstance(p.paramsArray[1], d.CUDA_EXTERNAL_SEMAPHORE_SIGNAL_PARAMS)
    rp = r.cudaExternalSemaphoreSignalNodeParams()
    rp.extSemArray = [r.cudaExternalSemaphore_t(0x30)]
    assert [int(s) for s in rp.extSemArray] == [0x30]
    for bad in (None, 5) + (("x",) if pkg == "cubind" else ()):  # cuda.bindings crashes on "x"
        with pytest.raises(TypeError):
            rp.extSemArray = bad
    if pkg == "cubind":  # cuda.bindings frees its array twice after this
        p.extSemArray = []
        assert p.extSemArray == []


def test_struct_list_items_are_views_of_the_kept_array():
    config = driver.CUlaunchConfig()
    attrs = [driver.CUlaunchAttribute(), driver.CUlaunchAttribute()]
    attrs[1].id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PRIORITY
    config.attrs = attrs
    got = config.attrs
    assert len(got) == 2 and got[1].id == driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PRIORITY
    got[0].value.priority = 3
    assert config.attrs[0].value.priority == 3, "items write through to the array the config points to"
    address = got[1].getPtr()
    config.attrs = [driver.CUlaunchAttribute()]
    assert ctypes.c_int.from_address(address).value == int(driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PRIORITY), \
        "an old item keeps its array alive"
    with pytest.raises(TypeError, match="attrs"):
        config.attrs = [driver.CUmemLocation()]
    assert len(config.attrs) == 1


@both
def test_conditional_graphs_read_size_items(pkg):
    d, _ = modules(pkg)
    p = d.CUDA_CONDITIONAL_NODE_PARAMS()
    assert p.phGraph_out == []
    with pytest.raises(AttributeError):
        p.phGraph_out = [d.CUgraph(1)]
    graphs = (ctypes.c_void_p * 2)(0x100, 0x200)
    # What cuGraphAddNode does: it points phGraph_out at its `size` graphs.
    offset = 16  # handle, type, size
    ctypes.c_void_p.from_address(p.getPtr() + offset).value = ctypes.addressof(graphs)
    p.size = 2
    assert [int(g) for g in p.phGraph_out] == [0x100, 0x200]
    assert all(isinstance(g, d.CUgraph) for g in p.phGraph_out)


@both
def test_conditional_graphs_before_the_call(pkg):
    # cuda.bindings' test_cudart_conditional: with size set and no call yet,
    # phGraph_out holds `size` null graphs (not []).
    d, r = modules(pkg)
    for params, graph in ((d.CUgraphNodeParams(), d.CUgraph), (r.cudaGraphNodeParams(), r.cudaGraph_t)):
        params.conditional.size = 1
        assert len(params.conditional.phGraph_out) == 1
        assert int(params.conditional.phGraph_out[0]) == 0
        assert isinstance(params.conditional.phGraph_out[0], graph)
    if pkg == "cubind":  # cuda.bindings reads address 8 for the second one
        p = d.CUDA_CONDITIONAL_NODE_PARAMS()
        p.size = 3
        assert [int(g) for g in p.phGraph_out] == [0, 0, 0]


# -- 7. every union member


@both
def test_egl_frame_union_has_both_members(pkg):
    d, r = modules(pkg)
    frame = d.CUeglFrame()
    frame.frame.pPitch = [1, 2, 3]
    assert frame.frame.pPitch == [1, 2, 3]
    assert [int(a) for a in frame.frame.pArray] == [1, 2, 3], "the members share their memory"
    rframe = r.cudaEglFrame()
    pitched = rframe.frame.pPitch
    assert len(pitched) == 3 and all(isinstance(p, r.cudaPitchedPtr) for p in pitched)


@both
def test_struct_array_assignment_copies(pkg):
    # cuda.bindings' test_cudart_eglFrame: a plane assigned to the array is
    # copied; changing the object afterwards leaves the frame as assigned,
    # even when that object came from the frame itself.
    _, r = modules(pkg)
    frame = r.cudaEglFrame()
    x = frame.frame.pPitch[0]
    x.pitch = 123
    frame.frame.pPitch = [x, x, x]
    assert [int(p.pitch) for p in frame.frame.pPitch] == [123, 123, 123]
    x.pitch = 1234
    assert [int(p.pitch) for p in frame.frame.pPitch] == [123, 123, 123]
    assert int(x.pitch) == 1234
    planes = [r.cudaEglPlaneDesc() for _ in range(3)]
    frame.planeDesc = planes
    planes[0].width = 5
    assert frame.planeDesc[0].width == 0
    y = frame.planeDesc[2]
    frame.planeDesc = [y, y, y]
    y.width = 9
    assert [p.width for p in frame.planeDesc] == [0, 0, 0]


def test_struct_array_items_write_through():
    # cubind only (cuda.bindings reads copies): an item of the array is a view.
    frame = runtime.cudaEglFrame()
    frame.frame.pPitch[1].pitch = 77
    frame.planeDesc[2].height = 5
    assert frame.frame.pPitch[1].pitch == 77 and frame.planeDesc[2].height == 5


def _struct_classes():
    from cubind.bindings import _support
    seen = set()
    for module in (driver, runtime):
        for name in sorted(dir(module)):
            cls = getattr(module, name)
            if (isinstance(cls, type) and issubclass(cls, _support.Struct) and hasattr(cls, "_fields")
                    and cls not in seen):
                seen.add(cls)
                yield f"{module.__name__.rsplit('.', 1)[1]}.{name}", cls


def _first_int_field(item):
    # A plain integer field of a struct item, to write a value through.
    for field, _ in type(item)._fields:
        try:
            if type(getattr(item, field)) is int:
                setattr(item, field, 0)
                return field
        except (AttributeError, TypeError, ValueError):
            continue
    return None


def _is_struct(value):
    return hasattr(value, "getPtr") and not hasattr(type(value), "__int__")


def test_every_struct_array_field_copies_on_assignment_and_items_write_through():
    # cuda.bindings' test_cudart_eglFrame, run on every array-of-struct field
    # that the classes have, nested members included (found from them, not
    # listed): an item is a view that writes the array; assigning a list
    # copies its items, even ones that view that very array, so changing the
    # item afterwards leaves the array as assigned.
    checked = []
    for where, cls in _struct_classes():
        stack = [(where, cls())]
        while stack:
            path, obj = stack.pop()
            for field, _ in type(obj)._fields:
                try:
                    items = getattr(obj, field)
                except Exception:
                    continue
                if _is_struct(items):
                    stack.append((f"{path}.{field}", items))
                    continue
                if not (isinstance(items, list) and items and _is_struct(items[0])):
                    continue
                name = _first_int_field(items[0])
                if name is None:
                    continue
                setattr(getattr(obj, field)[-1], name, 77)
                assert getattr(getattr(obj, field)[-1], name) == 77, f"{path}.{field}[-1].{name}: no write-through"
                x = getattr(obj, field)[0]
                setattr(x, name, 123)
                setattr(obj, field, [x] * len(items))
                setattr(x, name, 1234)
                assert [getattr(i, name) for i in getattr(obj, field)] == [123] * len(items), f"{path}.{field}"
                assert getattr(x, name) == 1234
                checked.append(f"{path}.{field}")
    assert "runtime.cudaEglFrame.frame.pPitch" in checked, checked
    assert "runtime.cudaEglFrame.planeDesc" in checked, checked


def test_every_output_array_field_is_read_only_and_sized():
    # Arrays the library makes and points a field at (phGraph_out: the
    # conditional node's graphs), found from the classes: each reads `size`
    # items before the call and cannot be assigned.
    found = []
    for where, cls in _struct_classes():
        for field, _ in cls._fields:
            obj = cls()
            try:
                value = getattr(obj, field)
            except Exception:
                continue
            if not field.endswith("_out") or not isinstance(value, list):
                continue
            found.append(f"{where}.{field}")
            obj.size = 2
            assert [int(g) for g in getattr(obj, field)] == [0, 0], where
            with pytest.raises(AttributeError):
                setattr(obj, field, [])
    assert sorted(found) == ["driver.CUDA_CONDITIONAL_NODE_PARAMS.phGraph_out",
                             "runtime.cudaConditionalNodeParams.phGraph_out"], found


@needs_same_cuda_reference
def test_union_members_match_cuda_bindings():
    checked = 0
    for ours, theirs in ((driver, cuda_driver), (runtime, cuda_runtime)):
        for name in dir(theirs):
            cls = getattr(theirs, name)
            if name.startswith("_") or not isinstance(cls, type) or not hasattr(cls, "getPtr"):
                continue
            mine = getattr(ours, name, None)
            if mine is None or not hasattr(mine, "getPtr") or hasattr(mine, "__int__"):
                continue
            try:
                their_obj, our_obj = cls(), mine()
            except Exception:
                continue
            stack = [(name, their_obj, our_obj)]
            while stack:
                path, t, o = stack.pop()
                fields = [n for n in dir(type(t)) if not n.startswith("_") and n != "getPtr"]
                for field in fields:
                    assert hasattr(o, field), f"{path}.{field} is missing in cubind"
                    checked += 1
                    try:
                        tv, ov = getattr(t, field), getattr(o, field)
                    except Exception:
                        continue
                    if hasattr(tv, "getPtr") and not hasattr(type(tv), "__int__") and hasattr(ov, "getPtr"):
                        stack.append((f"{path}.{field}", tv, ov))
    assert checked > 1000


# -- 11. text of a struct


@both
def test_struct_text_layout(pkg):
    d, r = modules(pkg)
    text = str(d.CUDA_MEMCPY3D())
    lines = text.splitlines()
    assert lines[0] == "srcXInBytes : 0"
    assert "srcHost : 0x0" in lines
    assert repr(d.CUDA_MEMCPY3D()) == text
    attr = d.CUlaunchAttributeValue()
    lines = str(attr).splitlines()
    i = lines.index("clusterDim :")
    assert lines[i + 1:i + 4] == ["    x : 0", "    y : 0", "    z : 0"]
    assert str(r.dim3()) == "x : 1\ny : 1\nz : 1"


@needs_same_cuda_reference
def test_struct_list_text_is_cuda_bindings_layout():
    # A list of structs: its name alone, then "[" + the items joined by ", " + "]", indented.
    assert str(runtime.cudaEglFrame()) == str(cuda_runtime.cudaEglFrame())
    lines = str(runtime.cudaEglFrame()).splitlines()
    i = lines.index("planeDesc :")
    assert lines[i + 1] == "    [width : 0"


@needs_same_cuda_reference
def test_struct_text_is_cuda_bindings_layout():

    def skeleton(text):
        return [line.partition(" :")[0] for line in text.splitlines()]

    for ours, theirs, name in ((driver, cuda_driver, "CUDA_MEMCPY3D"), (runtime, cuda_runtime, "cudaDeviceProp"),
                               (driver, cuda_driver, "CUlaunchConfig"), (driver, cuda_driver, "CUlaunchAttributeValue"),
                               (runtime, cuda_runtime, "cudaKernelNodeParams")):
        assert skeleton(str(getattr(ours, name)())) == skeleton(str(getattr(theirs, name)())), name


# -- dim3 defaults


@both
def test_dim3_members_default_to_one(pkg):
    _, r = modules(pkg)
    assert (r.dim3().x, r.dim3().y, r.dim3().z) == (1, 1, 1)
    k = r.cudaKernelNodeParams()
    assert (k.gridDim.x, k.blockDim.z) == (1, 1)
    # cuda.bindings 13.5 leaves cudaKernelNodeParamsV2's at 0 (dim3-default-one in the migration guide).
    assert r.cudaKernelNodeParamsV2().gridDim.y == (1 if pkg == "cubind" else 0)
    # A union's members are not constructed.
    assert r.cudaGraphNodeParams().kernel.gridDim.x == 0


def test_dim3_view_of_memory_is_not_reset():
    backing = (ctypes.c_uint * 3)(7, 8, 9)
    view = runtime.dim3(_ptr=ctypes.addressof(backing))
    assert (view.x, view.y, view.z) == (7, 8, 9)


# -- 12. pointer fields that share a count, and what nested views keep


def _read_u64s(address, n):
    return list((ctypes.c_uint64 * n).from_address(address)) if n else []


def test_batch_memcpy_dsts_and_srcs_are_set_together():
    p = driver.CUDA_MEMCPY_BATCH_NODE_PARAMS()
    assert p.dsts == [] and p.srcs == [] and p.count == 0
    p.set_dsts_srcs([0x1000, driver.CUdeviceptr(0x2000)], (0x3000, 0x4000))
    assert p.count == 2
    assert [int(d) for d in p.dsts] == [0x1000, 0x2000] and all(type(d) is driver.CUdeviceptr for d in p.dsts)
    assert [int(s) for s in p.srcs] == [0x3000, 0x4000]
    # The struct's memory: count, then the addresses of the two arrays it keeps.
    count, dsts, srcs = _read_u64s(p.getPtr(), 3)
    assert count == 2 and _read_u64s(dsts, 2) == [0x1000, 0x2000] and _read_u64s(srcs, 2) == [0x3000, 0x4000]
    assert "dsts : [<CUdeviceptr 4096>, <CUdeviceptr 8192>]" in str(p).splitlines()
    for field in ("dsts", "srcs"):
        with pytest.raises(AttributeError, match="set_dsts_srcs"):
            setattr(p, field, [1, 2])
    assert p.count == 2 and [int(d) for d in p.dsts] == [0x1000, 0x2000]
    # Refused values leave the fields as they were.
    with pytest.raises(ValueError, match="same length, got 1, 2"):
        p.set_dsts_srcs([1], [2, 3])
    with pytest.raises(OverflowError, match=r"srcs\[1\]"):
        p.set_dsts_srcs([1, 2], [3, -4])
    with pytest.raises(TypeError, match="dsts: expected a sequence of CUdeviceptr, got NoneType"):
        p.set_dsts_srcs(None, [])
    with pytest.raises(TypeError, match=r"srcs\[0\]"):
        p.set_dsts_srcs([1], ["a"])
    assert p.count == 2 and [int(s) for s in p.srcs] == [0x3000, 0x4000]
    # A count above what the struct holds reads only what it holds; one below reads that many.
    p.count = 5
    assert len(p.dsts) == 2
    p.count = 1
    assert [int(s) for s in p.srcs] == [0x3000]
    p.set_dsts_srcs([], [])
    assert p.count == 0 and p.dsts == [] and _read_u64s(p.getPtr(), 3) == [0, 0, 0]


def test_lists_written_through_a_nested_view_live_as_long_as_the_outer_struct():
    import gc
    params = driver.CUgraphNodeParams()
    params.memcpyBatch.set_dsts_srcs([7, 8], [9, 10])
    attrs = driver.CUmemcpyAttributes()
    attrs.flags = 3
    params.memcpyBatch.attrs = [attrs]
    del attrs
    gc.collect()
    batch = params.memcpyBatch
    assert [int(d) for d in batch.dsts] == [7, 8] and [int(s) for s in batch.srcs] == [9, 10]
    assert len(batch.attrs) == 1 and batch.attrs[0].flags == 3
    # Another nested struct's field of the same name is kept apart.
    cfg = driver.CUgraphNodeParams()
    cfg.memcpyBatch.attrs = [driver.CUmemcpyAttributes(flags=1), driver.CUmemcpyAttributes(flags=2)]
    assert [a.flags for a in cfg.memcpyBatch.attrs] == [1, 2] and batch.attrs[0].flags == 3
    # Setting NULL drops what was kept.
    params.memcpyBatch.attrs = []
    assert params.memcpyBatch.attrs == [] and params.memcpyBatch.dsts != []
