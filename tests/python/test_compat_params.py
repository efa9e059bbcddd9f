"""Parameters and outputs as cuda.bindings takes and gives them: caller buffers
made of bytes, (buffer, size) pairs, counts against their lists, integer
arguments (floats truncated, errors naming the parameter), callbacks given as
0, and the parameters renamed so they do not hide a builtin.

Each test asserts cubind's behaviour on its own; where cuda-bindings is
installed, it also runs the same call there and compares. No GPU needed.
"""
import ctypes
import inspect
import sys

import numpy as np
import pytest
from conftest import needs_same_cuda_reference

from cubind.bindings import driver, nvjitlink, nvrtc

try:
    from cuda.bindings import nvjitlink as cuda_nvjitlink
    from cuda.bindings import nvrtc as cuda_nvrtc
except ImportError:  # pragma: no cover
    cuda_nvrtc = cuda_nvjitlink = None


SUCCESS = nvrtc.nvrtcResult.NVRTC_SUCCESS
KERNEL = b'extern "C" __global__ void k(int *p) { *p = 42; }\n'
BROKEN = b"__global__ void k() { undefined_name; }\n"

GETTERS = [
    ("nvrtcGetPTX", "nvrtcGetPTXSize", [b"-arch=compute_80"]),
    ("nvrtcGetCUBIN", "nvrtcGetCUBINSize", [b"-arch=sm_80"]),
    ("nvrtcGetLTOIR", "nvrtcGetLTOIRSize", [b"-arch=sm_80", b"-dlto"]),
    ("nvrtcGetProgramLog", "nvrtcGetProgramLogSize", [b"-arch=sm_80", b"--no-such-option-here"]),
]


def compiled(module, source=KERNEL, options=()):
    status, prog = module.nvrtcCreateProgram(source, b"k.cu", 0, [], [])
    assert status == 0
    module.nvrtcCompileProgram(prog, len(options), list(options))
    return prog


@pytest.fixture
def program():
    made = []

    def make(source=KERNEL, options=()):
        prog = compiled(nvrtc, source, options)
        made.append(prog)
        return prog

    yield make
    for prog in made:
        nvrtc.nvrtcDestroyProgram(prog)


# ---------------------------------------------------------------------------
# 1. Caller buffers made of bytes, filled in place; (status,) when given


@pytest.mark.parametrize("getter,sizer,options", GETTERS)
def test_bytes_buffer_is_filled_and_the_call_returns_the_status_alone(program, getter, sizer, options):
    prog = program(options=options)
    status, size = getattr(nvrtc, sizer)(prog)
    assert status is SUCCESS
    if size < 2:
        pytest.skip(f"{getter} has {size} byte(s) here")
    fresh = getattr(nvrtc, getter)(prog)
    assert fresh[0] is SUCCESS and type(fresh[1]) is bytes and len(fresh[1]) == size

    buf = b" " * size
    result = getattr(nvrtc, getter)(prog, buf)
    assert result == (SUCCESS,) and len(result) == 1
    assert buf == fresh[1]

    err, = getattr(nvrtc, getter)(prog, bytearray(size))  # the idiom unpacks one value
    assert err is SUCCESS


@needs_same_cuda_reference
@pytest.mark.parametrize("getter,sizer,options", GETTERS)
def test_bytes_buffer_as_in_cuda_bindings(program, getter, sizer, options):
    ours = program(options=options)
    theirs = compiled(cuda_nvrtc, options=options)
    try:
        size = getattr(nvrtc, sizer)(ours)[1]
        their_size = getattr(cuda_nvrtc, sizer)(theirs)[1]
        if size < 2 or size != their_size:
            pytest.skip("sizes differ between the two NVRTC copies, or too small for bytes")
        mine, other = b" " * size, b" " * size
        got = getattr(nvrtc, getter)(ours, mine)
        want = getattr(cuda_nvrtc, getter)(theirs, other)
        assert len(got) == len(want) == 1
        assert int(got[0]) == int(want[0]) == 0
        if getter != "nvrtcGetCUBIN":  # a CUBIN may embed the program's address
            assert mine == other
    finally:
        cuda_nvrtc.nvrtcDestroyProgram(theirs)


