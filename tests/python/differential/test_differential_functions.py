"""Differential suite, functions: the same parameters (names, order, defaults) in
cubind.bindings and cuda.bindings 13.0, a signature that inspect can read, and,
for calls that run without a GPU, the same outcome: the same exception type, or
a tuple of the same length whose items have the same types (the status with the
same value).

Without libcuda.so.1 every driver call stops at loading the driver; the call
cases of the driver therefore compare how arguments convert before that, and
the runtime's ones its error path (cudaErrorInsufficientDriver and no outputs).
Where libcuda.so.1 loads, those cases skip: their arguments would reach a device.
NVRTC and nvJitLink run for real, on a program and a link handle made by each
package, and buffers are passed the way cuda.bindings programs pass them: a
`bytes` object of the size the matching ...Size function returned.
"""
import inspect
import re

import pytest

cuda_bindings = pytest.importorskip("cuda.bindings", reason="cuda-bindings is not installed")

import _diff  # noqa: E402
from conftest import DRIVER_PRESENT  # noqa: E402

if _diff.version_mismatch():
    pytest.skip(_diff.version_mismatch(), allow_module_level=True)

SIGNATURE_CASES = _diff.function_cases()
INTROSPECT_CASES = _diff.introspect_cases()
CALL_CASES = [c.replace("signature:", "call:") for c in SIGNATURE_CASES if not c.endswith(".sizeof")]


def _split(case):
    kind, _, rest = case.partition(":")
    module, _, name = rest.partition(".")
    ours, theirs = _diff.PAIRS[module]
    return module, ours, theirs, name


def test_cases_were_found():
    for module in _diff.MODULES:
        assert any(c.startswith(f"signature:{module}.") for c in SIGNATURE_CASES), module
    assert len(SIGNATURE_CASES) > 700


@pytest.mark.parametrize("case", INTROSPECT_CASES)
def test_introspect(case):
    _, ours, theirs, name = _split(case)
    expected = _diff.their_parameters(getattr(theirs, name))
    try:
        signature = inspect.signature(getattr(ours, name))
    except (ValueError, TypeError) as exc:
        pytest.fail(f"inspect.signature fails: {exc}; cuda.bindings gives {expected}")
    assert [p.name for p in signature.parameters.values()] == [n for n, _ in expected]


@pytest.mark.parametrize("case", SIGNATURE_CASES)
def test_signature(case):
    _, ours, theirs, name = _split(case)
    expected = _diff.their_parameters(getattr(theirs, name))
    actual, source = _diff.our_parameters(getattr(ours, name))
    assert actual is not None, f"cubind exposes no signature; cuda.bindings: {expected}"
    assert [n for n, _ in actual] == [n for n, _ in expected], \
        f"parameter names (cubind from its {source}): {actual} vs cuda.bindings {expected}"
    assert actual == expected, f"defaults: {actual} vs cuda.bindings {expected}"


# ---------------------------------------------------------------------------
# Calls

_SOURCE = b'extern "C" __global__ void k(int* p) { *p = 1; }\n'
_ARCH = b"-arch=sm_80"

# Arguments by parameter name, the same for both packages (the names are cuda.bindings').
_BY_NAME = {
    "src": _SOURCE,
    "name": b"k.cu",
    "name_expression": b"k",
    "numHeaders": 0,
    "numOptions": 1,
    "options": [_ARCH],
    "num_options": 1,
    "file_name": "/nonexistent/k.ptx",
}


def _live_program(nvrtc):
    status, prog = nvrtc.nvrtcCreateProgram(_SOURCE, b"k.cu", 0, None, None)
    assert int(status) == 0
    assert int(nvrtc.nvrtcAddNameExpression(prog, b"k")[0]) == 0
    assert int(nvrtc.nvrtcCompileProgram(prog, 1, [_ARCH])[0]) == 0
    return prog


def _live_link(nvjitlink, nvrtc):
    prog = _live_program(nvrtc)
    size = nvrtc.nvrtcGetPTXSize(prog)[1]
    ptx = bytearray(size)
    nvrtc.nvrtcGetPTX(prog, ptx)
    handle = nvjitlink.create(1, ["-arch=sm_80"])
    nvjitlink.add_data(handle, nvjitlink.InputType.PTX, bytes(ptx), len(ptx), "k.ptx")
    nvjitlink.complete(handle)
    return handle, bytes(ptx)


# NVVM IR with one kernel (libNVVM reads typed pointers), and the PTX of an empty kernel.
NVVM_IR = b"""target triple = "nvptx64-unknown-cuda"
target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
define void @k(i32* %p) {
  store i32 1, i32* %p
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{void (i32*)* @k, !"kernel", i32 1}
!nvvmir.version = !{!1}
!1 = !{i32 2, i32 0, i32 3, i32 1}
"""
PTX = b".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"


def _live_nvvm_program(nvvm):
    prog = nvvm.create_program()
    nvvm.add_module_to_program(prog, NVVM_IR, len(NVVM_IR), "k.ll")
    nvvm.compile_program(prog, 1, ["-arch=compute_80"])
    return prog


def _live_fatbin(nvfatbin):
    handle = nvfatbin.create([], 0)
    nvfatbin.add_ptx(handle, PTX, len(PTX), "80", "k.ptx", "")
    return handle


# Arguments by module and parameter name, made with the package's own module.
_MODULE_ARGS = {
    "nvvm": {"prog": _live_nvvm_program, "buffer": lambda m: NVVM_IR, "size": lambda m: len(NVVM_IR),
             "name": lambda m: "k.ll", "num_options": lambda m: 1, "options": lambda m: ["-arch=compute_80"]},
    "nvfatbin": {"handle": _live_fatbin, "code": lambda m: PTX, "size": lambda m: len(PTX), "arch": lambda m: "80",
                 "identifier": lambda m: "k2", "options_cmd_line": lambda m: "", "options": lambda m: [],
                 "options_count": lambda m: 0},
}


