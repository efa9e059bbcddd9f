"""What of cubind.core runs without a GPU: option dataclasses and their
checks, LaunchConfig, Buffer over memory owned elsewhere, memory resources
written in Python, streams given by handle, and launch's argument checks that
come before any CUDA call."""
import ctypes
import gc
import sys

import pytest

from cubind.core import (
    LEGACY_DEFAULT_STREAM,
    PER_THREAD_DEFAULT_STREAM,
    Buffer,
    DeviceMemoryResourceOptions,
    EventOptions,
    LaunchConfig,
    LinkerOptions,
    MemoryResource,
    PinnedMemoryResource,
    ProgramOptions,
    Stream,
    StreamOptions,
    launch,
)


class ForeignStream:
    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


class HostResource(MemoryResource):
    """Host memory from ctypes, recording every call, as a user's resource would."""

    def __init__(self):
        self.blocks = {}
        self.calls = []

    def allocate(self, size, *, stream):
        block = (ctypes.c_char * size)()
        address = ctypes.addressof(block)
        self.blocks[address] = block
        self.calls.append(("allocate", size, stream))
        return Buffer.from_handle(address, size, self, stream=stream)

    def deallocate(self, ptr, size, *, stream):
        self.calls.append(("deallocate", size, stream))
        del self.blocks[ptr]

    @property
    def is_device_accessible(self):
        return False

    @property
    def is_host_accessible(self):
        return True

    @property
    def device_id(self):
        return -1


def test_option_defaults_are_cuda_cores():
    assert StreamOptions() == StreamOptions(nonblocking=True, priority=None)
    assert EventOptions() == EventOptions(timing_enabled=False, blocking_sync=False, ipc_enabled=False)
    assert DeviceMemoryResourceOptions() == DeviceMemoryResourceOptions(ipc_enabled=False, max_size=0)
    assert ProgramOptions(arch="sm_80").name == "default_program"
    assert LinkerOptions(arch="sm_80").name == "<default linker>"


def test_program_options_type_errors_name_the_field():
    with pytest.raises(TypeError, match="ProgramOptions.max_register_count"):
        ProgramOptions(arch="sm_90", max_register_count="32").as_bytes("nvrtc")
    with pytest.raises(TypeError, match="ProgramOptions.debug"):
        ProgramOptions(arch="sm_90", debug="yes").as_bytes("nvrtc")
    with pytest.raises(TypeError, match="ProgramOptions.define_macro"):
        ProgramOptions(arch="sm_90", define_macro=3).as_bytes("nvrtc")
    with pytest.raises(TypeError, match="ProgramOptions.diag_suppress"):
        ProgramOptions(arch="sm_90", diag_suppress=["177"]).as_bytes("nvrtc")
    with pytest.raises(TypeError, match="ProgramOptions.arch"):
        ProgramOptions(arch=90)


def test_program_options_backends():
    options = ProgramOptions(arch="sm_90", debug=True)
    assert options.as_bytes("nvrtc") == [b"-arch=sm_90", b"--device-debug"]
    assert options.as_bytes("NVRTC", "cubin") == options.as_bytes("nvrtc")
    with pytest.raises(NotImplementedError, match="NVVM"):
        options.as_bytes("nvvm")
    with pytest.raises(ValueError, match="Unknown backend"):
        options.as_bytes("clang")
    with pytest.raises(ValueError, match="NVVM backend"):
        ProgramOptions(arch="sm_90", use_libdevice=True).as_bytes("nvrtc")
    with pytest.raises(RuntimeError, match="13.3"):
        ProgramOptions(arch="sm_90", use_bundled_headers=True)


def test_linker_options_checks():
    with pytest.raises(ValueError, match="optimization_level is 4"):
        LinkerOptions(arch="sm_90", optimization_level=4).as_bytes()
    with pytest.raises(ValueError, match="nvjitlink"):
        LinkerOptions(arch="sm_90").as_bytes("driver")
    with pytest.warns(DeprecationWarning, match="numba_debug"):
        LinkerOptions(arch="sm_90", numba_debug=True)


