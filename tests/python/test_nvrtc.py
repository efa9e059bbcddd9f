"""cubind.bindings.nvrtc: compiling to PTX, CUBIN and LTO-IR, logs, name
expressions, headers, caller buffers, and agreement with cuda.bindings.

No GPU needed: NVRTC is a host library.
"""
import ctypes
import struct

import pytest
from conftest import outputs_of

from cubind.bindings import nvrtc

try:
    from cuda.bindings import nvrtc as cuda_nvrtc
except ImportError:  # pragma: no cover - cuda-bindings is a test dependency here
    cuda_nvrtc = None

needs_cuda_bindings = pytest.mark.skipif(cuda_nvrtc is None, reason="cuda-bindings is not installed")


def _same_library():
    # cubind loads its library first, so that the path it reports is its own choice and
    # not the copy cuda.bindings happened to load into this process before it.
    try:
        tuple(nvrtc.nvrtcVersion()[1:])
    except RuntimeError:
        return False
    if cuda_nvrtc is None:
        return False
    try:
        return tuple(cuda_nvrtc.nvrtcVersion()[1:]) == tuple(nvrtc.nvrtcVersion()[1:])
    except Exception:
        return False


# Byte-for-byte comparisons need both bindings to have loaded the same NVRTC version.
same_nvrtc = pytest.mark.skipif(not _same_library(), reason="cuda.bindings uses another NVRTC version (or none)")

SUCCESS = nvrtc.nvrtcResult.NVRTC_SUCCESS