def test_shared_bytes_objects_are_never_written(program):
    prog = program()
    one = b" "
    for shared in (b"", one, b"x"[:1], bytes([0x20])):
        with pytest.raises(ValueError, match="reports") as info:
            nvrtc.nvrtcGetPTX(prog, shared)
        assert "ptx" in str(info.value)
    assert one == b" " and b" "[0] == 0x20 and b"" == bytes()
    # An output of one byte (an empty log's NUL) in the shared b" " succeeds
    # and writes a private byte instead, where cuda.bindings writes b" " itself.
    log_size = nvrtc.nvrtcGetProgramLogSize(prog)[1]
    assert log_size == 1
    assert nvrtc.nvrtcGetProgramLog(prog, b" " * log_size) == (SUCCESS,)
    assert b" " * 1 == bytes([0x20]) and b"x"[:1] == bytes([0x78])


def test_empty_output_takes_empty_bytes_and_writes_nothing(program):
    # -arch=compute_80 makes no CUBIN: its size is 0, and b" " * 0 is the
    # shared b"", which the call must not touch (cuda.bindings returns (status,)).
    prog = program(options=[b"-arch=compute_80"])
    assert nvrtc.nvrtcGetCUBINSize(prog) == (SUCCESS, 0)
    assert nvrtc.nvrtcGetCUBIN(prog, b" " * 0) == (SUCCESS,)
    assert nvrtc.nvrtcGetCUBIN(prog, b" ") == (SUCCESS,)
    assert b"" == bytes() and b" " == bytes([0x20])


@needs_same_cuda_reference
def test_empty_output_as_in_cuda_bindings():
    theirs = compiled(cuda_nvrtc, options=[b"-arch=compute_80"])
    try:
        want = cuda_nvrtc.nvrtcGetCUBIN(theirs, b"")
    finally:
        cuda_nvrtc.nvrtcDestroyProgram(theirs)
    ours = compiled(nvrtc, options=[b"-arch=compute_80"])
    try:
        got = nvrtc.nvrtcGetCUBIN(ours, b"")
    finally:
        nvrtc.nvrtcDestroyProgram(ours)
    assert len(got) == len(want) == 1 and int(got[0]) == int(want[0])


def test_tensor_map_strides_take_rank_minus_one_items():
    # globalStrides holds tensorRank - 1 strides; a list of that length gets
    # past the conversions to the library (absent here).
    args = dict(tensorDataType=driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_FLOAT32, globalAddress=0,
                interleave=driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                swizzle=driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
                l2Promotion=driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
                oobFill=driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)

    def encode(rank, strides):
        return driver.cuTensorMapEncodeTiled(args["tensorDataType"], rank, 0, [64] * rank, strides, [8] * rank,
                                             [1] * rank, args["interleave"], args["swizzle"],
                                             args["l2Promotion"], args["oobFill"])

    for rank, strides in ((2, [256]), (1, []), (1, None), (3, [256, 4096])):
        try:
            encode(rank, strides)
        except RuntimeError as e:
            assert "libcuda" in str(e)
    with pytest.raises(ValueError, match="globalStrides"):
        encode(3, [256])


def test_too_small_bytes_buffer_is_refused_untouched(program):
    prog = program()
    size = nvrtc.nvrtcGetPTXSize(prog)[1]
    small = b"\xab" * (size - 1)
    with pytest.raises(ValueError) as info:
        nvrtc.nvrtcGetPTX(prog, small)
    assert str(size) in str(info.value) and str(size - 1) in str(info.value)
    assert small == b"\xab" * (size - 1)


def test_no_buffer_still_returns_new_bytes(program):
    prog = program()
    status, ptx = nvrtc.nvrtcGetPTX(prog)
    assert status is SUCCESS and type(ptx) is bytes and b".entry k" in ptx
    status, ptx = nvrtc.nvrtcGetPTX(prog, None)
    assert status is SUCCESS and type(ptx) is bytes


