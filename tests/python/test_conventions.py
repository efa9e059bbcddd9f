"""API compatibility of cubind.bindings with NVIDIA's cuda.bindings, and the
calling conventions the design promises (enums, handles, value types, structs,
constants, .pyi stubs). No GPU needed.

Known incompatibilities are listed in KNOWN_* tables with the reason; a test
whose only failures are known ones is reported as xfail (so CI stays usable and
the list shows in `pytest -rx`), and one that finds anything else fails.
"""
import ast
import builtins
import ctypes
import enum
import gc
import os
import pickle
import re

import pytest

import _signatures as sig
from cubind.bindings import _support, driver, nvjitlink, nvrtc, runtime

cuda_bindings = pytest.importorskip("cuda.bindings", reason="cuda-bindings is not installed")
from cuda.bindings import driver as cuda_driver  # noqa: E402
from cuda.bindings import nvjitlink as cuda_nvjitlink  # noqa: E402
from cuda.bindings import nvrtc as cuda_nvrtc  # noqa: E402
from cuda.bindings import runtime as cuda_runtime  # noqa: E402

def _major_minor(version):
    return tuple(int(x) for x in str(version).split(".")[:2])


import cubind.bindings as _cubind_bindings  # noqa: E402

SAME_CUDA = _major_minor(cuda_bindings.__version__) == _major_minor(_cubind_bindings.__version__)
same_cuda_version = pytest.mark.skipif(
    not SAME_CUDA,
    reason=(f"cuda-bindings {cuda_bindings.__version__} is for another CUDA version than cubind.bindings "
            f"{_cubind_bindings.__version__}: name-by-name comparisons only hold between the same versions"))

PAIRS = {
    "driver": (driver, cuda_driver),
    "runtime": (runtime, cuda_runtime),
    "nvrtc": (nvrtc, cuda_nvrtc),
    "nvjitlink": (nvjitlink, cuda_nvjitlink),
}

# Names cuda.bindings exports that are not CUDA functions: no counterpart is expected.
EXCLUDED_FUNCTIONS = {
    "Optional": "typing.Optional re-exported by cuda.bindings' modules",
}

# CUDA functions of cuda.bindings that cubind does not have, with the reason (none at present).
KNOWN_MISSING_FUNCTIONS = {}

# Functions whose positional parameters differ from cuda.bindings (a call written
# for cuda.bindings fails or passes its arguments to the wrong parameters).
KNOWN_SIGNATURE_BUGS = {}

KNOWN_MISSING_ENUMS = {}
KNOWN_ENUM_MEMBER_BUGS = {}

# cuda.bindings' own helper classes, not CUDA types.
_CLASS_EXCLUDE = re.compile(r"^(anon_(struct|union)\d+|cudaBindings(Driver|Runtime)Global|Any|Optional|IntEnum|_\w+)$")
KNOWN_MISSING_CLASSES = {}


def report(problems, known, what):
    """Fails on unknown problems; xfails when every problem is a known one."""
    unknown = {k: v for k, v in problems.items() if k not in known}
    if unknown:
        lines = "\n".join(f"  {k}: {v}" for k, v in sorted(unknown.items()))
        pytest.fail(f"{len(unknown)} {what}:\n{lines}")
    if problems:
        by_reason = {}
        for k in sorted(problems):
            by_reason.setdefault(known[k], []).append(k)
        lines = "; ".join(f"{', '.join(names)}: {reason}" for reason, names in by_reason.items())
        pytest.xfail(f"known {what}: {lines}")


# ---------------------------------------------------------------------------
# Function names and positional parameters


@pytest.mark.parametrize("name", list(PAIRS))
@same_cuda_version
def test_every_cuda_bindings_function_exists(name):
    ours, theirs = PAIRS[name]
    our_funcs = sig.public_functions(ours)
    their_funcs = sig.public_functions(theirs)
    assert their_funcs, f"cuda.bindings.{name} lists no functions: nothing would be compared"
    missing = {}
    for fname in their_funcs:
        if fname in EXCLUDED_FUNCTIONS or fname in our_funcs:
            continue
        missing[fname] = f"cuda.bindings.{name}.{fname} has no counterpart in cubind.bindings.{name}"
    report(missing, KNOWN_MISSING_FUNCTIONS, "functions missing")


def _normalise(param):
    # cuda.bindings renames parameters that shadow Python names (len -> length,
    # type -> typename, bytes -> numbytes, format -> pformat, input -> input_);
    # nvjitlink uses snake_case.
    aliases = {"length": "len", "typename": "type", "numbytes": "bytes", "pformat": "format"}
    p = aliases.get(param, param).rstrip("_")
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), p).lower()


@pytest.mark.parametrize("name", list(PAIRS))
@same_cuda_version
def test_positional_parameters_match(name):
    """Every positional call that cuda.bindings accepts binds the same arguments in cubind."""
    ours, theirs = PAIRS[name]
    our_funcs = sig.public_functions(ours)
    problems = {}
    checked = 0
    for fname, theirs_func in sig.public_functions(theirs).items():
        if fname not in our_funcs:
            continue
        theirs_sig = sig.doc_signature(theirs_func)
        ours_sig = sig.doc_signature(our_funcs[fname])
        if theirs_sig is None or fname == "sizeof":  # sizeof: see test_sizeof_docstring_has_signature
            continue
        if ours_sig is None:
            problems[fname] = f"no signature on the first docstring line: {our_funcs[fname].__doc__!r:.80}"
            continue
        checked += 1
        t_total, t_req = len(theirs_sig), sum(not d for _, d in theirs_sig)
        o_total, o_req = len(ours_sig), sum(not d for _, d in ours_sig)
        if not (o_req <= t_req and t_total <= o_total):
            problems[fname] = (f"{t_total} positional parameters ({t_req} required) in cuda.bindings, "
                               f"{o_total} ({o_req} required) in cubind")
            continue
        t_names = [_normalise(n) for n, _ in theirs_sig]
        o_names = [_normalise(n) for n, _ in ours_sig[:t_total]]
        if sorted(t_names) == sorted(o_names) and t_names != o_names:
            problems[fname] = f"parameters reordered: cuda.bindings {t_names}, cubind {o_names}"
    assert checked > 0
    report(problems, KNOWN_SIGNATURE_BUGS, "signature incompatibilities")


def test_sizeof_docstring_has_signature():
    for module in (driver, runtime, nvrtc, nvjitlink):
        assert sig.doc_signature(module.sizeof) is not None, (
            f"{module.__name__}.sizeof: the first docstring line is {module.sizeof.__doc__.splitlines()[0]!r}, "
            "not its signature as for every other function")


@pytest.mark.parametrize("name", ["driver", "runtime", "nvrtc"])
def test_status_is_first_in_every_docstring_return(name):
    ours, _ = PAIRS[name]
    bad = []
    for fname, func in sig.public_functions(ours).items():
        # sizeof, and the header's inline helpers (make_cudaExtent) that return their struct alone.
        if fname == "sizeof" or fname.startswith("make_cuda"):
            continue
        doc = func.__doc__ or ""
        match = re.search(r"^\s*Returns: \((\w+)", doc, re.M)
        if not match or match.group(1) != "status":
            bad.append(fname)
    assert not bad, f"functions whose docstring does not say they return (status, ...): {bad[:20]}"


# ---------------------------------------------------------------------------
# Enums


def _is_their_enum(v):
    # enum.Enum classes (cuda-bindings 13.0) or FastEnum classes, int subclasses
    # with __members__ (13.5).
    return isinstance(v, type) and (issubclass(v, enum.Enum) or (issubclass(v, int) and hasattr(v, "__members__")))


def _their_enums(module):
    return {k: v for k, v in vars(module).items() if _is_their_enum(v) and v.__module__ == module.__name__}


@pytest.mark.parametrize("name", list(PAIRS))
@same_cuda_version
def test_enum_classes_and_members_match(name):
    ours, theirs = PAIRS[name]
    problems = {}
    known = dict(KNOWN_MISSING_ENUMS)
    their_enums = _their_enums(theirs)
    assert their_enums, f"cuda.bindings.{name} lists no enums: nothing would be compared"
    for ename, cls in their_enums.items():
        our_cls = getattr(ours, ename, None)
        if our_cls is None:
            problems[ename] = "missing"
            continue
        if not (isinstance(our_cls, type) and issubclass(our_cls, int)):
            problems[ename] = f"not an int subclass: {our_cls!r}"
            continue
        wrong = []
        for member_name, member in cls.__members__.items():
            value = getattr(our_cls, member_name, None)
            if value is None or int(value) != int(member.value):
                wrong.append(f"{member_name}={int(member.value)} (cubind: {value!r})")
        if wrong:
            key = f"{name}.{ename}"
            problems[key] = ", ".join(wrong[:4]) + (" ..." if len(wrong) > 4 else "")
            if key in KNOWN_ENUM_MEMBER_BUGS:
                known[key] = KNOWN_ENUM_MEMBER_BUGS[key]
    report(problems, known, "enum incompatibilities")


@pytest.mark.parametrize("name", list(PAIRS))
@same_cuda_version
def test_class_names_exist(name):
    ours, theirs = PAIRS[name]
    problems = {}
    checked = 0
    for cname, cls in vars(theirs).items():
        if not isinstance(cls, type) or _is_their_enum(cls) or _CLASS_EXCLUDE.match(cname):
            continue
        checked += 1
        if issubclass(cls, BaseException) and not hasattr(ours, cname):
            problems[cname] = "exception class missing"
        elif not hasattr(ours, cname):
            problems[cname] = "missing"
    assert checked > 0, f"cuda.bindings.{name} lists no classes: nothing would be compared"
    report(problems, KNOWN_MISSING_CLASSES, "classes missing")


@pytest.mark.parametrize("module", [driver, runtime, nvrtc, nvjitlink], ids=lambda m: m.__name__.split(".")[-1])
def test_enums_are_int_subclasses_with_singleton_members(module):
    enums = [getattr(module, n) for n in dir(module) if isinstance(getattr(module, n), type)
             and issubclass(getattr(module, n), _support.Enum)]
    assert enums
    for cls in enums:
        assert issubclass(cls, int)
        members = list(cls)
        assert len(members) == len(cls) > 0, cls
        for member in members:
            assert isinstance(member, cls) and isinstance(member, int)
            assert cls(int(member)) is member or int(cls(int(member))) == int(member)
            assert cls[member.name] == member
            assert member.value == int(member)
            assert member == int(member) and hash(member) == hash(int(member))


