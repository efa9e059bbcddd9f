"""Functions that tell their signature, with cuda.bindings' parameter names, and
the module helpers cuda.bindings offers beyond the headers. No GPU needed.

The module functions stay plain builtins (the fastest kind to call); the
signature comes from their __text_signature__, which inspect.signature reads.
The tests that compare with NVIDIA's cuda.bindings skip where it is not
installed; the others stand alone.
"""
import inspect
import pydoc

import pytest
from conftest import needs_same_cuda_reference

import _signatures as sig
from cubind.bindings import driver, nvjitlink, nvrtc, runtime

MODULES = {"driver": driver, "runtime": runtime, "nvrtc": nvrtc, "nvjitlink": nvjitlink}

SOURCE = b'extern "C" __global__ void k(int* p) { *p = 1; }\n'


def _names(func):
    return [p.name for p in inspect.signature(func).parameters.values()]


def _all_functions():
    return [(m, n, f) for m, mod in MODULES.items() for n, f in sorted(sig.public_functions(mod).items())]


# ---------------------------------------------------------------------------
# Every function tells its signature


@pytest.mark.parametrize("module", list(MODULES))
def test_every_function_has_a_signature_matching_its_stub(module):
    stubs = sig.stub_functions(module)
    functions = sig.public_functions(MODULES[module])
    assert len(functions) > 5
    wrong = []
    for name, func in functions.items():
        try:
            params = inspect.signature(func).parameters.values()
        except (ValueError, TypeError) as exc:
            wrong.append(f"{name}: {exc}")
            continue
        got = [(p.name, p.default is not p.empty) for p in params]
        if name in stubs:
            want = [(p, d) for p, _, d in stubs[name]]
            if got != want:
                wrong.append(f"{name}: signature {got}, stub {want}")
        # Everything a call written either way binds: positional or keyword.
        if any(p.kind not in (p.POSITIONAL_OR_KEYWORD,) for p in params):
            wrong.append(f"{name}: {[str(p.kind) for p in params]}")
    assert not wrong, "\n".join(wrong[:20])


def test_the_functions_stay_plain_builtins():
    # The speed of a call: builtins skip the bound-function layer that
    # Cython's binding=True functions add.
    for func in (driver.cuDeviceGet, driver.cuCtxGetCurrent, runtime.cudaGetDeviceCount, nvrtc.nvrtcVersion,
                 nvjitlink.version):
        assert type(func).__name__ == "builtin_function_or_method", func
        assert func.__text_signature__ is not None, func


def test_signatures_and_defaults():
    assert str(inspect.signature(driver.cuMemAlloc)) == "(bytesize)"
    assert str(inspect.signature(driver.cuDeviceGet)) == "(ordinal)"
    assert str(inspect.signature(driver.cuCtxGetCurrent)) == "()"
    assert _names(nvrtc.nvrtcCreateProgram) == ["src", "name", "numHeaders", "headers", "includeNames"]
    # An optional caller buffer defaults to None.
    p = inspect.signature(nvrtc.nvrtcGetPTX).parameters
    assert list(p) == ["prog", "ptx"] and p["ptx"].default is None
    # The bound form of a call, as functools and IDEs use it.
    bound = inspect.signature(driver.cuMemcpyHtoD).bind(1, b"abc", 3)
    assert bound.arguments == {"dstDevice": 1, "srcHost": b"abc", "ByteCount": 3}