def test_failure_with_a_buffer_returns_the_status_alone():
    # A NULL program: the size query fails, and the arity still follows the buffer.
    invalid = nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_PROGRAM
    assert nvrtc.nvrtcGetPTX(None, b" " * 64) == (invalid,)
    assert nvrtc.nvrtcGetPTX(None, bytearray(64)) == (invalid,)
    assert nvrtc.nvrtcGetPTX(None) == (invalid, None)


@needs_same_cuda_reference
def test_failure_with_a_buffer_as_in_cuda_bindings():
    theirs = cuda_nvrtc.nvrtcGetPTX(None, b" " * 64)
    ours = nvrtc.nvrtcGetPTX(None, b" " * 64)
    assert len(theirs) == len(ours) == 1 and int(theirs[0]) == int(ours[0])


def _linked(linker_options=("-arch=sm_80",)):
    status, prog = nvrtc.nvrtcCreateProgram(KERNEL, b"k.cu", 0, [], [])
    nvrtc.nvrtcCompileProgram(prog, 1, [b"-arch=compute_80"])
    ptx = nvrtc.nvrtcGetPTX(prog)[1]
    nvrtc.nvrtcDestroyProgram(prog)
    handle = nvjitlink.create(len(linker_options), list(linker_options))
    nvjitlink.add_data(handle, nvjitlink.InputType.PTX, ptx, len(ptx), "k")
    nvjitlink.complete(handle)
    return handle, ptx


def test_nvjitlink_buffers_return_none_as_in_cuda_bindings():
    handle, _ = _linked()
    try:
        fresh = nvjitlink.get_linked_cubin(handle)
        assert type(fresh) is bytes and fresh[:4] == b"\x7fELF"
        for buf in (b" " * len(fresh), bytearray(len(fresh))):
            assert nvjitlink.get_linked_cubin(handle, buf) is None
            assert bytes(buf) == fresh
        size = nvjitlink.get_info_log_size(handle)
        if size > 1:
            log = b" " * size
            assert nvjitlink.get_info_log(handle, log) is None
            assert log == nvjitlink.get_info_log(handle)
        with pytest.raises(ValueError, match="cubin holds 0 bytes"):
            nvjitlink.get_linked_cubin(handle, b"")
    finally:
        nvjitlink.destroy(handle)


@needs_same_cuda_reference
def test_nvjitlink_buffer_result_matches_cuda_bindings():
    handle, ptx = _linked()
    theirs = cuda_nvjitlink.create(1, ["-arch=sm_80"])
    try:
        cuda_nvjitlink.add_data(theirs, cuda_nvjitlink.InputType.PTX, ptx, len(ptx), "k")
        cuda_nvjitlink.complete(theirs)
        size = cuda_nvjitlink.get_linked_cubin_size(theirs)
        # cuda.bindings' nvjitlink takes writable buffers only; cubind takes bytes too.
        assert cuda_nvjitlink.get_linked_cubin(theirs, bytearray(size)) is None
        assert nvjitlink.get_linked_cubin(handle, bytearray(size)) is None
        assert nvjitlink.get_linked_cubin(handle, b" " * size) is None
    finally:
        cuda_nvjitlink.destroy(theirs)
        nvjitlink.destroy(handle)


# ---------------------------------------------------------------------------
# 2. A size larger than its buffer


def test_size_larger_than_the_data_is_refused_naming_both():
    handle = nvjitlink.create(1, ["-arch=sm_80"])
    try:
        for size in (10**9, 100, 4):
            with pytest.raises(ValueError) as info:
                nvjitlink.add_data(handle, nvjitlink.InputType.PTX, b"abc", size, "x")
            message = str(info.value)
            assert "data" in message and "size" in message and str(size) in message and "3" in message
        with pytest.raises(OverflowError, match="size"):
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, b"abc", 2**64, "x")
        with pytest.raises(OverflowError, match="size"):
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, b"abc", -1, "x")
    finally:
        nvjitlink.destroy(handle)


