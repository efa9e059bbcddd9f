"""Host callbacks and stream capture on a GPU: a ctypes function pointer whose
every Python reference the caller dropped still runs with its user data from
a graph (built node by node, cloned into a parent, captured) and from
Stream.launch_host_func, Python callables still run; and a capture in each
mode allocates graph memory, launches kernels on it and frees it (in a fresh
process, where nothing was created before the capture, and after first use),
while a pool allocation on a capturing stream raises what cuda.core raises
and leaves the capture valid."""
import ctypes
import gc
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from cubind.core import DeviceMemoryResource, GraphMemoryResource, PinnedMemoryResource, launch
from cubind.core.graph import GraphDefinition

from _graph_kernels import N, compile_kernels, config, read_ints  # noqa: E402

pytestmark = pytest.mark.gpu

CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@pytest.fixture(scope="module")
def module(device):
    return compile_kernels(device)


def recording_callback(seen, size):
    """A ctypes function pointer appending the size bytes at its user data."""
    return CALLBACK(lambda data: seen.append(ctypes.string_at(data, size)))


def test_a_graphs_ctypes_callback_runs_after_the_caller_deleted_it(device, stream):
    seen = []
    raw_fn = recording_callback(seen, 5)
    g = GraphDefinition()
    g.callback(raw_fn, user_data=b"hello")
    del raw_fn
    gc.collect()
    graph = g.instantiate()
    graph.upload(stream)
    graph.launch(stream)
    stream.sync()
    assert seen == [b"hello"]

    # The definition cloned into a parent (a child graph node) and
    # instantiated several times, after the definitions are gone.
    parent = GraphDefinition()
    parent.embed(g)
    del g
    gc.collect()
    graphs = [parent.instantiate() for _ in range(3)]
    del parent
    gc.collect()
    for each in graphs:
        each.launch(stream)
        each.launch(stream)
    graph.launch(stream)
    stream.sync()
    assert seen == [b"hello"] * 8


def test_user_data_by_address_and_a_node_update(device, stream):
    seen = []
    words = (ctypes.c_char * 4)(*b"addr")
    g = GraphDefinition()
    node = g.callback(recording_callback(seen, 4), user_data=ctypes.addressof(words))
    graph = g.instantiate()
    gc.collect()
    graph.launch(stream)
    stream.sync()
    words[:] = b"next"          # an address is passed as it is: the callback reads it now
    graph.launch(stream)
    stream.sync()
    assert seen == [b"addr", b"next"]
    graph[node].update(recording_callback(seen, 3), user_data=b"new")
    gc.collect()
    graph.launch(stream)
    stream.sync()
    assert seen[-1] == b"new"


def test_captured_ctypes_and_python_callbacks(device, stream):
    seen, calls = [], []
    lock = threading.Lock()

    def record():
        with lock:
            calls.append(1)

    raw_fn = recording_callback(seen, 4)
    gb = device.create_graph_builder().begin_building()
    gb.callback(raw_fn, user_data=b"capt")
    gb.callback(record)
    gb.stream.launch_host_func(recording_callback(seen, 3), user_data=b"str")
    graph = gb.end_building().complete()
    del raw_fn, record
    gc.collect()
    for _ in range(2):
        graph.launch(stream)
    stream.sync()
    assert seen == [b"capt", b"str"] * 2
    assert calls == [1, 1]


def test_launch_host_func_runs_a_ctypes_function_the_caller_deleted(device, stream):
    # A Python callable blocks the stream's callbacks until the ctypes one
    # is queued and every reference of the caller is gone.
    release = threading.Event()
    stream.launch_host_func(lambda: release.wait(30))
    seen = []
    raw_fn = recording_callback(seen, 3)
    stream.launch_host_func(raw_fn, user_data=bytearray(b"one"))
    address_data = ctypes.create_string_buffer(b"two")
    stream.launch_host_func(recording_callback(seen, 3), user_data=ctypes.addressof(address_data))
    del raw_fn
    gc.collect()
    assert seen == []
    release.set()
    stream.sync()
    assert seen == [b"one", b"two"]


@pytest.mark.parametrize("mode", ["global", "thread_local", "relaxed"])
def test_a_capture_allocates_graph_memory_and_refuses_a_pools(device, module, stream, mode):
    result = device.allocate(N * 4, stream=stream)
    gmr = GraphMemoryResource(device)
    pools = [DeviceMemoryResource(device), PinnedMemoryResource()]
    for mr in pools:
        mr.allocate(64, stream=stream).close(stream=stream)    # used before the capture
    gb = device.create_graph_builder().begin_building(mode)
    for mr in pools:
        with pytest.raises(RuntimeError, match=r"cannot perform memory operations on a capturing "
                                               r"stream \(consider using GraphMemoryResource\)\."):
            mr.allocate(64, stream=gb)
    with pytest.raises(RuntimeError, match="capturing stream"):
        device.allocate(64, stream=gb)
    # The refusals left the capture valid: it goes on and completes.
    scratch = gmr.allocate(N * 4, stream=gb)
    launch(gb, config(), module.get_kernel("fill"), scratch, 7, N)
    launch(gb, config(), module.get_kernel("add"), scratch, 3, N)
    result.copy_from(scratch, stream=gb)
    scratch.close(stream=gb)
    graph = gb.end_building().complete()
    for _ in range(2):
        result.fill(0, stream=stream)
        graph.launch(stream)
        assert read_ints(result, stream, N) == tuple(10 + i for i in range(N))


FRESH_CAPTURE = r"""
import struct, sys
from cuda_core_names import Device, GraphMemoryResource, LaunchConfig, LegacyPinnedMemoryResource, Program, \
    ProgramOptions, launch
mode = sys.argv[1]
N = 256
device = Device(0)
device.set_current()
code = r'''extern "C" __global__ void fill(int* out, int base, int n)
{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = base + i; }'''
kernel = Program(code, "c++", ProgramOptions(arch="sm_" + device.arch)).compile("cubin").get_kernel("fill")
stream = device.create_stream()
host = LegacyPinnedMemoryResource().allocate(N * 4, stream=stream)
# Nothing of memory made before: the capture allocates first.
gb = device.create_graph_builder().begin_building(mode)
data = GraphMemoryResource(device).allocate(N * 4, stream=gb)
launch(gb, LaunchConfig(grid=2, block=128), kernel, data, 5, N)
data.copy_to(host, stream=gb)
data.close(stream=gb)
graph = gb.end_building().complete()
graph.upload(stream)
graph.launch(stream)
stream.sync()
assert struct.unpack(f"{N}i", bytes(memoryview(host))) == tuple(5 + i for i in range(N))
print("captured", mode)
"""


@pytest.mark.parametrize("mode", ["global", "thread_local", "relaxed"])
def test_a_fresh_process_captures_its_first_allocation(mode, tmp_path):
    (tmp_path / "cuda_core_names.py").write_text("from cubind.core import *\n")
    result = subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(FRESH_CAPTURE), mode],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])})
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"captured {mode}" in result.stdout
