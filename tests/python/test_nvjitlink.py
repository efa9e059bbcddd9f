"""cubind.bindings.nvjitlink: linking LTO-IR from NVRTC into CUBIN or PTX,
logs, errors as nvJitLinkError, enums, and agreement with cuda.bindings.

No GPU needed.
"""
import ctypes
import os
import struct

import pytest

from cubind.bindings import nvjitlink, nvrtc

try:
    from cuda.bindings import nvjitlink as cuda_nvjitlink
except ImportError:  # pragma: no cover
    cuda_nvjitlink = None

needs_cuda_bindings = pytest.mark.skipif(cuda_nvjitlink is None, reason="cuda-bindings is not installed")


def _same_library():
    # cubind loads its library first, so that the path it reports is its own choice and
    # not the copy cuda.bindings happened to load into this process before it.
    try:
        tuple(nvjitlink.version())
    except RuntimeError:
        return False
    if cuda_nvjitlink is None:
        return False
    try:
        return tuple(cuda_nvjitlink.version()) == tuple(nvjitlink.version())
    except Exception:
        return False


same_nvjitlink = pytest.mark.skipif(not _same_library(), reason="cuda.bindings uses another nvJitLink version (or none)")

Result = nvjitlink.Result
InputType = nvjitlink.InputType

KERNEL = b"""
extern __device__ float twice(float v);
extern "C" __global__ void scale(float* data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = twice(data[i]);
}
"""
HELPER = b"""
__device__ float twice(float v) { return 2.0f * v; }
"""
SINGLE = b'extern "C" __global__ void single(int* p) { *p = 42; }\n'


def nvrtc_compile(src, *options, name=b"unit.cu"):
    status, prog = nvrtc.nvrtcCreateProgram(src, name, 0, None, None)
    assert status == 0
    try:
        opts = [o.encode() if isinstance(o, str) else o for o in options]
        status, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        log = nvrtc.nvrtcGetProgramLog(prog)[1]
        assert status == 0, log
        if b"-dlto" in opts:
            return nvrtc.nvrtcGetLTOIR(prog)[1]
        if any(o.startswith(b"-arch=sm_") for o in opts):
            return nvrtc.nvrtcGetCUBIN(prog)[1]
        return nvrtc.nvrtcGetPTX(prog)[1]
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def ltoir(src, arch=80, name=b"unit.cu"):
    return nvrtc_compile(src, f"-arch=sm_{arch}", "-dlto", "-rdc=true", name=name)


@pytest.fixture
def linker():
    made = []

    def make(*options):
        handle = nvjitlink.create(len(options), list(options))
        made.append(handle)
        return handle

    yield make
    for handle in made:
        nvjitlink.destroy(handle)


def elf_arch(cubin):
    assert cubin[:4] == b"\x7fELF"
    assert struct.unpack_from("<H", cubin, 18)[0] == 190  # EM_CUDA
    return (struct.unpack_from("<I", cubin, 48)[0] >> 8) & 0xFF


# ---------------------------------------------------------------------------


def test_version():
    major, minor = nvjitlink.version()
    assert isinstance(major, int) and isinstance(minor, int)
    assert major >= 12
    assert (major, minor)[0] == nvrtc.nvrtcVersion()[1]


def test_create_returns_handle(linker):
    handle = linker("-arch=sm_80")
    assert isinstance(handle, nvjitlink.nvJitLinkHandle)
    assert int(handle) != 0
    assert nvjitlink.nvJitLinkHandle(int(handle)) == handle


def test_create_with_bytes_options(linker):
    handle = linker(b"-arch=sm_90", b"-lto", b"-O3")
    assert int(handle) != 0


@pytest.mark.parametrize("arch", [75, 80, 90])
def test_link_ltoir_from_nvrtc_to_cubin(linker, arch):
    a = ltoir(KERNEL, arch, b"kernel.cu")
    b = ltoir(HELPER, arch, b"helper.cu")
    handle = linker(f"-arch=sm_{arch}", "-lto")
    assert nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, a, len(a), "kernel.ltoir") is None
    assert nvjitlink.add_data(handle, int(InputType.NVJITLINK_INPUT_LTOIR), b, len(b), b"helper.ltoir") is None
    assert nvjitlink.complete(handle) is None
    size = nvjitlink.get_linked_cubin_size(handle)
    cubin = nvjitlink.get_linked_cubin(handle)
    assert type(cubin) is bytes
    assert len(cubin) == size > 0
    assert elf_arch(cubin) == arch
    assert b"scale" in cubin
    # The error log of a successful link is empty.
    assert nvjitlink.get_error_log(handle).rstrip(b"\0") == b""