@needs_same_cuda_reference
def test_size_larger_than_the_data_raises_what_cuda_bindings_raises():
    theirs = cuda_nvjitlink.create(1, ["-arch=sm_80"])
    ours = nvjitlink.create(1, ["-arch=sm_80"])
    try:
        with pytest.raises(ValueError):
            cuda_nvjitlink.add_data(theirs, cuda_nvjitlink.InputType.PTX, b"abc", 10**9, "x")
        with pytest.raises(ValueError):
            nvjitlink.add_data(ours, nvjitlink.InputType.PTX, b"abc", 10**9, "x")
    finally:
        cuda_nvjitlink.destroy(theirs)
        nvjitlink.destroy(ours)


def test_size_within_the_data_is_passed_on():
    handle, ptx = _linked()
    nvjitlink.destroy(handle)
    handle = nvjitlink.create(1, ["-arch=sm_80"])
    try:
        padded = bytearray(ptx) + b"\0" * 16
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, padded, len(ptx), "k")
        nvjitlink.complete(handle)
        assert nvjitlink.get_linked_cubin(handle)[:4] == b"\x7fELF"
    finally:
        nvjitlink.destroy(handle)


# ---------------------------------------------------------------------------
# 12. Errors naming the parameter; counts against their lists; integers


def _create(module, num, headers, names):
    return module.nvrtcCreateProgram(KERNEL, b"k.cu", num, headers, names)


def test_count_too_large_for_the_int_names_the_parameter():
    for value in (2**64, 2**31):
        with pytest.raises(OverflowError, match="numHeaders"):
            _create(nvrtc, value, [], [])


@needs_same_cuda_reference
@pytest.mark.parametrize("value", [2**64, 2**31, "1", None])
def test_bad_count_raises_the_exception_type_of_cuda_bindings(value):
    with pytest.raises(Exception) as theirs:
        _create(cuda_nvrtc, value, [b"a.h"], [b"a.h"])
    with pytest.raises(Exception) as ours:
        _create(nvrtc, value, [b"a.h"], [b"a.h"])
    assert type(theirs.value) is type(ours.value) or isinstance(ours.value, type(theirs.value))
    assert "numHeaders" in str(ours.value)


def test_count_larger_than_the_list_is_an_error_of_both_kinds():
    with pytest.raises(ValueError, match="numHeaders") as info:
        _create(nvrtc, 2, [b"a"], [b"b"])
    assert isinstance(info.value, RuntimeError), "cuda.bindings raises RuntimeError here"
    assert "headers" in str(info.value)


@needs_same_cuda_reference
def test_count_larger_than_the_list_raises_as_cuda_bindings_does():
    with pytest.raises(RuntimeError):
        _create(cuda_nvrtc, 2, [b"a"], [b"b"])
    with pytest.raises(RuntimeError):
        _create(nvrtc, 2, [b"a"], [b"b"])


def test_count_smaller_than_the_list_reads_count_items():
    # As in cuda.bindings: the library reads `count` items; a longer list works.
    status, prog = _create(nvrtc, 0, [b"a"], [b"b"])
    assert status is SUCCESS
    nvrtc.nvrtcDestroyProgram(prog)


def test_bytes_where_a_list_goes_names_the_parameter(program):
    prog = program()
    with pytest.raises(TypeError) as info:
        nvrtc.nvrtcCompileProgram(prog, 1, b"-arch=sm_90")
    message = str(info.value)
    assert "options" in message and "list" in message and "bytes" in message
    with pytest.raises(TypeError, match="options"):
        nvrtc.nvrtcCompileProgram(prog, 1, "-arch=sm_90")
    with pytest.raises(TypeError, match="options"):
        nvrtc.nvrtcCompileProgram(prog, 1, 5)


@needs_same_cuda_reference
def test_bytes_where_a_list_goes_is_a_type_error_in_both(program):
    theirs = compiled(cuda_nvrtc)
    try:
        with pytest.raises(TypeError):
            cuda_nvrtc.nvrtcCompileProgram(theirs, 1, b"-arch=sm_90")
    finally:
        cuda_nvrtc.nvrtcDestroyProgram(theirs)
    with pytest.raises(TypeError):
        nvrtc.nvrtcCompileProgram(program(), 1, b"-arch=sm_90")