def test_status_enums_cache_members():
    assert driver.CUresult(0) is driver.CUresult.CUDA_SUCCESS
    assert driver.CUresult(1) is driver.CUresult.CUDA_ERROR_INVALID_VALUE
    assert runtime.cudaError_t(0) is runtime.cudaError_t.cudaSuccess
    assert nvrtc.nvrtcResult(0) is nvrtc.nvrtcResult.NVRTC_SUCCESS
    assert nvjitlink.Result(0) is nvjitlink.Result.NVJITLINK_SUCCESS
    assert driver.CUresult["CUDA_ERROR_OUT_OF_MEMORY"] is driver.CUresult.CUDA_ERROR_OUT_OF_MEMORY


def test_unknown_status_converts_without_raising():
    for cls in (driver.CUresult, runtime.cudaError_t, nvrtc.nvrtcResult, nvjitlink.Result):
        member = cls(987654)
        assert isinstance(member, cls) and int(member) == 987654
        assert cls(987654) is member, "an unknown value is cached too"
        assert "987654" in repr(member) and "987654" in member.name
        assert member != 0
    assert driver.CUresult(0) is driver.CUresult.CUDA_SUCCESS


def test_returned_status_is_the_cached_member():
    status = nvrtc.nvrtcVersion()[0]
    assert status is nvrtc.nvrtcResult.NVRTC_SUCCESS
    status = runtime.cudaRuntimeGetVersion()[0]
    assert status is runtime.cudaError_t.cudaSuccess
    status = nvrtc.nvrtcGetPTXSize(None)[0]
    assert status is nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM


def test_a_status_returned_alone_is_a_one_tuple_and_success_is_one_tuple():
    # Calls that return their status alone return (status,); success is the
    # one (SUCCESS,) tuple (tuples are immutable), and any other status a
    # tuple of its own member.
    results = []
    for source in (b'extern "C" __global__ void k() {}', b"this is not C++", b'extern "C" __global__ void j() {}'):
        err, prog = nvrtc.nvrtcCreateProgram(source, b"k.cu", 0, [], [])
        assert err is nvrtc.nvrtcResult.NVRTC_SUCCESS
        result = nvrtc.nvrtcCompileProgram(prog, 0, [])
        status, = result
        assert type(result) is tuple and len(result) == 1
        results.append(result)
        assert nvrtc.nvrtcDestroyProgram(prog) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
    assert results[0] == (nvrtc.nvrtcResult.NVRTC_SUCCESS,) and results[0][0] is nvrtc.nvrtcResult.NVRTC_SUCCESS
    assert results[1] == (nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION,)
    assert results[2] is results[0], "a success returns the same (SUCCESS,) tuple"
    # cuda.bindings returns the same shape and status for the same program.
    err, theirs = cuda_nvrtc.nvrtcCreateProgram(b"this is not C++", b"k.cu", 0, [], [])
    their_result = cuda_nvrtc.nvrtcCompileProgram(theirs, 0, [])
    assert type(their_result) is tuple and len(their_result) == 1
    assert int(their_result[0]) == int(results[1][0])
    cuda_nvrtc.nvrtcDestroyProgram(theirs)


def test_enum_conversions():
    member = driver.CUresult.CUDA_ERROR_INVALID_VALUE
    assert pickle.loads(pickle.dumps(member)) is member
    assert {0: "zero"}[driver.CUresult.CUDA_SUCCESS] == "zero"
    assert f"{member:d}" == "1"
    assert member.name == "CUDA_ERROR_INVALID_VALUE"
    assert "CUDA_ERROR_INVALID_VALUE" in repr(member)
    assert driver.CUresult.CUDA_SUCCESS in driver.CUresult
    assert "CUDA_SUCCESS" in driver.CUresult.__members__
    with pytest.raises(KeyError):
        driver.CUresult["NO_SUCH_MEMBER"]
    with pytest.raises(TypeError):
        driver.CUresult("CUDA_SUCCESS")
    with pytest.raises(TypeError):
        driver.CUresult(None)


def test_enum_rejects_float():
    with pytest.raises((TypeError, ValueError)):
        driver.CUresult(1.5)


def test_flag_enums_combine_as_ints():
    flags = driver.CUctx_flags.CU_CTX_SCHED_BLOCKING_SYNC | driver.CUctx_flags.CU_CTX_MAP_HOST
    assert flags == 4 | 8
    assert driver.CUmemorytype(2) is driver.CUmemorytype.CU_MEMORYTYPE_DEVICE


# ---------------------------------------------------------------------------
# Handles


def _handle_classes(module):
    return [getattr(module, n) for n in dir(module)
            if isinstance(getattr(module, n), type) and issubclass(getattr(module, n), _support.Handle)]