def test_link_to_ptx(linker):
    a = ltoir(KERNEL)
    b = ltoir(HELPER)
    handle = linker("-arch=sm_80", "-lto", "-ptx")
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, a, len(a), "kernel")
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, b, len(b), "helper")
    nvjitlink.complete(handle)
    size = nvjitlink.get_linked_ptx_size(handle)
    ptx = nvjitlink.get_linked_ptx(handle)
    assert type(ptx) is bytes and len(ptx) == size
    text = ptx.rstrip(b"\0").decode()
    assert ".target sm_80" in text
    assert ".entry scale(" in text
    # twice() was inlined by link-time optimisation: no call remains.
    assert "call" not in text.split(".entry scale(")[1]


def test_linked_ptx_absent_without_ptx_option(linker):
    a = nvrtc_compile(SINGLE, "-arch=sm_80", "-dlto")
    handle = linker("-arch=sm_80", "-lto")
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, a, len(a), "single")
    nvjitlink.complete(handle)
    with pytest.raises(nvjitlink.nvJitLinkError) as info:
        nvjitlink.get_linked_ptx(handle)
    assert isinstance(info.value.status, Result)
    assert info.value.status != Result.NVJITLINK_SUCCESS


def test_link_ptx_and_cubin_inputs(linker):
    ptx = nvrtc_compile(SINGLE, "-arch=compute_80")
    handle = linker("-arch=sm_80")
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_PTX, ptx, len(ptx), "single.ptx")
    nvjitlink.complete(handle)
    assert elf_arch(nvjitlink.get_linked_cubin(handle)) == 80

    cubin = nvrtc_compile(SINGLE, "-arch=sm_80", "-rdc=true")
    handle = linker("-arch=sm_80")
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_CUBIN, cubin, len(cubin), "single.cubin")
    nvjitlink.complete(handle)
    assert b"single" in nvjitlink.get_linked_cubin(handle)


def test_add_data_from_address(linker):
    a = nvrtc_compile(SINGLE, "-arch=sm_80", "-dlto")
    keep = ctypes.create_string_buffer(a, len(a))
    handle = linker("-arch=sm_80", "-lto")
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, ctypes.addressof(keep), len(a), "single")
    nvjitlink.complete(handle)
    assert elf_arch(nvjitlink.get_linked_cubin(handle)) == 80


def test_add_file(linker, tmp_path):
    a = nvrtc_compile(SINGLE, "-arch=sm_80", "-dlto")
    path = tmp_path / "single.ltoir"
    path.write_bytes(a)
    handle = linker("-arch=sm_80", "-lto")
    nvjitlink.add_file(handle, InputType.NVJITLINK_INPUT_LTOIR, str(path))
    nvjitlink.complete(handle)
    assert elf_arch(nvjitlink.get_linked_cubin(handle)) == 80

    handle = linker("-arch=sm_80", "-lto")
    with pytest.raises(nvjitlink.nvJitLinkError):
        nvjitlink.add_file(handle, InputType.NVJITLINK_INPUT_LTOIR, os.fsencode(tmp_path / "missing.ltoir"))


def test_info_log_with_verbose(linker):
    a = nvrtc_compile(SINGLE, "-arch=sm_80", "-dlto")
    handle = linker("-arch=sm_80", "-lto", "-verbose")
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, a, len(a), "single")
    nvjitlink.complete(handle)
    size = nvjitlink.get_info_log_size(handle)
    log = nvjitlink.get_info_log(handle)
    assert type(log) is bytes and len(log) == size
    if size == 0:
        pytest.skip("this nvJitLink writes no info log for -verbose")
    assert b"single" in log