def _size_function(module, name):
    """nvrtcGetPTX -> nvrtcGetPTXSize, get_linked_cubin -> get_linked_cubin_size, nvfatbin's get -> size."""
    if name == "get" and module.__name__.endswith("nvfatbin"):
        return module.size
    for candidate in (name + "Size", name + "_size"):
        if hasattr(module, candidate):
            return getattr(module, candidate)
    return None


def _arguments(module_name, module, pkg, name, their_func):
    """The arguments of one call, built with the package's own classes."""
    params = list(inspect.signature(their_func).parameters.values())
    args = []
    for p in params:
        ann = p.annotation if isinstance(p.annotation, str) else ""
        if p.name in _MODULE_ARGS.get(module_name, {}):
            args.append(_MODULE_ARGS[module_name][p.name](module))
        elif p.name in ("prog",) and module_name == "nvrtc":
            args.append(_live_program(module))
        elif p.name == "handle" and module_name == "nvjitlink":
            args.append(_live_link(module, pkg["nvrtc"])[0])
        elif module_name == "nvjitlink" and p.name == "data":
            args.append(_live_link(module, pkg["nvrtc"])[1])
        elif module_name == "nvjitlink" and p.name == "size":
            args.append(len(_live_link(module, pkg["nvrtc"])[1]))
        elif module_name == "nvjitlink" and p.name == "input_type":
            args.append(module.InputType.PTX)
        elif p.name in _BY_NAME and module_name in ("nvrtc", "nvjitlink", "runtime"):
            value = _BY_NAME[p.name]
            if module_name == "nvjitlink" and isinstance(value, bytes):
                value = value.decode()
            if module_name == "nvjitlink" and p.name == "options":
                value = ["-arch=sm_80"]
            args.append(value)
        elif "Optional" in ann or "list" in ann or "tuple" in ann:
            args.append(None)
        elif re.fullmatch(r"\w+", ann) and _diff.is_enum_class(getattr(module, ann, None)):
            args.append(next(iter(getattr(module, ann).__members__.values())))
        else:
            args.append(0)
    # The idiom of cuda.bindings programs: a caller buffer of the reported size.
    size_of = _size_function(module, name)
    if size_of is not None and len(params) == 2 and args[0] is not None:
        result = size_of(args[0])
        if not isinstance(result, tuple):  # nvJitLink returns the size alone and raises on error
            result = (0, result)
        if int(result[0]) == 0:
            size = int(result[1])
            # b" " * 1 and b" " * 0 are the interpreter's shared objects, which
            # cuda.bindings would write into (changing b" " for the whole
            # process): below two bytes the buffer is a bytearray.
            args[1] = b" " * size if size > 1 else bytearray(size)
    return args


def call_shape(result):
    """The status (type name and value) and the type of each output."""
    if not isinstance(result, tuple):
        return ("not a tuple", _diff.normal(result))
    shape = []
    for i, item in enumerate(result):
        form = _diff.normal(item)
        if i == 0 or form is None:
            shape.append(form)
        elif isinstance(form, tuple) and form[0] in ("handle", "enum"):
            shape.append(form[:2])
        elif isinstance(form, tuple) and form[0] == "list":
            shape.append(("list", sorted({str(x[0]) if isinstance(x, tuple) else type(x).__name__
                                          for x in form[1]})))
        elif isinstance(form, tuple) and form[0] == "struct":
            shape.append(("struct", sorted(form[1])))
        elif isinstance(form, tuple):
            shape.append(form[0])
        else:
            shape.append(type(form).__name__)
    return ("tuple", len(result), shape)


def _call(module_name, pkg, name, their_func):
    module = pkg[module_name]
    try:
        args = _arguments(module_name, module, pkg, name, their_func)
    except Exception as exc:
        return ("arguments cannot be built", _diff.exception_name(exc))
    try:
        return call_shape(getattr(module, name)(*args))
    except Exception as exc:
        return ("raises", _diff.exception_name(exc))


_OURS = {m: _diff.PAIRS[m][0] for m in _diff.PAIRS}
_THEIRS = {m: _diff.PAIRS[m][1] for m in _diff.PAIRS}


@pytest.mark.parametrize("case", CALL_CASES)
def test_call(case):
    module, ours, theirs, name = _split(case)
    # With a driver, the neutral arguments (0, None) would reach a real device: the
    # driver and runtime call cases compare the paths where no driver loads (CI).
    if DRIVER_PRESENT and module in ("driver", "runtime"):
        pytest.skip("libcuda.so.1 loads here: these cases compare the calls where no driver loads")
    their_func = getattr(theirs, name)
    expected = _call(module, _THEIRS, name, their_func)
    actual = _call(module, _OURS, name, their_func)
    if actual == ("raises", "RuntimeError") and actual != expected:
        # The library cubind loaded here (the toolkit's libcudart 13.0, say) is older than
        # the function: cubind raises its clear error (test_older_libraries.py), where
        # cuda.bindings, whose runtime module does not call libcudart, reports the absent
        # driver. A difference of the machine, not of the bindings.
        import cubind
        lacked = dict(cubind.library_status(module)["missing"])
        if name in lacked:
            pytest.skip(f"the {module} library loaded here predates {name} (CUDA {lacked[name]})")
    assert actual == expected, f"cubind: {_diff.short(actual, 300)}\ncuda.bindings: {_diff.short(expected, 300)}"