@pytest.mark.parametrize("module_name", ["cubind", "cuda"])
def test_float_count_truncates_as_in_cuda_bindings(module_name):
    module = nvrtc if module_name == "cubind" else cuda_nvrtc
    if module is None:
        pytest.skip("cuda-bindings is not installed")
    status, prog = _create(module, 1.7, [b"int x;"], [b"a.h"])
    assert int(status) == 0
    module.nvrtcDestroyProgram(prog)


def test_integer_arguments_convert_as_cuda_bindings_does():
    # A float truncates; __index__ works; str and None are TypeErrors naming the
    # parameter; negative and too large unsigned values are OverflowErrors.
    class Two:
        def __index__(self):
            return 2

    handle = nvjitlink.create(1, ["-arch=sm_80"])
    try:
        with pytest.raises(ValueError, match="size"):  # 2.9 -> 2 bytes of b"a" is too many
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, b"a", 2.9, "x")
        with pytest.raises(ValueError, match="size"):
            nvjitlink.add_data(handle, nvjitlink.InputType.PTX, b"a", Two(), "x")
        for bad, exc in (("1", TypeError), (None, TypeError), (-1, OverflowError), (2**64, OverflowError),
                         (float("nan"), ValueError), (float("inf"), OverflowError)):
            with pytest.raises(exc, match="size"):
                nvjitlink.add_data(handle, nvjitlink.InputType.PTX, b"abc", bad, "x")
    finally:
        nvjitlink.destroy(handle)


@needs_same_cuda_reference
@pytest.mark.parametrize("bad", ["1", None, -1, 2**64])
def test_integer_argument_errors_have_cuda_bindings_types(bad):
    theirs = cuda_nvjitlink.create(1, ["-arch=sm_80"])
    ours = nvjitlink.create(1, ["-arch=sm_80"])
    try:
        with pytest.raises(Exception) as want:
            cuda_nvjitlink.add_data(theirs, cuda_nvjitlink.InputType.PTX, b"abc", bad, "x")
        with pytest.raises(Exception) as got:
            nvjitlink.add_data(ours, nvjitlink.InputType.PTX, b"abc", bad, "x")
        assert isinstance(got.value, type(want.value)), (got.value, want.value)
    finally:
        cuda_nvjitlink.destroy(theirs)
        nvjitlink.destroy(ours)


def test_integer_errors_name_the_parameter_in_the_driver():
    # Conversion happens before the library is asked for anything, so these
    # need no driver.
    with pytest.raises(OverflowError, match="ordinal"):
        driver.cuDeviceGet(2**40)
    with pytest.raises(TypeError, match="ordinal"):
        driver.cuDeviceGet("0")
    with pytest.raises(OverflowError, match="gridDimX"):
        driver.cuLaunchKernel(0, -1, 1, 1, 1, 1, 1, 0, 0, None, None)
    with pytest.raises(OverflowError, match="blockDimZ"):
        driver.cuLaunchKernel(0, 1, 1, 1, 1, 1, 2**32, 0, 0, None, None)
    with pytest.raises(TypeError, match="sharedMemBytes"):
        driver.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, "0", 0, None, None)


def _conversion_error(call):
    """The error converting the arguments raised, or None where they converted
    (the library then answers, or is absent: either way past conversion)."""
    try:
        call()
    except (OverflowError, TypeError, ValueError) as e:
        return e
    except Exception:
        pass
    return None


class _Index:
    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