def test_outputs_into_caller_buffers(linker):
    a = nvrtc_compile(SINGLE, "-arch=sm_80", "-dlto")
    handle = linker("-arch=sm_80", "-lto", "-verbose")
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, a, len(a), "single")
    nvjitlink.complete(handle)
    fresh = nvjitlink.get_linked_cubin(handle)
    buf = bytearray(len(fresh))
    assert nvjitlink.get_linked_cubin(handle, buf) is None  # as cuda.bindings: the buffer holds the result
    assert bytes(buf) == fresh
    big = bytearray(len(fresh) + 8)
    nvjitlink.get_linked_cubin(handle, big)
    assert bytes(big[:len(fresh)]) == fresh
    with pytest.raises(ValueError) as info:
        nvjitlink.get_linked_cubin(handle, bytearray(len(fresh) - 1))
    assert str(len(fresh)) in str(info.value)

    info_log = nvjitlink.get_info_log(handle)
    lbuf = bytearray(len(info_log))
    assert nvjitlink.get_info_log(handle, lbuf) is None and bytes(lbuf) == info_log
    if info_log:  # some nvJitLink builds log nothing for -verbose
        with pytest.raises(ValueError):
            nvjitlink.get_info_log(handle, bytearray(len(info_log) - 1))


def test_logs_into_bytes_of_the_reported_size(linker):
    # `log = b" " * size` for every log: the error log of a successful link
    # is empty or its NUL alone (b"" and b" " are the interpreter's shared
    # objects), which the call leaves as they are.
    a = nvrtc_compile(SINGLE, "-arch=sm_80", "-dlto")
    handle = linker("-arch=sm_80", "-lto")
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, a, len(a), "single")
    nvjitlink.complete(handle)
    for sizer, getter in ((nvjitlink.get_error_log_size, nvjitlink.get_error_log),
                          (nvjitlink.get_info_log_size, nvjitlink.get_info_log)):
        size = sizer(handle)
        log = b" " * size
        assert getter(handle, log) is None
        if size <= 1:
            assert log == b" " * size
    assert b" " == bytes([0x20]) and b"" == bytes()


@pytest.mark.parametrize("getter", ["get_linked_cubin", "get_linked_ptx", "get_error_log", "get_info_log"])
@pytest.mark.parametrize("bad", [12345, True, 2**64 - 1])
def test_output_buffer_never_an_int(linker, getter, bad):
    # cuda.bindings takes an int here as an address and writes through it;
    # cubind takes only memory the object owns (bytes, bytearray, a ctypes
    # array, any writable buffer).
    a = nvrtc_compile(SINGLE, "-arch=sm_80", "-dlto")
    handle = linker("-arch=sm_80", "-lto", *(["-ptx"] if getter == "get_linked_ptx" else []))
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, a, len(a), "single")
    nvjitlink.complete(handle)
    with pytest.raises(TypeError, match="found"):
        getattr(nvjitlink, getter)(handle, bad)


# ---------------------------------------------------------------------------
# Errors


def test_unrecognized_option_raises_with_status():
    with pytest.raises(nvjitlink.nvJitLinkError) as info:
        nvjitlink.create(2, ["-arch=sm_80", "-no-such-option"])
    err = info.value
    assert err.status is Result.NVJITLINK_ERROR_UNRECOGNIZED_OPTION
    assert err.status == 1
    # Named as cuda.bindings names it, without the C prefix.
    assert "ERROR_UNRECOGNIZED_OPTION (1)" in str(err)
    assert isinstance(err, Exception)


def test_missing_arch_raises():
    with pytest.raises(nvjitlink.nvJitLinkError) as info:
        nvjitlink.create(1, ["-O3"])
    assert info.value.status is Result.NVJITLINK_ERROR_MISSING_ARCH
    # No options at all: a NULL array.
    with pytest.raises(nvjitlink.nvJitLinkError) as info:
        nvjitlink.create(0, None)
    assert info.value.status in (Result.NVJITLINK_ERROR_NULL_INPUT, Result.NVJITLINK_ERROR_MISSING_ARCH)