def test_launch_config_values_and_errors():
    config = LaunchConfig(grid=(2, 3), block=64, shmem_size=128, cluster=2)
    assert (config.grid, config.block, config.cluster, config.shmem_size) == ((2, 3, 1), (64, 1, 1), (2, 1, 1), 128)
    assert config == LaunchConfig(grid=(2, 3, 1), block=(64,), shmem_size=128, cluster=(2, 1, 1))
    assert hash(config) == hash(LaunchConfig(grid=(2, 3, 1), block=(64,), shmem_size=128, cluster=(2, 1, 1)))
    assert LaunchConfig(grid=1, block=1).shmem_size == 0
    with pytest.raises(ValueError, match="grid value must be >= 1"):
        LaunchConfig(grid=(1, 0), block=1)
    with pytest.raises(ValueError, match="32 bits"):
        LaunchConfig(grid=2**32, block=1)
    with pytest.raises(ValueError, match="shmem_size is -1"):
        LaunchConfig(grid=1, block=1, shmem_size=-1)
    with pytest.raises(TypeError, match="shmem_size"):
        LaunchConfig(grid=1, block=1, shmem_size=1.0)
    with pytest.raises(ValueError, match="block"):
        LaunchConfig(grid=1, block=True)
    with pytest.raises(NotImplementedError, match="programmatic_stream_serialization"):
        LaunchConfig(grid=1, block=1, programmatic_stream_serialization=True)



def test_a_launch_config_made_at_every_launch_is_the_same_immutable_config():
    # LaunchConfig(grid=..., block=...[, shmem_size=...]) with exact ints is
    # kept and given again for the same values; it is immutable, so sharing
    # it changes nothing a program can see but identity.
    first = LaunchConfig(grid=4, block=128)
    assert LaunchConfig(grid=4, block=128) is first
    assert LaunchConfig(block=128, grid=4) is first
    assert LaunchConfig(grid=4, block=128, shmem_size=0) is first
    assert LaunchConfig(grid=4, block=128, shmem_size=64) is not first
    assert LaunchConfig(grid=4, block=128, shmem_size=64).shmem_size == 64
    other = LaunchConfig(grid=5, block=128)
    assert (other.grid, other.block) == ((5, 1, 1), (128, 1, 1))
    # Ints of one internal digit and of more, up to the 32-bit limit, are kept alike.
    for grid in (2**30 - 1, 2**30, 2**31, 2**32 - 1):
        big = LaunchConfig(grid=grid, block=1, shmem_size=2**32 - 1)
        assert big.grid == (grid, 1, 1) and big.shmem_size == 2**32 - 1
        assert LaunchConfig(grid=grid, block=1, shmem_size=2**32 - 1) is big
    with pytest.raises(ValueError, match="grid"):
        LaunchConfig(grid=-1, block=1)
    # Every other form is made anew, and checked as before.
    assert LaunchConfig(grid=(4,), block=128) == first and LaunchConfig(grid=(4,), block=128) is not first
    assert LaunchConfig(4, None, 128) == first
    with pytest.raises(ValueError, match="grid value must be >= 1"):
        LaunchConfig(grid=0, block=1)
    with pytest.raises(ValueError, match="32 bits"):
        LaunchConfig(grid=1, block=2**32)
    with pytest.raises(ValueError, match="grid"):
        LaunchConfig(grid=True, block=1)
    with pytest.raises(TypeError, match="unexpected keyword|got an unexpected"):
        LaunchConfig(grid=1, block=1, blocks=2)
    # A config initialized again holds its new values and is no longer given
    # for its old ones.
    first.__init__(grid=8, block=64)
    assert (first.grid, first.block) == ((8, 1, 1), (64, 1, 1))
    again = LaunchConfig(grid=4, block=128)
    assert again is not first and again.grid == (4, 1, 1)

    # A loop that passes the same int objects again gets the config before any
    # value is read; initialized again, it is not given for them any more.
    g, b = 2**31 + 7, 256
    made = LaunchConfig(grid=g, block=b)
    assert all(LaunchConfig(grid=g, block=b) is made for _ in range(3))
    made.__init__(grid=3, block=3)
    remade = LaunchConfig(grid=g, block=b)
    assert remade is not made and (remade.grid, remade.block) == ((g, 1, 1), (b, 1, 1))
    assert LaunchConfig(grid=int(str(g)), block=b) is remade
    assert LaunchConfig(grid=g, block=b, shmem_size=0) is remade
    assert LaunchConfig(grid=g, block=b, shmem_size=16) is not remade

    class Mine(LaunchConfig):
        pass
    assert type(Mine(grid=4, block=128)) is Mine