def test_integers_of_every_size_convert_on_both_sides_of_the_one_digit_path():
    # An int of one digit (under 2**30) is read inline; larger ones, ints of
    # other types and objects with __index__ take the general way. Each value
    # must convert, or be refused naming its parameter, the same on both.
    def launch(grid_x=1, extra=0):
        return lambda: driver.cuLaunchKernel(0, grid_x, 1, 1, 1, 1, 1, 0, 0, None, extra)

    for fits in (0, 2**30 - 1, 2**30, 2**31, 2**32 - 1, True, _Index(2**31), np.uint32(2**32 - 1)):
        assert _conversion_error(launch(grid_x=fits)) is None, fits
    for over in (-1, -(2**30), 2**32, 2**64, _Index(-1), np.int64(2**32)):
        error = _conversion_error(launch(grid_x=over))
        assert isinstance(error, OverflowError) and "gridDimX" in str(error), (over, error)
    for fits in (-(2**31), -(2**30) - 1, -(2**30), 2**30, 2**31 - 1):
        assert _conversion_error(lambda: driver.cuDeviceGet(fits)) is None, fits
    for over in (-(2**31) - 1, 2**31, 2**63):
        error = _conversion_error(lambda: driver.cuDeviceGet(over))
        assert isinstance(error, OverflowError) and "ordinal" in str(error), (over, error)
    # An address (extra): None, 0 and one of many digits go through; a
    # negative one is refused by name.
    for fits in (None, 0, 2**30, 2**47, 2**64 - 1):
        assert _conversion_error(launch(extra=fits)) is None, fits
    for bad in (-1, -(2**40)):
        error = _conversion_error(launch(extra=bad))
        assert isinstance(error, ValueError) and "extra" in str(error), (bad, error)


# ---------------------------------------------------------------------------
# Parameters that would hide a builtin; callbacks given as 0


def test_type_parameter_is_named_typename_and_does_not_hide_the_builtin():
    assert list(inspect.signature(driver.cuDeviceGetDevResource).parameters) == ["device", "typename"]
    # Before any library call the device converts with type(): a CUdevice and
    # an int both get past it to the library (or its absence).
    for device in (0, driver.CUdevice(0)):
        try:
            driver.cuDeviceGetDevResource(device, driver.CUdevResourceType.CU_DEV_RESOURCE_TYPE_SM)
        except TypeError as e:  # pragma: no cover - the failure this guards against
            pytest.fail(f"type() is shadowed: {e}")
        except RuntimeError:
            pass  # no driver here


def test_callback_zero_or_none_passes_null_and_other_ints_are_refused():
    for fn in (0, None):
        try:
            driver.cuLaunchHostFunc(None, fn, None)
        except TypeError as e:  # pragma: no cover
            pytest.fail(f"{fn!r} refused: {e}")
        except RuntimeError:
            pass  # no driver here
    with pytest.raises(TypeError, match="fn"):
        driver.cuLaunchHostFunc(None, 0x1234, None)


def test_im2col_pixel_box_corners_are_lists_of_rank_minus_two():
    args = dict(tensorDataType=driver.CUtensorMapDataType.CU_TENSOR_MAP_DATA_TYPE_UINT8, tensorRank=4,
                globalAddress=0, globalDim=[1, 1, 1, 1], globalStrides=[16, 16, 16],
                pixelBoxLowerCorner=[0, 0], pixelBoxUpperCorner=[0, 0], channelsPerPixel=1, pixelsPerColumn=1,
                elementStrides=[1, 1, 1, 1], interleave=0, swizzle=0, l2Promotion=0, oobFill=0)
    for name, value, error in (("pixelBoxLowerCorner", 0, TypeError), ("pixelBoxUpperCorner", [0], ValueError)):
        with pytest.raises(error, match=name):
            driver.cuTensorMapEncodeIm2col(**dict(args, **{name: value}))


def test_border_color_is_four_floats():
    with pytest.raises(TypeError, match="pBorderColor: expected a list of floats"):
        driver.cuTexRefSetBorderColor(0, 1.5)
    with pytest.raises(ValueError, match="pBorderColor"):
        driver.cuTexRefSetBorderColor(0, [0.0, 0.0])


def test_string_outputs_need_room_for_their_nul():
    # The driver writes a device's name even into a buffer of length 0 (past
    # it, on an H100): a length below 1 is refused before any library call.
    for length in (0, 0.5):
        with pytest.raises(ValueError, match="length must be at least 1"):
            driver.cuDeviceGetName(length, 0)
    with pytest.raises(ValueError, match="length must be at least 1"):
        driver.cuDeviceGetPCIBusId(0, 0)