# (module, function) -> parameter names, where cubind once named a parameter
# differently from cuda.bindings: builtins it would shadow, and nvjitlink's snake_case.
RENAMED = {
    ("driver", "cuMemGetMemPool"): ["location", "typename"],
    ("driver", "cuMemSetMemPool"): ["location", "typename", "pool"],
    ("driver", "cuDeviceGetDevResource"): ["device", "typename"],
    ("driver", "cuCtxGetExecAffinity"): ["typename"],
    ("driver", "cuLinkAddData"): ["state", "typename", "data", "size", "name", "numOptions", "options",
                                  "optionValues"],
    ("driver", "cuDeviceGetName"): ["length", "dev"],
    ("driver", "cuDeviceGetPCIBusId"): ["length", "dev"],
    ("driver", "cuDeviceGetTexture1DLinearMaxWidth"): ["pformat", "numChannels", "dev"],
    ("driver", "cuFuncSetSharedSize"): ["hfunc", "numbytes"],
    ("driver", "cuTexRefSetAddress"): ["hTexRef", "dptr", "numbytes"],
    ("driver", "cuUserObjectRetain"): ["object", "count"],
    ("driver", "cuGraphRetainUserObject"): ["graph", "object", "count", "flags"],
    ("driver", "cuDevSmResourceSplitByCount"): ["nbGroups", "input_", "flags", "minCount"],
    ("runtime", "cudaDeviceGetPCIBusId"): ["length", "device"],
    ("runtime", "cudaMemGetMemPool"): ["location", "typename"],
    ("runtime", "cudaUserObjectRelease"): ["object", "count"],
    ("nvjitlink", "create"): ["num_options", "options"],
    ("nvjitlink", "add_data"): ["handle", "input_type", "data", "size", "name"],
    ("nvjitlink", "add_file"): ["handle", "input_type", "file_name"],
}


@pytest.mark.parametrize("module,name", list(RENAMED))
def test_parameter_names_as_cuda_bindings_spells_them(module, name):
    assert _names(getattr(MODULES[module], name)) == RENAMED[(module, name)]


def test_no_parameter_shadows_a_builtin_the_body_uses():
    # A parameter called `type` hid type() from the generated body
    # ('CUdevResourceType' object is not callable).
    shadowing = {"type", "len", "format", "bytes", "input"}
    bad = [f"{m}.{n}: {p}" for m, n, f in _all_functions() for p in _names(f) if p in shadowing]
    assert not bad, bad


def test_keyword_calls_written_for_cuda_bindings():
    err, prog = nvrtc.nvrtcCreateProgram(src=SOURCE, name=b"k.cu", numHeaders=0, headers=[], includeNames=[])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    try:
        err, = nvrtc.nvrtcCompileProgram(prog=prog, numOptions=1, options=[b"-arch=sm_80"])
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
        err, size = nvrtc.nvrtcGetPTXSize(prog=prog)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS and size > 0
        err, ptx = nvrtc.nvrtcGetPTX(prog=prog)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS and b".entry k" in ptx
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    handle = nvjitlink.create(num_options=1, options=["-arch=sm_80"])
    try:
        nvjitlink.add_data(handle, input_type=nvjitlink.InputType.PTX, data=ptx, size=len(ptx), name="k.ptx")
        nvjitlink.complete(handle)
        assert nvjitlink.get_linked_cubin_size(handle) > 0
    finally:
        nvjitlink.destroy(handle)
    with pytest.raises(TypeError, match="numOptions"):
        nvjitlink.create(numOptions=1, options=["-arch=sm_80"])


def test_keyword_calls_reach_the_driver():
    # Without a driver the calls stop at loading it; with one they run. Either
    # way the keywords bind, and the renamed `typename` no longer hides type().
    for call in (lambda: driver.cuMemAlloc(bytesize=1024),
                 lambda: driver.cuDeviceGetDevResource(device=0,
                                                       typename=driver.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM),
                 lambda: driver.cuDeviceGetName(length=64, dev=0)):
        try:
            result = call()
        except TypeError as exc:
            pytest.fail(f"a keyword call was refused: {exc}")
        except Exception:  # the driver's absence, reported by the loader
            continue
        assert isinstance(result, tuple) and isinstance(result[0], driver.CUresult)


# ---------------------------------------------------------------------------
# Methods and help()


def test_methods_tell_their_signature():
    for obj in (driver.CUDA_MEMCPY2D(), driver.CUstream(), driver.CUdeviceptr(5), runtime.cudaDeviceProp(),
                runtime.dim3()):
        assert list(inspect.signature(obj.getPtr).parameters) == [], type(obj)
    assert list(inspect.signature(driver.CUdeviceptr.getPtr).parameters) == ["self"]
    assert list(inspect.signature(driver.sizeof).parameters) == ["objType"]