def test_default_streams_and_foreign_streams_by_handle():
    assert LEGACY_DEFAULT_STREAM.__cuda_stream__() == (0, 1)
    assert PER_THREAD_DEFAULT_STREAM.__cuda_stream__() == (0, 2)
    LEGACY_DEFAULT_STREAM.close()
    assert not LEGACY_DEFAULT_STREAM.is_closed
    stream = Stream.from_handle(0x1234)
    assert stream.__cuda_stream__() == (0, 0x1234)
    assert stream == Stream.from_handle(0x1234) and hash(stream) == hash(Stream.from_handle(0x1234))
    stream.close()
    assert stream.is_closed
    with pytest.raises(RuntimeError, match="closed"):
        stream.sync()
    with pytest.raises(ValueError, match="LEGACY_DEFAULT_STREAM"):
        Stream.from_handle(0)
    with pytest.raises(RuntimeError, match="cannot be instantiated directly"):
        Stream()


def test_buffer_over_foreign_memory():
    block = (ctypes.c_char * 64)()
    buffer = Buffer.from_handle(ctypes.addressof(block), 64, owner=block)
    assert buffer.handle == ctypes.addressof(block)
    assert buffer.size == 64 and buffer.owner is block and buffer.memory_resource is None
    assert buffer.is_device_accessible and not buffer.is_host_accessible
    with pytest.raises(ValueError, match="both"):
        Buffer.from_handle(1, 1, HostResource(), owner=block)
    with pytest.raises(TypeError, match="MemoryResource"):
        Buffer.from_handle(1, 1, mr=object())
    with buffer:
        pass
    assert buffer.is_closed and buffer.size == 0
    with pytest.raises(RuntimeError, match="closed"):
        buffer.fill(0, stream=LEGACY_DEFAULT_STREAM)


def test_copy_and_fill_check_arguments_before_any_cuda_call():
    a = Buffer.from_handle(0x1000, 64)
    b = Buffer.from_handle(0x2000, 32)
    with pytest.raises(ValueError, match="source has 64 bytes, the destination 32"):
        a.copy_to(b, stream=LEGACY_DEFAULT_STREAM)
    with pytest.raises(ValueError, match="sizes mismatch"):
        b.copy_from(a, stream=LEGACY_DEFAULT_STREAM)
    with pytest.raises(TypeError, match="stream"):
        a.copy_to(a, stream=None)
    with pytest.raises(TypeError, match="Buffer"):
        a.copy_from(b"x", stream=LEGACY_DEFAULT_STREAM)
    with pytest.raises(OverflowError, match="0..255"):
        a.fill(256, stream=LEGACY_DEFAULT_STREAM)
    with pytest.raises(ValueError, match="1, 2 or 4"):
        a.fill(ctypes.c_double(1.0), stream=LEGACY_DEFAULT_STREAM)
    with pytest.raises(ValueError, match="not a multiple of 4"):
        Buffer.from_handle(0x1000, 6).fill(ctypes.c_uint32(7), stream=LEGACY_DEFAULT_STREAM)
    with pytest.raises(TypeError, match="buffer protocol"):
        a.fill(object(), stream=LEGACY_DEFAULT_STREAM)
    with pytest.raises(ValueError, match="needs dst"):
        a.copy_to(stream=LEGACY_DEFAULT_STREAM)


def test_a_python_memory_resource_allocates_and_frees_through_its_methods():
    mr = HostResource()
    stream = ForeignStream(0x77)
    buffer = mr.allocate(16, stream=stream)
    assert buffer.memory_resource is mr and buffer.size == 16
    assert buffer.is_host_accessible and not buffer.is_device_accessible and buffer.device_id == -1
    view = memoryview(buffer)
    view[:5] = b"hello"
    assert ctypes.string_at(buffer.handle, 5) == b"hello"
    with pytest.raises(BufferError, match="memoryview"):
        buffer.close()
    view.release()
    other = LEGACY_DEFAULT_STREAM
    buffer.set_deallocation_stream(other)
    buffer.close()
    assert mr.calls == [("allocate", 16, stream), ("deallocate", 16, other)]
    assert not mr.blocks