def test_bad_input_raises_and_error_log_explains(linker):
    handle = linker("-arch=sm_80", "-lto")
    garbage = b"this is not LTO-IR" * 4
    with pytest.raises(nvjitlink.nvJitLinkError) as info:
        nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, garbage, len(garbage), "garbage.ltoir")
    assert info.value.status in (Result.NVJITLINK_ERROR_INCORRECT_INPUT_TYPE, Result.NVJITLINK_ERROR_INVALID_INPUT)
    size = nvjitlink.get_error_log_size(handle)
    log = nvjitlink.get_error_log(handle)
    assert len(log) == size > 0
    assert b"ERROR" in log


def test_undefined_symbol_fails_at_complete(linker):
    a = ltoir(KERNEL)  # twice() is never defined
    handle = linker("-arch=sm_80", "-lto")
    nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, a, len(a), "kernel")
    with pytest.raises(nvjitlink.nvJitLinkError) as info:
        nvjitlink.complete(handle)
    assert info.value.status != Result.NVJITLINK_SUCCESS
    assert b"twice" in nvjitlink.get_error_log(handle)


def test_arch_mismatch(linker):
    a = ltoir(SINGLE, 90)
    handle = linker("-arch=sm_80", "-lto")
    with pytest.raises(nvjitlink.nvJitLinkError) as info:
        nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, a, len(a), "single")
        nvjitlink.complete(handle)
    assert info.value.status != Result.NVJITLINK_SUCCESS


def test_null_handle_raises():
    for null in (None, 0, nvjitlink.nvJitLinkHandle()):
        with pytest.raises(nvjitlink.nvJitLinkError) as info:
            nvjitlink.complete(null)
        assert info.value.status in (Result.NVJITLINK_ERROR_NULL_INPUT, Result.NVJITLINK_ERROR_INVALID_INPUT)
        with pytest.raises(nvjitlink.nvJitLinkError):
            nvjitlink.get_linked_cubin(null)


@pytest.mark.parametrize("made_up", [123456, nvjitlink.nvJitLinkHandle(123456)])
def test_made_up_handle_raises_instead_of_crashing(made_up):
    # nvJitLink reads a handle as its own object: a made-up one crashed the
    # interpreter, in cuda.bindings too. The raw layer records the handles
    # nvJitLinkCreate made, so any other value is refused first.
    for call in (nvjitlink.complete, nvjitlink.get_linked_cubin_size, nvjitlink.get_error_log, nvjitlink.destroy):
        with pytest.raises(ValueError, match=r"handle: .* is not a live nvJitLinkHandle: nvJitLinkCreate made no"):
            call(made_up)


def test_destroyed_handle_raises():
    handle = nvjitlink.create(1, ["-arch=sm_80"])
    address = int(handle)
    assert nvjitlink.get_error_log_size(address) >= 0  # a live handle's address works
    nvjitlink.destroy(handle)
    with pytest.raises(ValueError, match="nvJitLinkDestroy has destroyed it"):
        nvjitlink.complete(address)
    with pytest.raises(ValueError, match="is not a live nvJitLinkHandle"):
        nvjitlink.destroy(address)


def test_error_pickles():
    import pickle
    err = nvjitlink.nvJitLinkError(Result.NVJITLINK_ERROR_INTERNAL, "log text")
    copy = pickle.loads(pickle.dumps(err))
    assert copy.status is Result.NVJITLINK_ERROR_INTERNAL
    assert copy.log == "log text"
    assert "log text" in str(copy)


def test_argument_errors_are_python_exceptions(linker):
    handle = linker("-arch=sm_80")
    with pytest.raises(ValueError):
        nvjitlink.create(2, ["-arch=sm_80"])
    with pytest.raises(TypeError):
        nvjitlink.create(1, [80])
    with pytest.raises(TypeError):
        nvjitlink.add_data(handle, "LTOIR", b"x", 1, "x")
    with pytest.raises(TypeError):
        nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, object(), 1, "x")
    with pytest.raises(OverflowError):
        nvjitlink.add_data(handle, InputType.NVJITLINK_INPUT_LTOIR, b"x", -1, "x")
    with pytest.raises(TypeError):
        nvjitlink.complete("handle")


# ---------------------------------------------------------------------------
# Enums