@pytest.mark.parametrize("module", [driver, runtime, nvrtc, nvjitlink], ids=lambda m: m.__name__.split(".")[-1])
def test_handles_behave(module):
    classes = _handle_classes(module)
    assert classes
    for cls in classes:
        null = cls()
        assert int(null) == 0 and not null
        assert cls(None) == null and int(cls(None)) == 0
        h = cls(0x1234)
        assert int(h) == 0x1234
        assert h.__index__() == 0x1234
        assert [0] * 3 != [] and list(range(0x1235))[h] == 0x1234
        assert h == cls(0x1234) and h != cls(0x1235)
        assert hash(h) == hash(cls(0x1234))
        assert len({h, cls(0x1234), cls(0x99)}) == 2
        assert f"{0x1234:#x}" in repr(h) and cls.__name__ in repr(h)
        # getPtr() is the address of the handle's storage.
        assert ctypes.c_void_p.from_address(h.getPtr()).value == 0x1234
        assert cls(h) == h
        # _ptr reads the handle stored at an address.
        slot = ctypes.c_void_p(0xABCD)
        assert int(cls(_ptr=ctypes.addressof(slot))) == 0xABCD
        assert pickle.loads(pickle.dumps(h)) == h
        with pytest.raises((OverflowError, ValueError)):
            cls(-1)
        with pytest.raises(OverflowError):
            cls(2**64)
        with pytest.raises((TypeError, ValueError)):
            cls(object())


def test_handles_of_different_types_differ():
    assert driver.CUstream(5) != driver.CUevent(5)
    assert hash(driver.CUstream(5)) != hash(driver.CUevent(5)) or driver.CUstream(5) != driver.CUevent(5)


def test_handle_equal_to_int_hashes_like_it():
    h = driver.CUstream(5)
    assert h == 5
    assert hash(h) == hash(5)


def test_custream_cuda_stream_protocol():
    s = driver.CUstream(0x1000)
    version, address = s.__cuda_stream__()
    assert version == 0 and address == 0x1000
    assert driver.CUstream(driver.CU_STREAM_LEGACY).__cuda_stream__() == (0, driver.CU_STREAM_LEGACY)


def test_handle_arguments_accept_int_none_and_handles():
    # nvrtc is loadable without a GPU: a NULL program in three spellings.
    invalid = nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM
    for prog in (None, 0, nvrtc.nvrtcProgram(0)):
        assert nvrtc.nvrtcGetPTXSize(prog) == (invalid, None)
    with pytest.raises(TypeError, match="nvrtcProgram"):
        nvrtc.nvrtcGetPTXSize(driver.CUstream(0))
    with pytest.raises(TypeError):
        nvrtc.nvrtcGetPTXSize(1.5)


# Runtime and driver handles for the same CUDA object, as cuda.bindings accepts them.
CROSS_API = [
    ("cudaStreamQuery", lambda: driver.CUstream(0)),
    ("cudaEventQuery", lambda: driver.CUevent(0)),
    ("cudaGraphDestroy", lambda: driver.CUgraph(0)),
]


@pytest.mark.parametrize("fname,make", CROSS_API, ids=[c[0] for c in CROSS_API])
def test_cuda_bindings_accepts_driver_handles_in_runtime(fname, make):
    # The reference behaviour, so the cubind test below checks the right thing.
    result = getattr(cuda_runtime, fname)(getattr(cuda_driver, type(make()).__name__)(0))
    assert isinstance(result, tuple)


@pytest.mark.parametrize("fname,make", CROSS_API, ids=[c[0] for c in CROSS_API])
def test_runtime_functions_accept_driver_handles(fname, make):
    result = getattr(runtime, fname)(make())
    assert isinstance(result, tuple) and isinstance(result[0], runtime.cudaError_t)


def test_driver_functions_accept_runtime_handles():
    try:
        result = driver.cuStreamQuery(runtime.cudaStream_t(0))
    except RuntimeError:
        return  # no driver on this machine: the argument was accepted
    assert isinstance(result, tuple) and isinstance(result[0], driver.CUresult)


# ---------------------------------------------------------------------------
# Value types (CUdeviceptr, CUdevice, ...)


def _value_classes(module):
    out = []
    for n in dir(module):
        cls = getattr(module, n)
        if (isinstance(cls, type) and not issubclass(cls, (_support.Handle, _support.Struct, int, BaseException))
                and hasattr(cls, "__index__") and hasattr(cls, "getPtr")):
            out.append(cls)
    return out


@pytest.mark.parametrize("module", [driver, runtime], ids=["driver", "runtime"])
def test_value_types_compare_hash_index_by_value(module):
    classes = _value_classes(module)
    assert classes
    for cls in classes:
        v = cls(7)
        assert int(v) == 7 and v.__index__() == 7
        assert v == 7 and v == cls(7) and v != cls(8)
        assert hash(v) == hash(7) == hash(cls(7))
        assert {cls(7): "x"}[7] == "x"
        assert pickle.loads(pickle.dumps(v)) == v
        assert cls(_ptr=v.getPtr()) == v
        assert cls.__name__ in repr(v) and "7" in repr(v)


def test_cudeviceptr():
    p = driver.CUdeviceptr(0x7000_0000_0000)
    assert int(p) == 0x7000_0000_0000
    assert p == 0x7000_0000_0000 and p == driver.CUdeviceptr(0x7000_0000_0000)
    assert hash(p) == hash(0x7000_0000_0000)
    assert driver.CUdeviceptr(1) < driver.CUdeviceptr(2)
    assert sorted([driver.CUdeviceptr(3), driver.CUdeviceptr(1), driver.CUdeviceptr(2)]) == [1, 2, 3]
    assert ctypes.c_uint64.from_address(p.getPtr()).value == 0x7000_0000_0000
    assert driver.sizeof(driver.CUdeviceptr) == 8 and driver.sizeof(p) == 8
    assert driver.CUdeviceptr(driver.CUdeviceptr(5)) == 5
    assert driver.CUdeviceptr(2**64 - 1) == 2**64 - 1
    with pytest.raises(OverflowError):
        driver.CUdeviceptr(2**64)
    with pytest.raises(OverflowError):
        driver.CUdeviceptr(-1)
    with pytest.raises(TypeError):
        driver.CUdeviceptr("5")