def test_a_python_memory_resource_frees_a_collected_buffer():
    mr = HostResource()
    mr.allocate(8, stream=LEGACY_DEFAULT_STREAM)
    gc.collect()
    assert [c[0] for c in mr.calls] == ["allocate", "deallocate"]
    assert not mr.blocks


def test_the_base_memory_resource_asks_for_an_implementation():
    class Incomplete(MemoryResource):
        pass

    with pytest.raises(NotImplementedError, match="Incomplete must implement allocate"):
        Incomplete().allocate(8, stream=LEGACY_DEFAULT_STREAM)
    with pytest.raises(NotImplementedError, match="device_id"):
        Incomplete().device_id


def test_pinned_resource_options_are_checked_before_the_pool_is_made():
    # The pool itself needs the driver (test_core_ipc_cpu.py runs it on the stand-in).
    from cubind.core import PinnedMemoryResourceOptions

    with pytest.raises(ValueError, match="numa_id must be >= 0"):
        PinnedMemoryResource(PinnedMemoryResourceOptions(ipc_enabled=True, numa_id=-3))
    with pytest.raises(TypeError, match="PinnedMemoryResourceOptions"):
        PinnedMemoryResource(options=[])


def test_launch_checks_its_arguments_before_any_cuda_call():
    with pytest.raises(TypeError, match="__cuda_stream__"):
        launch(object(), LaunchConfig(grid=1, block=1), None)
    with pytest.raises(TypeError, match="LaunchConfig"):
        launch(LEGACY_DEFAULT_STREAM, (1, 1), None)
    with pytest.raises(TypeError, match="Kernel"):
        launch(LEGACY_DEFAULT_STREAM, LaunchConfig(grid=1, block=1), "kernel")
    with pytest.raises(TypeError, match="version, handle"):
        launch(ForeignStream.__new__(type("Bad", (), {"__cuda_stream__": lambda self: 5})),
               LaunchConfig(grid=1, block=1), None)


def test_dlpack_export_of_host_memory_is_a_shared_int8_view():
    np = pytest.importorskip("numpy")
    mr = HostResource()
    buffer = mr.allocate(16, stream=LEGACY_DEFAULT_STREAM)
    memoryview(buffer)[:3] = b"\x01\x02\x03"
    assert buffer.__dlpack_device__() == (1, 0)
    references = sys.getrefcount(buffer)
    for max_version in (None, (1, 0)):
        view = np.from_dlpack(_DLPackOf(buffer, max_version))
        assert view.dtype == np.int8 and view.shape == (16,)
        assert list(view[:3]) == [1, 2, 3]
        if max_version is not None:
            # NumPy treats a legacy (unversioned) export as read-only.
            view[3] = 9
            assert ctypes.string_at(buffer.handle + 3, 1) == b"\x09"
        del view
    capsule = buffer.__dlpack__()
    del capsule  # an export nobody took is freed with its capsule
    gc.collect()
    assert sys.getrefcount(buffer) == references
    with pytest.raises(BufferError, match="copy=True"):
        buffer.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="dl_device"):
        buffer.__dlpack__(dl_device=(2, 0))
    buffer.close()
    assert not mr.blocks


class _DLPackOf:
    """Passes max_version through, as a consumer asking for DLPack 1.0 does."""

    def __init__(self, buffer, max_version):
        self.buffer, self.max_version = buffer, max_version

    def __dlpack__(self, **kwargs):
        if self.max_version is None:
            kwargs.pop("max_version", None)
        return self.buffer.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.buffer.__dlpack_device__()


def test_launch_host_func_checks_its_callback_and_keeps_no_reference_on_failure():
    stream = Stream.from_handle(0x1234)
    with pytest.raises(TypeError, match="callable"):
        stream.launch_host_func(42)

    def callback():
        pass

    references = sys.getrefcount(callback)
    if not _has_driver():
        with pytest.raises(RuntimeError, match="libcuda"):
            stream.launch_host_func(callback)
        assert sys.getrefcount(callback) == references