SAXPY = b"""
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""

TEMPLATES = b"""
#include "ops.h"
template <typename T>
__global__ void scale(T* data, T factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = mul(data[i], factor);
}
__device__ int counter;
namespace inner { __global__ void plain(int* p) { *p = 1; } }
"""

OPS_H = b"template <typename T> __device__ T mul(T a, T b) { return a * b; }\n"

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
# The NVVM IR bitcode wrapper that -dlto produces starts with 0x7F4E43ED (little endian).
LTOIR_MAGIC = b"\xedCN\x7f"


def ok(result):
    return outputs_of(result, SUCCESS)


def _supported_archs():
    try:
        status, archs = nvrtc.nvrtcGetSupportedArchs()
    except RuntimeError:
        return []
    return archs if status == 0 else []


SUPPORTED = _supported_archs()
ARCHS = sorted(set(SUPPORTED) | {75, 80, 90}) if SUPPORTED else [75, 80, 90]


def create(src=SAXPY, name=b"prog.cu", headers=(), include_names=()):
    return ok(nvrtc.nvrtcCreateProgram(src, name, len(headers), list(headers), list(include_names)))


def destroy(prog):
    ok(nvrtc.nvrtcDestroyProgram(prog))


@pytest.fixture
def program():
    made = []

    def make(*args, **kwargs):
        prog = create(*args, **kwargs)
        made.append(prog)
        return prog

    yield make
    for prog in made:
        nvrtc.nvrtcDestroyProgram(prog)


def compile_ok(prog, *options):
    opts = [o if isinstance(o, bytes) else o.encode() for o in options]
    status, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if status is not SUCCESS:
        log = nvrtc.nvrtcGetProgramLog(prog)[1]
        pytest.fail(f"compilation failed with {status!r}:\n{log.decode(errors='replace')}")


def log_text(prog):
    log = ok(nvrtc.nvrtcGetProgramLog(prog))
    assert isinstance(log, bytes)
    return log.rstrip(b"\0").decode()


# ---------------------------------------------------------------------------
# Versions and architectures


def test_version_is_13():
    major, minor = ok(nvrtc.nvrtcVersion())
    assert isinstance(major, int) and isinstance(minor, int)
    assert major >= 12


def test_supported_archs_sorted_and_counted():
    count = ok(nvrtc.nvrtcGetNumSupportedArchs())
    archs = ok(nvrtc.nvrtcGetSupportedArchs())
    assert isinstance(archs, list)
    assert len(archs) == count > 0
    assert archs == sorted(archs)
    assert all(isinstance(a, int) for a in archs)
    assert 80 in archs and 90 in archs


@same_nvrtc
def test_supported_archs_match_cuda_bindings():
    assert ok(nvrtc.nvrtcGetSupportedArchs()) == cuda_nvrtc.nvrtcGetSupportedArchs()[1]


# ---------------------------------------------------------------------------
# PTX, CUBIN, LTO-IR for every architecture


@pytest.mark.parametrize("arch", ARCHS)
def test_ptx(program, arch):
    prog = program()
    compile_ok(prog, f"-arch=compute_{arch}")
    size = ok(nvrtc.nvrtcGetPTXSize(prog))
    ptx = ok(nvrtc.nvrtcGetPTX(prog))
    assert type(ptx) is bytes
    assert len(ptx) == size
    assert ptx.endswith(b"\0") and ptx.count(b"\0") == 1, "PTX is one NUL-terminated string"
    text = ptx[:-1].decode()
    assert f".target sm_{arch}" in text
    assert ".visible .entry saxpy(" in text
    assert ".version " in text


@pytest.mark.parametrize("arch", ARCHS)
def test_cubin(program, arch):
    prog = program()
    compile_ok(prog, f"-arch=sm_{arch}")
    size = ok(nvrtc.nvrtcGetCUBINSize(prog))
    cubin = ok(nvrtc.nvrtcGetCUBIN(prog))
    assert type(cubin) is bytes
    assert len(cubin) == size > 0
    assert cubin[:4] == ELF_MAGIC
    assert cubin[4] == 2, "a 64-bit ELF"
    assert struct.unpack_from("<H", cubin, 18)[0] == EM_CUDA
    e_flags = struct.unpack_from("<I", cubin, 48)[0]
    assert (e_flags >> 8) & 0xFF == arch, f"e_flags {e_flags:#x} do not name sm_{arch}"
    assert b"saxpy" in cubin


@pytest.mark.parametrize("arch", ARCHS)
def test_ltoir(program, arch):
    prog = program()
    compile_ok(prog, f"-arch=sm_{arch}", "-dlto")
    size = ok(nvrtc.nvrtcGetLTOIRSize(prog))
    ltoir = ok(nvrtc.nvrtcGetLTOIR(prog))
    assert type(ltoir) is bytes
    assert len(ltoir) == size > 0
    assert ltoir[:4] == LTOIR_MAGIC
    # With -dlto there is no CUBIN.
    assert ok(nvrtc.nvrtcGetCUBINSize(prog)) == 0


def test_cubin_without_real_arch_is_empty(program):
    prog = program()
    compile_ok(prog, "-arch=compute_80")
    assert ok(nvrtc.nvrtcGetCUBINSize(prog)) == 0
    assert ok(nvrtc.nvrtcGetCUBIN(prog)) == b""


def test_options_as_str_and_bytes(program):
    prog = program()
    status, = nvrtc.nvrtcCompileProgram(prog, 3, ["-arch=sm_80", b"-lineinfo", "--std=c++17"])
    assert status is SUCCESS
    assert b".target sm_80" in ok(nvrtc.nvrtcGetPTX(prog))


def test_source_and_name_as_str(program):
    prog = program(SAXPY.decode(), "named.cu")
    compile_ok(prog, "-arch=sm_80")
    assert b"saxpy" in ok(nvrtc.nvrtcGetPTX(prog))


def test_null_name_gives_default_program(program):
    prog = program(b"__global__ void k( {", None)
    status, = nvrtc.nvrtcCompileProgram(prog, 0, None)
    assert status is nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION
    assert "default_program" in log_text(prog)


def test_num_options_limits_the_list(program):
    prog = program()
    # Only the first numOptions entries are read: the bogus second one is ignored.
    status, = nvrtc.nvrtcCompileProgram(prog, 1, ["-arch=sm_80", "--no-such-option"])
    assert status is SUCCESS


def test_num_options_larger_than_list_raises(program):
    prog = program()
    with pytest.raises(ValueError, match="numOptions"):
        nvrtc.nvrtcCompileProgram(prog, 3, ["-arch=sm_80"])
    with pytest.raises(ValueError):
        nvrtc.nvrtcCompileProgram(prog, -1, [])
    with pytest.raises(ValueError):
        nvrtc.nvrtcCompileProgram(prog, 1, None)


def test_option_of_wrong_type_raises(program):
    prog = program()
    with pytest.raises(TypeError):
        nvrtc.nvrtcCompileProgram(prog, 1, [80])


# ---------------------------------------------------------------------------
# Program log


def test_log_empty_on_success(program):
    prog = program()
    compile_ok(prog, "-arch=sm_80")
    size = ok(nvrtc.nvrtcGetProgramLogSize(prog))
    log = ok(nvrtc.nvrtcGetProgramLog(prog))
    assert size <= 1
    assert log.rstrip(b"\0") == b""


def test_log_holds_syntax_error(program):
    prog = program(b'extern "C" __global__ void broken(int* p) { *p = undefined_name + ; }', b"broken.cu")
    status, = nvrtc.nvrtcCompileProgram(prog, 1, [b"-arch=sm_80"])
    assert status is nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION
    assert status == 6
    text = log_text(prog)
    assert "broken.cu(1): error" in text
    assert "undefined_name" in text
    assert "errors detected" in text or "error detected" in text
    assert len(ok(nvrtc.nvrtcGetProgramLog(prog))) == ok(nvrtc.nvrtcGetProgramLogSize(prog))
    # No PTX after a failed compilation.
    ptx_status = nvrtc.nvrtcGetPTXSize(prog)[0]
    assert ptx_status is not SUCCESS or nvrtc.nvrtcGetPTX(prog)[1] in (b"", b"\0")


def test_warning_in_log_on_success(program):
    prog = program(b'#warning custom-warning-text\nextern "C" __global__ void w(int* p) { *p = 2; }', b"warn.cu")
    compile_ok(prog, "-arch=sm_80")
    text = log_text(prog)
    assert "warn.cu(1): warning" in text
    assert "custom-warning-text" in text
    assert "error" not in text
    # -w silences it.
    quiet = program(b'#warning custom-warning-text\nextern "C" __global__ void w(int* p) { *p = 2; }', b"warn.cu")
    compile_ok(quiet, "-arch=sm_80", "-w")
    assert log_text(quiet) == ""


@pytest.mark.parametrize("option,needle", [
    (b"--no-such-option", "no-such-option"),
    (b"-arch=sm_1", "arch"),
    (b"-std=c++4", ""),
])
def test_bad_option_status_and_log(program, option, needle):
    prog = program()
    status, = nvrtc.nvrtcCompileProgram(prog, 1, [option])
    assert status is nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_OPTION
    text = log_text(prog)
    assert "error" in text
    assert needle in text


# ---------------------------------------------------------------------------
# Headers


def test_headers_passed_to_create(program):
    prog = program(TEMPLATES, b"t.cu", headers=[OPS_H], include_names=[b"ops.h"])
    ok(nvrtc.nvrtcAddNameExpression(prog, "scale<float>"))
    compile_ok(prog, "-arch=sm_80")
    assert ok(nvrtc.nvrtcGetLoweredName(prog, "scale<float>")) in ok(nvrtc.nvrtcGetPTX(prog))


def test_headers_as_str(program):
    prog = program(TEMPLATES.decode(), "t.cu", headers=[OPS_H.decode()], include_names=["ops.h"])
    compile_ok(prog, "-arch=sm_80")


def test_missing_header_is_a_compilation_error(program):
    prog = program(TEMPLATES, b"t.cu")
    status, = nvrtc.nvrtcCompileProgram(prog, 1, [b"-arch=sm_80"])
    assert status is nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION
    assert "ops.h" in log_text(prog)


def test_several_headers(program):
    src = b'#include "a.h"\n#include "b.h"\nextern "C" __global__ void k(int* p) { *p = A + B; }\n'
    prog = program(src, b"k.cu", headers=[b"#define A 40\n", b"#define B 2\n"], include_names=[b"a.h", b"b.h"])
    compile_ok(prog, "-arch=sm_80")
    assert b"42" in ok(nvrtc.nvrtcGetPTX(prog))


def test_header_count_mismatch_raises():
    with pytest.raises(ValueError, match="numHeaders"):
        nvrtc.nvrtcCreateProgram(TEMPLATES, b"t.cu", 2, [OPS_H], [b"ops.h", b"x.h"])
    with pytest.raises(ValueError, match="numHeaders"):
        nvrtc.nvrtcCreateProgram(TEMPLATES, b"t.cu", 1, [OPS_H], [])
    with pytest.raises(ValueError):
        nvrtc.nvrtcCreateProgram(TEMPLATES, b"t.cu", 1, None, None)
    with pytest.raises(ValueError):
        nvrtc.nvrtcCreateProgram(TEMPLATES, b"t.cu", -1, [], [])


def test_missing_source_is_a_type_error():
    # The header does not say src may be NULL: None is refused before the call.
    with pytest.raises(TypeError, match="src"):
        nvrtc.nvrtcCreateProgram(None, b"x.cu", 0, None, None)


# ---------------------------------------------------------------------------
# Name expressions and lowered names


def test_lowered_names_of_template_kernels(program):
    prog = program(TEMPLATES, b"t.cu", headers=[OPS_H], include_names=[b"ops.h"])
    expressions = ["scale<float>", "scale<int>", b"scale<double>", "&counter", "inner::plain"]
    for expr in expressions:
        ok(nvrtc.nvrtcAddNameExpression(prog, expr))
    compile_ok(prog, "-arch=sm_80")
    lowered = {e if isinstance(e, str) else e.decode(): ok(nvrtc.nvrtcGetLoweredName(prog, e)) for e in expressions}
    assert lowered["scale<float>"] == b"_Z5scaleIfEvPT_S0_i"
    assert lowered["scale<int>"] == b"_Z5scaleIiEvPT_S0_i"
    assert lowered["scale<double>"] == b"_Z5scaleIdEvPT_S0_i"
    assert lowered["&counter"] == b"counter"
    assert lowered["inner::plain"] == b"_ZN5inner5plainEPi"
    assert all(type(v) is bytes for v in lowered.values())
    ptx = ok(nvrtc.nvrtcGetPTX(prog))
    for expr in ("scale<float>", "scale<int>", "scale<double>", "inner::plain"):
        assert b".entry " + lowered[expr] in ptx


def test_lowered_name_before_compilation(program):
    prog = program(TEMPLATES, b"t.cu", headers=[OPS_H], include_names=[b"ops.h"])
    ok(nvrtc.nvrtcAddNameExpression(prog, "scale<float>"))
    status, name = nvrtc.nvrtcGetLoweredName(prog, "scale<float>")
    assert status is nvrtc.nvrtcResult.NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION
    assert name is None


def test_name_expression_after_compilation_and_unknown(program):
    prog = program(TEMPLATES, b"t.cu", headers=[OPS_H], include_names=[b"ops.h"])
    ok(nvrtc.nvrtcAddNameExpression(prog, "scale<float>"))
    compile_ok(prog, "-arch=sm_80")
    status, = nvrtc.nvrtcAddNameExpression(prog, "scale<int>")
    assert status is nvrtc.nvrtcResult.NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION
    status, name = nvrtc.nvrtcGetLoweredName(prog, "scale<int>")
    assert status is nvrtc.nvrtcResult.NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID
    assert name is None


@needs_cuda_bindings
def test_lowered_names_match_cuda_bindings(program):
    prog = program(TEMPLATES, b"t.cu", headers=[OPS_H], include_names=[b"ops.h"])
    err, theirs = cuda_nvrtc.nvrtcCreateProgram(TEMPLATES, b"t.cu", 1, [OPS_H], [b"ops.h"])
    assert err == 0
    try:
        for expr in (b"scale<float>", b"scale<long long>", b"&counter"):
            ok(nvrtc.nvrtcAddNameExpression(prog, expr))
            assert cuda_nvrtc.nvrtcAddNameExpression(theirs, expr)[0] == 0
        compile_ok(prog, "-arch=sm_80")
        assert cuda_nvrtc.nvrtcCompileProgram(theirs, 1, [b"-arch=sm_80"])[0] == 0
        for expr in (b"scale<float>", b"scale<long long>", b"&counter"):
            assert ok(nvrtc.nvrtcGetLoweredName(prog, expr)) == cuda_nvrtc.nvrtcGetLoweredName(theirs, expr)[1]
    finally:
        cuda_nvrtc.nvrtcDestroyProgram(theirs)


# ---------------------------------------------------------------------------
# Outputs: new bytes, or written into a caller buffer


@pytest.mark.parametrize("getter,sizer,options", [
    ("nvrtcGetPTX", "nvrtcGetPTXSize", ["-arch=sm_80"]),
    ("nvrtcGetCUBIN", "nvrtcGetCUBINSize", ["-arch=sm_80"]),
    ("nvrtcGetLTOIR", "nvrtcGetLTOIRSize", ["-arch=sm_80", "-dlto"]),
    ("nvrtcGetProgramLog", "nvrtcGetProgramLogSize", ["-arch=sm_80", "-w"]),
])
def test_output_new_bytes_and_caller_buffer(program, getter, sizer, options):
    prog = program()
    compile_ok(prog, *options)
    get = getattr(nvrtc, getter)
    size = ok(getattr(nvrtc, sizer)(prog))
    fresh = ok(get(prog))
    assert type(fresh) is bytes and len(fresh) == size
    assert ok(get(prog)) == fresh, "a second call gives the same bytes"

    # A bytearray of exactly the right size is filled; as in cuda.bindings the
    # call then returns the status alone.
    buf = bytearray(size)
    assert get(prog, buf) == (SUCCESS,)
    assert bytes(buf) == fresh

    # A larger one is filled at its start; the tail stays untouched.
    big = bytearray(b"\xab" * (size + 16))
    assert get(prog, big) == (SUCCESS,)
    assert bytes(big[:size]) == fresh and big[size:] == b"\xab" * 16

    # A writable memoryview works too.
    backing = bytearray(size)
    view = memoryview(backing)
    ok(get(prog, view))
    assert bytes(backing) == fresh

    # ctypes arrays export a writable buffer.
    carr = (ctypes.c_char * max(size, 1))()
    ok(get(prog, carr))
    assert carr.raw[:size] == fresh

    if size > 0:
        small = bytearray(size - 1)
        with pytest.raises(ValueError) as info:
            get(prog, small)
        message = str(info.value)
        assert str(size) in message and str(size - 1) in message
        assert small == bytearray(size - 1), "a too-small buffer is left untouched"


def test_bytes_buffer_is_filled_in_place(program):
    # The cuda.bindings idiom: b" " * size receives the output.
    prog = program()
    compile_ok(prog, "-arch=sm_80")
    size = ok(nvrtc.nvrtcGetPTXSize(prog))
    placeholder = b" " * size
    assert nvrtc.nvrtcGetPTX(prog, placeholder) == (SUCCESS,)
    assert placeholder == ok(nvrtc.nvrtcGetPTX(prog))
    # The interpreter's shared empty and one-byte objects are too small for
    # the PTX, and are never written.
    for shared in (b"", b" "):
        with pytest.raises(ValueError, match=f"reports {size}"):
            nvrtc.nvrtcGetPTX(prog, shared)
    assert b" " == bytes([0x20])


def test_one_byte_log_into_the_shared_object(program):
    # NVIDIA's samples: `log = b" " * logSize; nvrtcGetProgramLog(prog, log)`.
    # A successful compile's log is its NUL alone, and b" " * 1 is the
    # interpreter's shared b" ": the call succeeds and leaves it b" ".
    prog = program()
    compile_ok(prog, "-arch=compute_80")
    size = ok(nvrtc.nvrtcGetProgramLogSize(prog))
    assert size == 1
    log = b" " * size
    assert log is b" "[:1]
    assert nvrtc.nvrtcGetProgramLog(prog, log) == (SUCCESS,)
    assert log == b" " and b" " == bytes([0x20]) and b" " * 1 == bytes([0x20])
    assert nvrtc.nvrtcGetProgramLog(prog, b"") == (SUCCESS,) and b"" == bytes()


def test_output_buffer_as_ctypes_array(program):
    prog = program()
    compile_ok(prog, "-arch=sm_80")
    size = ok(nvrtc.nvrtcGetPTXSize(prog))
    buf = ctypes.create_string_buffer(size)
    assert nvrtc.nvrtcGetPTX(prog, buf) == (SUCCESS,)
    assert buf.raw == ok(nvrtc.nvrtcGetPTX(prog))
    # An address is no buffer: the call would write wherever it points.
    with pytest.raises(TypeError, match="int found"):
        nvrtc.nvrtcGetPTX(prog, ctypes.addressof(buf))


@pytest.mark.parametrize("getter,sizer", [("nvrtcGetPTX", "nvrtcGetPTXSize"), ("nvrtcGetCUBIN", "nvrtcGetCUBINSize"),
                                          ("nvrtcGetLTOIR", "nvrtcGetLTOIRSize"),
                                          ("nvrtcGetOptiXIR", "nvrtcGetOptiXIRSize"),
                                          ("nvrtcGetProgramLog", "nvrtcGetProgramLogSize")])
@pytest.mark.parametrize("bad", [12345, 0, True, 2**64 - 1, object()])
def test_output_buffer_never_an_int(program, getter, sizer, bad):
    # cuda.bindings: TypeError (expected bytes, int found); taking the int as
    # an address would write through it (nvrtcGetPTX(prog, 12345) killed the
    # interpreter).
    prog = program()
    compile_ok(prog, "-arch=sm_80")
    with pytest.raises(TypeError, match="found"):
        getattr(nvrtc, getter)(prog, bad)


@pytest.mark.parametrize("call", [
    lambda p: nvrtc.nvrtcCompileProgram(p, 0, []),
    lambda p: nvrtc.nvrtcGetPTXSize(p),
    lambda p: nvrtc.nvrtcGetProgramLog(p),
    lambda p: nvrtc.nvrtcAddNameExpression(p, b"k"),
    lambda p: nvrtc.nvrtcDestroyProgram(p),
], ids=["compile", "ptx-size", "log", "name-expression", "destroy"])
@pytest.mark.parametrize("made_up", [123456, nvrtc.nvrtcProgram(123456), 2**64 - 1])
def test_made_up_program_raises_instead_of_crashing(call, made_up):
    # NVRTC reads a program handle as its own object: a made-up one crashed
    # the interpreter, in cuda.bindings too. The raw layer records the
    # programs nvrtcCreateProgram made, so any other value is refused first.
    with pytest.raises(ValueError, match=r"prog: .* is not a live nvrtcProgram: nvrtcCreateProgram made no such"):
        call(made_up)


def test_destroyed_program_raises_and_null_reaches_nvrtc(program):
    prog = create()
    address = int(prog)
    compile_ok(address, "-arch=sm_80")  # a live program's address works as the object does
    destroy(prog)
    assert int(prog) == 0
    with pytest.raises(ValueError, match="nvrtcDestroyProgram has destroyed it"):
        nvrtc.nvrtcCompileProgram(address, 0, [])
    with pytest.raises(ValueError, match="is not a live nvrtcProgram"):
        nvrtc.nvrtcDestroyProgram(address)
    # NULL stays NVRTC's to report, as in cuda.bindings.
    for null in (None, 0, prog):
        assert nvrtc.nvrtcCompileProgram(null, 0, []) == (nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM,)


def test_program_made_by_the_core_is_live():
    # cubind.core's Program is made through the same raw layer.
    from cubind.core import Program, ProgramOptions
    p = Program("extern \"C\" __global__ void k() {}", "c++", ProgramOptions(arch="sm_80"))
    try:
        assert ok(nvrtc.nvrtcGetProgramLogSize(int(p.handle))) >= 1
    finally:
        p.close()


def test_pointer_object_is_its_own_storage(program):
    # A ctypes.c_void_p exports its own 8 bytes: too small, never the address it holds.
    prog = program()
    compile_ok(prog, "-arch=sm_80")
    pointer = ctypes.c_void_p(4096)
    with pytest.raises(ValueError, match="holds 8 bytes"):
        nvrtc.nvrtcGetPTX(prog, pointer)
    assert pointer.value == 4096


# ---------------------------------------------------------------------------
# Agreement with cuda.bindings


def _theirs_compile(src, options, getter, sizer):
    err, prog = cuda_nvrtc.nvrtcCreateProgram(src, b"prog.cu", 0, [], [])
    assert err == 0
    try:
        assert cuda_nvrtc.nvrtcCompileProgram(prog, len(options), options)[0] == 0
        err, size = getattr(cuda_nvrtc, sizer)(prog)
        assert err == 0
        buf = b" " * size
        assert getattr(cuda_nvrtc, getter)(prog, buf)[0] == 0
        return buf
    finally:
        cuda_nvrtc.nvrtcDestroyProgram(prog)


@same_nvrtc
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("what", ["PTX", "CUBIN", "LTOIR"])
def test_same_output_as_cuda_bindings(program, arch, what):
    options = [f"-arch=sm_{arch}".encode(), b"-default-device"]
    if what == "LTOIR":
        options.append(b"-dlto")
    getter, sizer = f"nvrtcGet{what}", f"nvrtcGet{what}Size"
    prog = program()
    compile_ok(prog, *options)
    ours = ok(getattr(nvrtc, getter)(prog))
    theirs = _theirs_compile(SAXPY, options, getter, sizer)
    assert len(ours) == len(theirs)
    assert ours == theirs


@same_nvrtc
def test_same_log_as_cuda_bindings(program):
    src = b"__global__ void k(int* p) { *p = nope; }"
    prog = program(src)
    assert nvrtc.nvrtcCompileProgram(prog, 1, [b"-arch=sm_80"])[0] == 6
    theirs_err, theirs = cuda_nvrtc.nvrtcCreateProgram(src, b"prog.cu", 0, [], [])
    try:
        assert cuda_nvrtc.nvrtcCompileProgram(theirs, 1, [b"-arch=sm_80"])[0] == 6
        size = cuda_nvrtc.nvrtcGetProgramLogSize(theirs)[1]
        buf = b" " * size
        cuda_nvrtc.nvrtcGetProgramLog(theirs, buf)
    finally:
        cuda_nvrtc.nvrtcDestroyProgram(theirs)
    assert ok(nvrtc.nvrtcGetProgramLog(prog)) == buf


# ---------------------------------------------------------------------------
# Status codes and error strings


def test_error_string_for_every_status():
    # The enum is the pinned headers'; an older NVRTC names only the codes it knows
    # (NVRTC 13.0 has none past NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED) and calls
    # the newer ones "NVRTC_ERROR unknown", as for any code it does not know.
    _, major, minor = nvrtc.nvrtcVersion()
    newer_than_library = {"NVRTC_ERROR_BUSY"} if (major, minor) < (13, 3) else set()
    for member in nvrtc.nvrtcResult:
        status, text = nvrtc.nvrtcGetErrorString(member)
        assert status is SUCCESS
        assert text == (b"NVRTC_ERROR unknown" if member.name in newer_than_library else member.name.encode())
        assert nvrtc.nvrtcGetErrorString(int(member)) == (SUCCESS, text)


def test_error_string_unknown_code():
    status, text = nvrtc.nvrtcGetErrorString(12345)
    assert status is SUCCESS
    assert text == b"NVRTC_ERROR unknown"


@needs_cuda_bindings
def test_error_strings_match_cuda_bindings():
    for member in cuda_nvrtc.nvrtcResult:
        assert nvrtc.nvrtcGetErrorString(int(member))[1] == cuda_nvrtc.nvrtcGetErrorString(member)[1]


def test_error_string_bad_argument():
    with pytest.raises(TypeError):
        nvrtc.nvrtcGetErrorString("NVRTC_SUCCESS")
    with pytest.raises((OverflowError, ValueError)):
        nvrtc.nvrtcGetErrorString(2**64)


def test_status_members_are_cached_singletons(program):
    prog = program()
    assert nvrtc.nvrtcCompileProgram(prog, 1, [b"-arch=sm_80"])[0] is nvrtc.nvrtcResult.NVRTC_SUCCESS
    assert nvrtc.nvrtcResult(0) is nvrtc.nvrtcResult.NVRTC_SUCCESS
    assert nvrtc.nvrtcResult(6) is nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION
    assert isinstance(nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION, int)
    assert nvrtc.nvrtcResult["NVRTC_ERROR_COMPILATION"] == 6


@pytest.mark.parametrize("prog", [None, 0, nvrtc.nvrtcProgram(), nvrtc.nvrtcProgram(None)])
def test_null_program_is_invalid_program(prog):
    invalid = nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM
    assert nvrtc.nvrtcCompileProgram(prog, 0, None) == (invalid,)
    assert nvrtc.nvrtcGetPTXSize(prog) == (invalid, None)
    assert nvrtc.nvrtcGetPTX(prog) == (invalid, None)
    assert nvrtc.nvrtcGetCUBIN(prog) == (invalid, None)
    assert nvrtc.nvrtcGetLTOIR(prog) == (invalid, None)
    assert nvrtc.nvrtcGetProgramLog(prog) == (invalid, None)
    assert nvrtc.nvrtcAddNameExpression(prog, "x") == (invalid,)
    assert nvrtc.nvrtcGetLoweredName(prog, "x") == (invalid, None)


def test_program_handle_of_wrong_type_raises():
    with pytest.raises(TypeError):
        nvrtc.nvrtcCompileProgram("prog", 0, None)
    with pytest.raises(TypeError):
        nvrtc.nvrtcGetPTX(object())
    with pytest.raises((ValueError, OverflowError)):
        nvrtc.nvrtcGetPTX(-1)


# ---------------------------------------------------------------------------
# Program lifetime


def test_program_handle_behaviour(program):
    prog = program()
    assert isinstance(prog, nvrtc.nvrtcProgram)
    assert int(prog) != 0
    assert nvrtc.nvrtcProgram(int(prog)) == prog
    assert hash(nvrtc.nvrtcProgram(int(prog))) == hash(prog)
    assert f"{int(prog):#x}" in repr(prog)


def test_destroy_takes_the_program_like_cuda_bindings():
    prog = create()
    try:
        assert nvrtc.nvrtcDestroyProgram(prog) == (SUCCESS,)
    except TypeError:
        nvrtc.nvrtcDestroyProgram(prog)
        raise
    assert int(prog) == 0, "cuda.bindings leaves the destroyed handle NULL"


def test_destroy_null_program():
    assert nvrtc.nvrtcDestroyProgram(None) == (nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM,)
    with pytest.raises(TypeError):
        nvrtc.nvrtcDestroyProgram([])


# ---------------------------------------------------------------------------
# Flow callback and PCH


def test_flow_callback_cancels_compilation(program):
    calls = []
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)

    @proto
    def cancel(payload, reserved):
        calls.append((payload, reserved))
        return 1

    prog = program()
    address = ctypes.cast(cancel, ctypes.c_void_p).value
    ok(nvrtc.nvrtcSetFlowCallback(prog, address, 0x1234))
    status, = nvrtc.nvrtcCompileProgram(prog, 1, [b"-arch=sm_80"])
    assert status is nvrtc.nvrtcResult.NVRTC_ERROR_CANCELLED
    assert calls and calls[0] == (0x1234, None)


def test_flow_callback_payload_buffer(program):
    calls = []
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)

    @proto
    def proceed(payload, reserved):
        calls.append(payload)
        return 0

    prog = program()
    payload = ctypes.c_int(7)
    ok(nvrtc.nvrtcSetFlowCallback(prog, ctypes.cast(proceed, ctypes.c_void_p).value, ctypes.addressof(payload)))
    compile_ok(prog, "-arch=sm_80")
    assert calls and set(calls) == {ctypes.addressof(payload)}


def test_pch_heap_size_round_trip():
    before = ok(nvrtc.nvrtcGetPCHHeapSize())
    assert isinstance(before, int)
    try:
        ok(nvrtc.nvrtcSetPCHHeapSize(1 << 24))
        assert ok(nvrtc.nvrtcGetPCHHeapSize()) >= 1 << 24
    finally:
        ok(nvrtc.nvrtcSetPCHHeapSize(before))


def test_pch_status_without_pch(program):
    prog = program()
    compile_ok(prog, "-arch=sm_80")
    status, = nvrtc.nvrtcGetPCHCreateStatus(prog)
    assert status is nvrtc.nvrtcResult.NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED
