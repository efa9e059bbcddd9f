"""cubind.bindings.nvfatbin: a fat binary built from PTX, a cubin and LTO-IR made
by NVRTC, errors as nvFatbinError, enums, bad input, and the same bytes as
NVIDIA's cuda.bindings.nvfatbin from the same inputs (cuda-bindings 13.5, run in
a process of its own from the repository's .cuda-bindings-new). On a GPU the fat
binary loads through cubind.core's ObjectCode.from_fatbin and its kernel runs.
"""
import os
import struct
import subprocess
import sys

import pytest

import cubind
from cubind.bindings import nvfatbin, nvrtc

from conftest import NEWER_CUDA_BINDINGS, newer_cuda_bindings_env, newer_cuda_bindings_missing

HERE = os.path.dirname(os.path.abspath(__file__))

SOURCE = b"""
extern "C" __global__ void add_one(int* data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += 1;
}
"""

# The magic number of a fat binary's header (fatbinary_section.h: FATBIN_MAGIC).
FATBIN_MAGIC = 0xBA55ED50


def nvrtc_compile(*options, output):
    status, prog = nvrtc.nvrtcCreateProgram(SOURCE, b"add_one.cu", 0, None, None)
    assert status == 0
    try:
        opts = [o.encode() for o in options]
        status, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        assert status == 0, nvrtc.nvrtcGetProgramLog(prog)[1]
        return getattr(nvrtc, "nvrtcGet" + output)(prog)[1]
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


@pytest.fixture(scope="module")
def inputs():
    """PTX, a cubin and LTO-IR of one kernel for sm_80, from NVRTC."""
    return {
        "ptx": nvrtc_compile("-arch=compute_80", output="PTX"),
        "cubin": nvrtc_compile("-arch=sm_80", output="CUBIN"),
        "ltoir": nvrtc_compile("-arch=sm_80", "-dlto", output="LTOIR"),
    }


@pytest.fixture
def fatbin():
    made = []

    def make(*options):
        handle = nvfatbin.create(list(options), len(options))
        made.append(handle)
        return handle

    yield make
    for handle in made:
        nvfatbin.destroy(handle)


def build(make, inputs, arch="80"):
    handle = make()
    nvfatbin.add_ptx(handle, inputs["ptx"], len(inputs["ptx"]), arch, "kernel.ptx", "")
    nvfatbin.add_cubin(handle, inputs["cubin"], len(inputs["cubin"]), arch, "kernel.cubin")
    nvfatbin.add_ltoir(handle, inputs["ltoir"], len(inputs["ltoir"]), arch, "kernel.ltoir", "")
    return handle


# ---------------------------------------------------------------------------


def test_version():
    major, minor = nvfatbin.version()
    assert major >= 12 and minor >= 0


def test_builds_a_fatbin_of_ptx_cubin_and_ltoir(fatbin, inputs):
    handle = build(fatbin, inputs)
    size = nvfatbin.size(handle)
    blob = nvfatbin.get(handle)
    assert type(blob) is bytes and len(blob) == size
    magic, version, header_size, body_size = struct.unpack_from("<IHHQ", blob)
    assert magic == FATBIN_MAGIC
    assert header_size + body_size == size
    # Each input is an entry of the fat binary: the cubin's ELF is embedded whole.
    assert inputs["cubin"] in blob


def test_caller_buffer_is_filled_in_place(fatbin, inputs):
    handle = build(fatbin, inputs)
    buffer = bytearray(nvfatbin.size(handle))
    assert nvfatbin.get(handle, buffer) is None
    assert bytes(buffer) == nvfatbin.get(handle)


def test_compressed_fatbin_is_smaller(fatbin, inputs):
    plain = nvfatbin.get(build(fatbin, inputs))
    handle = fatbin("-compress-all")
    nvfatbin.add_ptx(handle, inputs["ptx"], len(inputs["ptx"]), "80", "kernel.ptx", "")
    assert len(nvfatbin.get(handle)) < len(plain)


def test_unrecognized_option_raises():
    with pytest.raises(nvfatbin.nvFatbinError) as info:
        nvfatbin.create(["-no-such-option"], 1)
    assert info.value.status == nvfatbin.Result.ERROR_UNRECOGNIZED_OPTION
    assert "ERROR_UNRECOGNIZED_OPTION" in str(info.value)


def test_cubin_of_another_arch_raises(fatbin, inputs):
    handle = fatbin()
    with pytest.raises(nvfatbin.nvFatbinError) as info:
        nvfatbin.add_cubin(handle, inputs["cubin"], len(inputs["cubin"]), "90", "kernel.cubin")
    assert info.value.status == nvfatbin.Result.ERROR_ELF_ARCH_MISMATCH


def test_error_string():
    text = nvfatbin.get_error_string(nvfatbin.Result.ERROR_ELF_SIZE_MISMATCH)
    assert "size" in text
    assert isinstance(nvfatbin.get_error_string(nvfatbin.Result.SUCCESS), str)


def test_result_enum_matches_the_header():
    assert int(nvfatbin.Result.SUCCESS) == 0
    assert int(nvfatbin.Result.ERROR_UNRECOGNIZED_OPTION) == 8
    assert int(nvfatbin.Result.ERROR_INTERNAL_PTX_OPTION) == 17
    assert nvfatbin.Result(2) is nvfatbin.Result.ERROR_ELF_ARCH_MISMATCH


def test_bad_input_is_a_python_exception(fatbin, inputs):
    handle = fatbin()
    ptx = inputs["ptx"]
    with pytest.raises(TypeError):
        nvfatbin.add_ptx(handle, object(), 10, "80", "k", "")  # neither a buffer nor an address
    with pytest.raises((ValueError, OverflowError)):
        nvfatbin.add_ptx(handle, ptx, len(ptx) + 100, "80", "k", "")  # size past the buffer
    with pytest.raises(TypeError):
        nvfatbin.add_ptx(handle, ptx, len(ptx), 80, "k", "")  # arch is a string
    with pytest.raises((TypeError, ValueError)):
        nvfatbin.create(["-compress-all"], 2)  # fewer options than counted
    with pytest.raises(TypeError):
        nvfatbin.get(handle, 12345)  # an int is no output buffer


def test_made_up_or_destroyed_handle_raises_instead_of_crashing():
    # nvFatbin reads a handle as its own object; the raw layer records the
    # handles nvFatbinCreate made until nvFatbinDestroy.
    for call in (nvfatbin.size, nvfatbin.get, nvfatbin.destroy):
        with pytest.raises(ValueError, match="handle: 123456 is not a live nvFatbinHandle: nvFatbinCreate made no"):
            call(123456)
    handle = nvfatbin.create([], 0)
    address = int(handle)
    assert nvfatbin.size(address) >= 0  # a live handle's address works
    nvfatbin.destroy(handle)
    with pytest.raises(ValueError, match="nvFatbinDestroy has destroyed it"):
        nvfatbin.size(address)


def test_null_handle_raises_nvfatbin_error():
    with pytest.raises(nvfatbin.nvFatbinError):
        nvfatbin.size(0)


def test_error_pickles():
    import pickle
    err = pickle.loads(pickle.dumps(nvfatbin.nvFatbinError(nvfatbin.Result.ERROR_INVALID_ARCH)))
    assert err.status == nvfatbin.Result.ERROR_INVALID_ARCH


def test_same_bytes_as_cuda_bindings(fatbin, inputs, tmp_path):
    if newer_cuda_bindings_missing():
        pytest.skip(newer_cuda_bindings_missing())
    for name, data in inputs.items():
        (tmp_path / name).write_bytes(data)
    ours = nvfatbin.get(build(fatbin, inputs))
    library = cubind.library_status("nvfatbin")["path"]
    proc = subprocess.run([sys.executable, os.path.join(HERE, "_nvfatbin_reference.py"), str(tmp_path), "80", library],
                          env={**os.environ, **newer_cuda_bindings_env()}, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().startswith(NEWER_CUDA_BINDINGS), proc.stdout  # NVIDIA's module, not another copy
    assert ours == (tmp_path / "fatbin").read_bytes()


@pytest.mark.gpu
def test_fatbin_loads_through_object_code_and_its_kernel_runs(fatbin):
    from cubind.core import Device, LaunchConfig, LegacyPinnedMemoryResource, ObjectCode, launch

    device = Device(0)
    device.set_current()
    arch = device.arch
    # PTX for compute_80 (JIT-compiled on any newer GPU) and a cubin for this GPU.
    ptx = nvrtc_compile("-arch=compute_80", output="PTX")
    cubin = nvrtc_compile(f"-arch=sm_{arch}", output="CUBIN")
    handle = fatbin()
    nvfatbin.add_ptx(handle, ptx, len(ptx), "80", "add_one.ptx", "")
    nvfatbin.add_cubin(handle, cubin, len(cubin), arch, "add_one.cubin")
    kernel = ObjectCode.from_fatbin(nvfatbin.get(handle)).get_kernel("add_one")

    n = 1000
    stream = device.create_stream()
    pinned = LegacyPinnedMemoryResource().allocate(4 * n, stream=stream)
    memoryview(pinned).cast("B")[:] = struct.pack(f"{n}i", *range(n))
    data = device.allocate(4 * n, stream=stream)
    pinned.copy_to(data, stream=stream)
    launch(stream, LaunchConfig(grid=(n + 127) // 128, block=128), kernel, data, n)
    data.copy_to(pinned, stream=stream)
    stream.sync()
    assert struct.unpack(f"{n}i", bytes(memoryview(pinned))) == tuple(range(1, n + 1))