def _has_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def test_launch_converts_each_argument_to_its_parameters_bytes():
    import struct

    from cubind.core._launch import _packed_arguments

    block = (ctypes.c_char * 8)()
    buffer = Buffer.from_handle(ctypes.addressof(block), 8)

    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

    sizes = [8, 1, 2, 4, 8, 4, 8, 16, 4, 8, 4, 8, 1]
    args = [buffer, -3, 65535, -70000, 2**64 - 1, 1.5, 2.5, Pair(7, 0.25), ctypes.c_float(3.0), ctypes.c_int64(-9),
            struct.pack("<i", 11), 0x1234, True]
    packed = _packed_arguments(sizes, args)
    assert packed == [
        struct.pack("<Q", ctypes.addressof(block)),
        struct.pack("<b", -3),
        struct.pack("<H", 65535),
        struct.pack("<i", -70000),
        struct.pack("<Q", 2**64 - 1),
        struct.pack("<f", 1.5),        # a float for a 4-byte parameter is a C float
        struct.pack("<d", 2.5),
        bytes(Pair(7, 0.25)),          # a struct by value
        struct.pack("<f", 3.0),
        struct.pack("<q", -9),
        struct.pack("<i", 11),
        struct.pack("<Q", 0x1234),     # an int as a pointer
        b"\x01",
    ]


@pytest.mark.parametrize("size, arg, error, message", [
    (4, 2**32, ValueError, r"argument 0 of kernel 'k' \(4-byte parameter\) is out of range: int 4294967296"),
    (1, -129, ValueError, "is out of range"),
    (8, -(2**63) - 1, ValueError, "is out of range"),
    (8, 2**64, ValueError, "is out of range"),
    (2, 1.0, TypeError, r"\(2-byte parameter\) cannot take a float"),
    (16, 3, TypeError, "cannot take an int"),
    (4, "text", TypeError, "cannot take this type: str 'text'"),
    (4, b"12345", ValueError, r"differs in size \(5 bytes\)"),
    (4, ctypes.c_double(1.0), ValueError, r"differs in size \(8 bytes\)"),
    (4, Buffer.from_handle(0x1000, 4), TypeError, "cannot take a Buffer"),
])
def test_launch_argument_errors_name_the_argument(size, arg, error, message):
    from cubind.core._launch import _packed_arguments

    with pytest.raises(error, match=message):
        _packed_arguments([size], [arg], "k")


def test_options_are_checked_before_any_cuda_call():
    from cubind.core import DeviceMemoryResource, Event

    with pytest.raises(TypeError, match="IPC-enabled events cannot use timing"):
        Event._init(0, EventOptions(timing_enabled=True, ipc_enabled=True))
    with pytest.raises(TypeError, match="EventOptions"):
        Event._init(0, 3)
    with pytest.raises(TypeError, match="StreamOptions.priority"):
        Stream._init(None, StreamOptions(priority="high"), 0)
    with pytest.raises(TypeError, match="StreamOptions"):
        Stream._init(None, ["nonblocking"], 0)
    with pytest.raises(ValueError, match="both"):
        Stream._init(ForeignStream(5), StreamOptions(), 0)
    assert Stream._init(ForeignStream(5)).__cuda_stream__() == (0, 5)
    with pytest.raises(ValueError, match="max_size is -1"):
        DeviceMemoryResource(0, DeviceMemoryResourceOptions(max_size=-1))
    with pytest.raises(TypeError, match="DeviceMemoryResourceOptions"):
        DeviceMemoryResource(0, "big")


@pytest.mark.skipif(_has_driver(), reason="checks the error where no driver is installed")
def test_copy_and_fill_without_a_driver_raise_instead_of_crashing():
    a, b = Buffer.from_handle(0x1000, 64), Buffer.from_handle(0x2000, 64)
    with pytest.raises(RuntimeError, match="libcuda"):
        a.copy_to(b, stream=LEGACY_DEFAULT_STREAM)
    with pytest.raises(RuntimeError, match="libcuda"):
        a.fill(1, stream=LEGACY_DEFAULT_STREAM)
    with pytest.raises(RuntimeError, match="libcuda"):
        Stream.from_handle(0x1234).wait(Stream.from_handle(0x5678))
    with pytest.raises(RuntimeError, match="libcuda"):
        LEGACY_DEFAULT_STREAM.sync()