def test_cudeviceptr_orders_fully():
    p = driver.CUdeviceptr(5)
    assert p > 4 and p >= 5 and p <= 5 and 4 < p
    assert driver.CUdeviceptr(6) > driver.CUdeviceptr(5)


def test_cudevice():
    dev = driver.CUdevice(3)
    assert int(dev) == 3 and dev == 3 and hash(dev) == hash(3)
    assert driver.sizeof(driver.CUdevice) == 4
    assert ctypes.c_int.from_address(dev.getPtr()).value == 3
    with pytest.raises(OverflowError):
        driver.CUdevice(2**40)


# ---------------------------------------------------------------------------
# Structs


class CtypesMemcpy2D(ctypes.Structure):
    _fields_ = [
        ("srcXInBytes", ctypes.c_size_t), ("srcY", ctypes.c_size_t), ("srcMemoryType", ctypes.c_int),
        ("srcHost", ctypes.c_void_p), ("srcDevice", ctypes.c_uint64), ("srcArray", ctypes.c_void_p),
        ("srcPitch", ctypes.c_size_t),
        ("dstXInBytes", ctypes.c_size_t), ("dstY", ctypes.c_size_t), ("dstMemoryType", ctypes.c_int),
        ("dstHost", ctypes.c_void_p), ("dstDevice", ctypes.c_uint64), ("dstArray", ctypes.c_void_p),
        ("dstPitch", ctypes.c_size_t),
        ("WidthInBytes", ctypes.c_size_t), ("Height", ctypes.c_size_t),
    ]


class CtypesMemLocation(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class CtypesMemPoolProps(ctypes.Structure):
    _fields_ = [("allocType", ctypes.c_int), ("handleTypes", ctypes.c_int), ("location", CtypesMemLocation),
                ("win32SecurityAttributes", ctypes.c_void_p), ("maxSize", ctypes.c_size_t),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 54)]


class CtypesLaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p), ("attrs", ctypes.c_void_p),
                ("numAttrs", ctypes.c_uint)]


class CtypesDim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class CtypesExtent(ctypes.Structure):
    _fields_ = [("width", ctypes.c_size_t), ("height", ctypes.c_size_t), ("depth", ctypes.c_size_t)]


CTYPES_LAYOUTS = [
    (driver, "CUDA_MEMCPY2D", CtypesMemcpy2D),
    (driver, "CUmemLocation", CtypesMemLocation),
    (driver, "CUmemPoolProps", CtypesMemPoolProps),
    (driver, "CUlaunchConfig", CtypesLaunchConfig),
    (driver, "CUuuid", ctypes.c_char * 16),
    (runtime, "dim3", CtypesDim3),
    (runtime, "cudaExtent", CtypesExtent),
]


@pytest.mark.parametrize("module,name,layout", CTYPES_LAYOUTS, ids=[c[1] for c in CTYPES_LAYOUTS])
def test_sizeof_equals_ctypes(module, name, layout):
    cls = getattr(module, name)
    assert module.sizeof(cls) == ctypes.sizeof(layout)
    assert module.sizeof(cls()) == ctypes.sizeof(layout)


@same_cuda_version
@pytest.mark.parametrize("name", ["driver", "runtime"])
def test_sizeof_equals_cuda_bindings(name):
    ours, theirs = PAIRS[name]
    checked = 0
    wrong = []
    for cname in dir(ours):
        cls = getattr(ours, cname)
        if not isinstance(cls, type) or issubclass(cls, int) or not hasattr(theirs, cname):
            continue
        try:
            expected = theirs.sizeof(getattr(theirs, cname))
        except Exception:
            continue
        checked += 1
        if ours.sizeof(cls) != expected:
            wrong.append((cname, ours.sizeof(cls), expected))
    assert checked > 50
    assert not wrong


def test_sizeof_rejects_other_types():
    with pytest.raises(TypeError):
        driver.sizeof(int)
    with pytest.raises(TypeError):
        driver.sizeof(runtime.dim3)


def test_struct_fields_and_keyword_construction():
    m = driver.CUDA_MEMCPY2D(srcXInBytes=1, srcY=2, srcMemoryType=driver.CUmemorytype.CU_MEMORYTYPE_HOST,
                             WidthInBytes=64, Height=4, dstDevice=driver.CUdeviceptr(0x2000))
    assert m.srcXInBytes == 1 and m.srcY == 2 and m.WidthInBytes == 64 and m.Height == 4
    assert m.srcMemoryType is driver.CUmemorytype.CU_MEMORYTYPE_HOST
    assert isinstance(m.dstDevice, driver.CUdeviceptr) and m.dstDevice == 0x2000
    assert m.dstPitch == 0, "unset fields are zero"
    m.dstMemoryType = 2
    assert m.dstMemoryType is driver.CUmemorytype.CU_MEMORYTYPE_DEVICE
    m.srcArray = driver.CUarray(0x77)
    assert isinstance(m.srcArray, driver.CUarray) and int(m.srcArray) == 0x77
    m.dstDevice = 0x3000
    assert m.dstDevice == driver.CUdeviceptr(0x3000)
    assert "WidthInBytes : 64" in repr(m).splitlines()
    with pytest.raises((AttributeError, TypeError)):
        driver.CUDA_MEMCPY2D(noSuchField=1)
    with pytest.raises(AttributeError):
        m.noSuchField = 1
    with pytest.raises(TypeError):
        m.srcY = "two"
    with pytest.raises(OverflowError):
        m.srcY = -1


def test_struct_matches_ctypes_layout():
    m = driver.CUDA_MEMCPY2D()
    host = bytearray(32)
    m.srcXInBytes, m.srcY, m.srcMemoryType = 1, 2, driver.CUmemorytype.CU_MEMORYTYPE_HOST
    m.srcHost = host
    m.srcDevice, m.srcArray, m.srcPitch = 0x1111, driver.CUarray(0x2222), 3
    m.dstXInBytes, m.dstY, m.dstMemoryType = 4, 5, driver.CUmemorytype.CU_MEMORYTYPE_DEVICE
    m.dstHost, m.dstDevice, m.dstArray, m.dstPitch = 0x3333, 0x4444, 0x5555, 6
    m.WidthInBytes, m.Height = 7, 8
    c = CtypesMemcpy2D.from_address(m.getPtr())
    host_address = ctypes.addressof((ctypes.c_char * 32).from_buffer(host))
    assert (c.srcXInBytes, c.srcY, c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, c.srcPitch) == \
        (1, 2, 1, host_address, 0x1111, 0x2222, 3)
    assert (c.dstXInBytes, c.dstY, c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, c.dstPitch) == \
        (4, 5, 2, 0x3333, 0x4444, 0x5555, 6)
    assert (c.WidthInBytes, c.Height) == (7, 8)
    assert m.srcHost == host_address


def test_struct_pointer_field_keeps_buffer_alive():
    m = driver.CUDA_MEMCPY2D()
    m.srcHost = bytearray(b"kept alive" * 100)
    gc.collect()
    assert ctypes.string_at(m.srcHost, 10) == b"kept alive"


def test_refused_pointer_field_value_leaves_the_field_and_its_buffer_as_they_were():
    m = driver.CUDA_MEMCPY2D()
    data = bytearray(b"kept alive" * 100)
    m.srcHost = data
    address = m.srcHost
    with pytest.raises(TypeError, match="srcHost"):
        m.srcHost = -1
    gc.collect()
    assert m.srcHost == address
    # Still exported to the struct: it cannot be resized under the pointer.
    with pytest.raises(BufferError):
        data.extend(b"x")
    assert ctypes.string_at(m.srcHost, 10) == b"kept alive"

    config = driver.CUlaunchConfig()
    config.attrs = [driver.CUlaunchAttribute(id=driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE)]
    attrs = [a.getPtr() for a in config.attrs]
    with pytest.raises(TypeError, match="attrs"):
        config.attrs = driver.CUmemLocation()
    assert [a.getPtr() for a in config.attrs] == attrs

    params = driver.CUDA_KERNEL_NODE_PARAMS()
    params.kernelParams = ((7,), (ctypes.c_int,))
    pointer = params.kernelParams
    with pytest.raises(OverflowError, match="kernelParams"):
        params.kernelParams = -1
    gc.collect()
    assert params.kernelParams == pointer
    first = ctypes.c_void_p.from_address(pointer).value
    assert ctypes.c_int.from_address(first).value == 7


def test_struct_view_of_external_memory():
    size = driver.sizeof(driver.CUmemPoolProps)
    backing = bytearray(size)
    address = ctypes.addressof((ctypes.c_char * size).from_buffer(backing))
    view = driver.CUmemPoolProps(_ptr=address)
    assert view.getPtr() == address
    view.allocType = driver.CUmemAllocationType.CU_MEM_ALLOCATION_TYPE_PINNED
    view.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    view.location.id = 0x01020304
    view.maxSize = 1 << 30
    c = CtypesMemPoolProps.from_buffer(backing)
    assert c.allocType == 1 and c.location.type == 1 and c.location.id == 0x01020304 and c.maxSize == 1 << 30
    # And the other way: writes to the memory show in the view.
    c.usage = 9
    assert view.usage == 9
    # Positional _ptr as in cuda.bindings.
    assert driver.CUmemPoolProps(address).location.id == 0x01020304


def test_nested_structs_write_through():
    props = driver.CUmemPoolProps()
    location = props.location
    location.id = 5
    assert props.location.id == 5
    props.location.type = driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    assert location.type is driver.CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE
    c = CtypesMemPoolProps.from_address(props.getPtr())
    assert (c.location.type, c.location.id) == (1, 5)
    # Assigning a whole struct copies it in.
    props.location = driver.CUmemLocation(type=1, id=7)
    assert props.location.id == 7
    # A nested view keeps its parent alive.
    orphan = driver.CUmemPoolProps().location
    gc.collect()
    orphan.id = 11
    assert orphan.id == 11
    # Unions nested in structs.
    attr = driver.CUlaunchAttribute()
    attr.value.clusterDim.x = 4
    attr.value.clusterDim.y = 2
    assert attr.value.clusterDim.x == 4 and attr.value.clusterDim.y == 2
    assert ctypes.c_uint.from_address(attr.value.getPtr()).value == 4