def test_result_enum():
    assert issubclass(Result, int)
    assert Result(0) is Result.NVJITLINK_SUCCESS
    assert int(Result.NVJITLINK_ERROR_LTO_NOT_ENABLED) == 18
    assert Result(999).value == 999  # an unknown code converts
    assert Result(999) is Result(999)


def test_input_type_enum():
    assert issubclass(InputType, int)
    expected = {"NONE": 0, "CUBIN": 1, "PTX": 2, "LTOIR": 3, "FATBIN": 4, "OBJECT": 5, "LIBRARY": 6, "INDEX": 7, "ANY": 10}
    for short, value in expected.items():
        assert int(getattr(InputType, "NVJITLINK_INPUT_" + short)) == value
    assert InputType(3) is InputType.NVJITLINK_INPUT_LTOIR


@needs_cuda_bindings
def test_enum_member_names_match_cuda_bindings():
    for cls_name in ("InputType", "Result"):
        theirs = getattr(cuda_nvjitlink, cls_name)
        ours = getattr(nvjitlink, cls_name)
        for member in theirs:
            assert int(getattr(ours, member.name)) == int(member), f"{cls_name}.{member.name}"


# ---------------------------------------------------------------------------
# Lifetime and cuda.bindings compatibility


def test_destroy_takes_the_handle_like_cuda_bindings():
    handle = nvjitlink.create(1, ["-arch=sm_80"])
    assert nvjitlink.destroy(handle) is None
    assert int(handle) == 0, "the destroyed handle reads NULL, as the C call leaves it"


@same_nvjitlink
def test_same_cubin_as_cuda_bindings():
    a = ltoir(KERNEL, 80, b"kernel.cu")
    b = ltoir(HELPER, 80, b"helper.cu")
    ours = nvjitlink.create(2, ["-arch=sm_80", "-lto"])
    try:
        nvjitlink.add_data(ours, InputType.NVJITLINK_INPUT_LTOIR, a, len(a), "kernel")
        nvjitlink.add_data(ours, InputType.NVJITLINK_INPUT_LTOIR, b, len(b), "helper")
        nvjitlink.complete(ours)
        our_cubin = nvjitlink.get_linked_cubin(ours)
    finally:
        nvjitlink.destroy(ours)
    theirs = cuda_nvjitlink.create(2, ["-arch=sm_80", "-lto"])
    try:
        cuda_nvjitlink.add_data(theirs, cuda_nvjitlink.InputType.LTOIR, a, len(a), "kernel")
        cuda_nvjitlink.add_data(theirs, cuda_nvjitlink.InputType.LTOIR, b, len(b), "helper")
        cuda_nvjitlink.complete(theirs)
        buf = bytearray(cuda_nvjitlink.get_linked_cubin_size(theirs))
        cuda_nvjitlink.get_linked_cubin(theirs, buf)
    finally:
        cuda_nvjitlink.destroy(theirs)
    assert our_cubin == bytes(buf)


@needs_cuda_bindings
def test_cuda_bindings_call_forms_work():
    # Code written for cuda.bindings.nvjitlink passes ints as handles and caller buffers.
    a = nvrtc_compile(SINGLE, "-arch=sm_80", "-dlto")
    handle = nvjitlink.create(2, ["-arch=sm_80", "-lto"])
    address = int(handle)
    try:
        nvjitlink.add_data(address, 3, a, len(a), "single")
        nvjitlink.complete(address)
        size = nvjitlink.get_linked_cubin_size(address)
        buf = bytearray(size)
        nvjitlink.get_linked_cubin(address, buf)
        assert elf_arch(bytes(buf)) == 80
        lsize = nvjitlink.get_error_log_size(address)
        nvjitlink.get_error_log(address, bytearray(lsize))
    finally:
        nvjitlink.destroy(handle)


@needs_cuda_bindings
def test_error_class_shape_matches_cuda_bindings():
    with pytest.raises(cuda_nvjitlink.nvJitLinkError) as theirs:
        cuda_nvjitlink.create(1, ["-no-such-option"])
    with pytest.raises(nvjitlink.nvJitLinkError) as ours:
        nvjitlink.create(1, ["-no-such-option"])
    assert ours.value.status == theirs.value.status