@pytest.mark.parametrize("module", list(MODULES))
def test_every_method_tells_its_signature(module):
    mod = MODULES[module]
    checked, bad = 0, []
    for name in dir(mod):
        cls = getattr(mod, name)
        if name.startswith("_") or not isinstance(cls, type):
            continue
        for attr in dir(cls):
            if attr.startswith("_") and attr not in ("__init__", "__cuda_stream__"):
                continue
            # Where the method is defined: int's and Exception's own are CPython's.
            owner = next((k for k in cls.__mro__ if attr in vars(k)), None)
            if owner is None or owner.__module__ == "builtins":
                continue
            method = getattr(cls, attr)
            if not callable(method) or isinstance(method, type):
                continue
            checked += 1
            try:
                inspect.signature(method)
            except (ValueError, TypeError) as exc:
                bad.append(f"{name}.{attr}: {exc}")
    assert checked >= 2
    assert not bad, bad[:20]


def test_help_shows_the_signature_and_the_header_documentation():
    text = pydoc.render_doc(driver.cuMemAlloc, renderer=pydoc.plaintext)
    assert "cuMemAlloc(bytesize)" in text
    assert "Allocates device memory" in text
    assert "Returns: (status, dptr)" in text
    # The docstring's own first line carries the annotations the stub has.
    assert driver.cuMemAlloc.__doc__.splitlines()[0] == "cuMemAlloc(bytesize: int)"
    assert inspect.getdoc(driver.cuMemAlloc).startswith("cuMemAlloc(bytesize: int)")


# ---------------------------------------------------------------------------
# Helpers beyond the headers


def test_get_local_runtime_version():
    assert "getLocalRuntimeVersion" in dir(runtime)
    assert str(inspect.signature(runtime.getLocalRuntimeVersion)) == "()"
    assert runtime.getLocalRuntimeVersion() == runtime.cudaRuntimeGetVersion()
    err, version = runtime.getLocalRuntimeVersion()
    assert isinstance(err, runtime.cudaError_t)
    if err == runtime.cudaError_t.cudaSuccess:
        assert version >= 13000
    else:
        assert version is None
    assert "getLocalRuntimeVersion" in sig.stub_functions("runtime")


# ---------------------------------------------------------------------------
# Against NVIDIA's cuda.bindings, where installed

# Differences in the parameter lists that belong to other work: cuda.bindings
# derives the size from the attribute; cubind's nvrtcGetSupportedArchs takes an
# optional buffer (a deliberate extra).
NOT_NAMES = {
    "driver.cuCoredumpGetAttribute", "driver.cuCoredumpGetAttributeGlobal", "driver.cuCoredumpSetAttribute",
    "driver.cuCoredumpSetAttributeGlobal",
}


@needs_same_cuda_reference
@pytest.mark.parametrize("module", list(MODULES))
def test_parameter_names_equal_cuda_bindings(module):
    import importlib
    theirs = importlib.import_module(f"cuda.bindings.{module}")
    ours = sig.public_functions(MODULES[module])
    compared = 0
    wrong = []
    for name, their_func in sig.public_functions(theirs).items():
        if name not in ours or f"{module}.{name}" in NOT_NAMES:
            continue
        try:
            their_params = list(inspect.signature(their_func).parameters.values())
        except (ValueError, TypeError):
            continue
        our_params = list(inspect.signature(ours[name]).parameters.values())
        compared += 1
        their_names = [p.name for p in their_params]
        our_names = [p.name for p in our_params]
        # cuda.bindings' parameters, in its order; a trailing extra of cubind's must be optional.
        extras = our_params[len(their_params):]
        if our_names[:len(their_names)] != their_names or any(p.default is p.empty for p in extras):
            wrong.append(f"{name}: cubind {our_names}, cuda.bindings {their_names}")
    assert compared > (5 if module in ("nvrtc", "nvjitlink") else 300)
    assert not wrong, "\n".join(wrong)


@needs_same_cuda_reference
@pytest.mark.parametrize("module", list(MODULES))
def test_every_public_cuda_bindings_function_exists(module):
    import importlib
    theirs = importlib.import_module(f"cuda.bindings.{module}")
    ours = MODULES[module]
    missing = [n for n, f in sig.public_functions(theirs).items()
               if getattr(f, "__module__", None) != "typing" and not hasattr(ours, n)]
    assert not missing, missing