def test_array_fields_write_through():
    # char arrays read as bytes (as in cuda.bindings) and are written by assignment.
    uuid = driver.CUuuid()
    assert uuid.bytes == bytes(16)
    value = bytes(range(1, 17))
    uuid.bytes = value
    assert uuid.bytes == value
    assert ctypes.string_at(uuid.getPtr(), 16) == value
    with pytest.raises(ValueError):
        uuid.bytes = bytes(17)
    prop = runtime.cudaDeviceProp()
    prop.maxThreadsDim = [1024, 512, 64]
    assert list(prop.maxThreadsDim) == [1024, 512, 64]
    prop.maxThreadsDim[2] = 32
    assert list(prop.maxThreadsDim) == [1024, 512, 32]
    with pytest.raises(ValueError):
        prop.maxThreadsDim = [1, 2]


def test_char_array_fields_read_like_bytes():
    uuid = driver.CUuuid()
    value = bytes(range(240, 256))
    uuid.bytes = value
    assert uuid.bytes == value
    assert list(uuid.bytes) == list(value)
    prop = runtime.cudaDeviceProp()
    prop.name = b"Device"
    assert prop.name.decode() == "Device"


def test_kernel_node_params_accept_values_and_types():
    params = driver.CUDA_KERNEL_NODE_PARAMS()
    params.kernelParams = ((driver.CUdeviceptr(0x1000), 5), (None, ctypes.c_int))
    argv = (ctypes.c_void_p * 2).from_address(params.kernelParams)
    assert ctypes.c_uint64.from_address(argv[0]).value == 0x1000
    assert ctypes.c_int.from_address(argv[1]).value == 5


def test_launch_config_attrs_from_one_struct():
    config = driver.CUlaunchConfig(gridDimX=1, gridDimY=1, gridDimZ=1, blockDimX=32, blockDimY=1, blockDimZ=1)
    attr = driver.CUlaunchAttribute()
    attr.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
    attr.value.cooperative = 1
    config.attrs = attr
    config.numAttrs = 1
    # Read back as cuda.bindings reads it: a list, here of one copy of the attribute.
    assert len(config.attrs) == 1 and config.attrs[0].getPtr() != attr.getPtr()
    address = config.attrs[0].getPtr()
    del attr
    gc.collect()
    # The config keeps its copy alive.
    assert ctypes.c_int.from_address(address).value == int(driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE)
    assert config.attrs[0].value.cooperative == 1


def test_launch_config_attrs_from_a_list():
    config = driver.CUlaunchConfig()
    attrs = [driver.CUlaunchAttribute(), driver.CUlaunchAttribute()]
    attrs[0].id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
    attrs[1].id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PRIORITY
    config.attrs = attrs
    config.numAttrs = 2
    size = driver.sizeof(driver.CUlaunchAttribute)
    first = config.attrs[0].getPtr()
    assert ctypes.c_int.from_address(first + size).value == int(attrs[1].id)
    assert [a.id for a in config.attrs] == [a.id for a in attrs]


def test_kernel_node_params_accept_address():
    params = driver.CUDA_KERNEL_NODE_PARAMS(gridDimX=2, blockDimX=32)
    argv = (ctypes.c_void_p * 1)()
    params.kernelParams = ctypes.addressof(argv)
    assert params.kernelParams == ctypes.addressof(argv)
    params.func = driver.CUfunction(0x10)
    assert params.func == driver.CUfunction(0x10)


def test_struct_handle_and_enum_fields_in_runtime():
    attrs = runtime.cudaPointerAttributes()
    assert attrs.type is runtime.cudaMemoryType.cudaMemoryTypeUnregistered
    attrs.type = runtime.cudaMemoryType.cudaMemoryTypeDevice
    assert attrs.type == 2
    d3 = runtime.dim3(x=4, y=2, z=1)
    assert (d3.x, d3.y, d3.z) == (4, 2, 1)


# ---------------------------------------------------------------------------
# Constants


@pytest.mark.parametrize("name", ["driver", "runtime"])
@same_cuda_version
def test_constants_equal_cuda_bindings(name):
    ours, theirs = PAIRS[name]
    constants = {k: v for k, v in vars(theirs).items()
                 if not k.startswith("_") and type(v) in (int, float)}
    assert len(constants) > 20
    missing = {k: "missing" for k in constants if not hasattr(ours, k)}
    # cuda.bindings reads `#define CUDA_EGL_INFINITE_TIMEOUT 0xFFFFFFFF` as -1; in C it is
    # the unsigned int 4294967295, the timeout argument's type, and cubind keeps the C value.
    c_values = {"CUDA_EGL_INFINITE_TIMEOUT": 0xFFFFFFFF}
    wrong = {k: f"{getattr(ours, k)!r} != {v!r}" for k, v in constants.items()
             if hasattr(ours, k) and getattr(ours, k) != c_values.get(k, v)}
    assert not wrong
    report(missing, {}, "constants missing")


def test_named_constants():
    assert driver.CUDA_VERSION >= 13000
    if SAME_CUDA:
        assert driver.CUDA_VERSION == cuda_driver.CUDA_VERSION
    assert driver.CU_LAUNCH_PARAM_END == cuda_driver.CU_LAUNCH_PARAM_END
    assert driver.CU_LAUNCH_PARAM_BUFFER_POINTER == cuda_driver.CU_LAUNCH_PARAM_BUFFER_POINTER
    assert driver.CU_LAUNCH_PARAM_BUFFER_SIZE == cuda_driver.CU_LAUNCH_PARAM_BUFFER_SIZE
    assert driver.CU_STREAM_LEGACY == cuda_driver.CU_STREAM_LEGACY == 1
    assert driver.CU_STREAM_PER_THREAD == cuda_driver.CU_STREAM_PER_THREAD == 2
    assert runtime.cudaStreamLegacy == cuda_runtime.cudaStreamLegacy
    assert runtime.cudaStreamPerThread == cuda_runtime.cudaStreamPerThread


def test_version_string():
    import cubind.bindings
    major_minor = f"{driver.CUDA_VERSION // 1000}.{driver.CUDA_VERSION % 1000 // 10}"
    assert cubind.bindings.__version__.startswith(major_minor + ".")


# ---------------------------------------------------------------------------
# .pyi stubs


@pytest.mark.parametrize("name", sig.MODULES)
def test_stub_exists_and_parses(name):
    path = sig.stub_path(name)
    assert os.path.exists(path), path
    tree = sig.stub_tree(name)
    assert any(isinstance(n, ast.FunctionDef) for n in tree.body)


@pytest.mark.parametrize("name", sig.MODULES)
def test_every_public_function_and_class_is_in_the_stub(name):
    module = sig.load(name)
    tree = sig.stub_tree(name)
    stub_names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stub_names.add(node.name)
        elif isinstance(node, ast.Assign):
            stub_names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            stub_names.add(node.target.id)
    public = {n for n in dir(module) if not n.startswith("_")}
    missing_funcs = sorted(n for n in sig.public_functions(module) if n not in stub_names)
    assert not missing_funcs, f"functions of cubind.bindings.{name} missing from {name}.pyi: {missing_funcs}"
    missing_classes = sorted(n for n in public if isinstance(getattr(module, n), type) and n not in stub_names)
    assert not missing_classes, f"classes missing from {name}.pyi: {missing_classes[:20]}"
    stub_only = sorted(n for n in stub_names - public if n != "Buffer")
    assert not stub_only, f"{name}.pyi declares names the module lacks: {stub_only[:20]}"


@pytest.mark.parametrize("name", sig.MODULES)
def test_every_def_of_the_pyx_is_in_the_stub(name):
    here = os.path.dirname(os.path.abspath(__file__))
    pyx = os.path.join(here, "..", "..", "bindings", "python", "cubind", "bindings", f"{name}.pyx")
    if not os.path.exists(pyx):
        pytest.skip(f"{pyx} is not in this checkout")
    with open(pyx) as f:
        defs = set(re.findall(r"^def ([A-Za-z]\w*)\(", f.read(), re.M))
    stub = set(sig.stub_functions(name))
    assert defs, pyx
    assert not sorted(defs - stub), f"defined in {name}.pyx but not in {name}.pyi: {sorted(defs - stub)}"


@pytest.mark.parametrize("name", sig.MODULES)
def test_stub_signatures_match_the_module(name):
    module = sig.load(name)
    wrong = []
    for fname, params in sig.stub_functions(name).items():
        func = getattr(module, fname)
        doc = sig.doc_signature(func)
        if doc is None:
            continue
        if [(p, d) for p, _, d in params] != doc:
            wrong.append(f"{fname}: stub {[(p, d) for p, _, d in params]} vs module {doc}")
    assert not wrong, "\n".join(wrong[:20])


@pytest.mark.parametrize("name", sig.MODULES)
def test_stub_annotations_name_defined_types(name):
    tree = sig.stub_tree(name)
    defined = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            defined.add(node.name)
        elif isinstance(node, ast.ImportFrom):
            defined.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
    undefined = {}
    for node in ast.walk(tree):
        annotations = []
        if isinstance(node, ast.FunctionDef):
            annotations = [a.annotation for a in node.args.args + node.args.kwonlyargs if a.annotation]
            annotations += [node.returns] if node.returns is not None else []
        elif isinstance(node, ast.AnnAssign):
            annotations = [node.annotation]
        for ann in annotations:
            for n in ast.walk(ann):
                if isinstance(n, ast.Name) and n.id not in defined:
                    undefined.setdefault(n.id, []).append(getattr(node, "name", "<attribute>"))
    problems = {k: f"used by {sorted(set(v))[:5]}" for k, v in undefined.items()}
    report(problems, {}, "undefined names in stub annotations")


KNOWN_UNDOCUMENTED = {
    "cudaGetExportTable": "undocumented in the header (\\cond impl_private)",
}


@pytest.mark.parametrize("name", sig.MODULES)
def test_stub_documents_functions(name):
    tree = sig.stub_tree(name)
    undocumented = {n.name: "no docstring in the stub" for n in tree.body
                    if isinstance(n, ast.FunctionDef) and n.name != "sizeof" and not ast.get_docstring(n)}
    report(undocumented, KNOWN_UNDOCUMENTED, "functions without the header documentation")
