"""cubind.core.graph on a GPU: graphs captured through GraphBuilder (kernels,
copies, fills, forks and joins, conditional nodes set by device code, child
graphs, host callbacks, graph memory), launched several times and checked by
value."""
import ctypes
import gc
import os
import struct
import tempfile
import threading

import pytest

from cubind.core import (
    CUDAError,
    GraphMemoryResource,
    LaunchConfig,
    LegacyPinnedMemoryResource,
    launch,
)
from cubind.core.graph import GraphBuilder, GraphCompleteOptions, GraphDebugPrintOptions

from _graph_kernels import BLOCK, N, compile_kernels, config, read_ints  # noqa: E402

pytestmark = pytest.mark.gpu

GRID = (N + BLOCK - 1) // BLOCK


@pytest.fixture(scope="module")
def module(device):
    return compile_kernels(device)


def test_captured_kernels_and_copy_run_at_every_launch(device, module, stream):
    data = device.allocate(N * 4, stream=stream)
    host = LegacyPinnedMemoryResource().allocate(N * 4, stream=stream)
    gb = device.create_graph_builder().begin_building()
    assert gb.is_building
    launch(gb, config(), module.get_kernel("fill"), data, 10, N)
    launch(gb, config(), module.get_kernel("add"), data, 5, N)
    data.copy_to(host, stream=gb)
    gb.end_building()
    assert not gb.is_building
    graph = gb.complete()
    graph.upload(stream)
    for _ in range(3):
        memoryview(host)[:] = bytes(N * 4)
        graph.launch(stream)
        stream.sync()
        assert struct.unpack(f"{N}i", memoryview(host)) == tuple(15 + i for i in range(N))
    graph.close()
    gb.close()


def test_complete_uploads_to_the_stream_given(device, module, stream):
    data = device.allocate(N * 4, stream=stream)
    gb = stream.create_graph_builder().begin_building("thread_local")
    launch(gb, config(), module.get_kernel("fill"), data, 1, N)
    graph = gb.end_building().complete(GraphCompleteOptions(upload_stream=stream))
    graph.launch(stream)
    assert read_ints(data, stream, N) == tuple(1 + i for i in range(N))


def test_split_branches_run_and_join(device, module, stream):
    half = N // 2
    a = device.allocate(half * 4, stream=stream)
    b = device.allocate(half * 4, stream=stream)
    gb = device.create_graph_builder().begin_building()
    first, second = gb.split(2)
    assert first is gb and second.is_join_required
    launch(first, config(half), module.get_kernel("fill"), a, 0, half)
    launch(second, config(half), module.get_kernel("fill"), b, 100, half)
    joined = GraphBuilder.join(first, second)
    assert joined is gb and second.is_closed
    launch(joined, config(half), module.get_kernel("add"), a, 1, half)
    graph = joined.end_building().complete()
    graph.launch(stream)
    assert read_ints(a, stream, half) == tuple(1 + i for i in range(half))
    assert read_ints(b, stream, half) == tuple(100 + i for i in range(half))


@pytest.mark.parametrize("limit", [1, 37, 1000])
def test_while_loop_counts_to_the_limit(device, module, stream, limit):
    word = device.allocate(4, stream=stream)
    gb = device.create_graph_builder().begin_building()
    word.fill(0, stream=gb)
    condition = gb.create_condition(1)
    body = gb.while_loop(condition)
    body.begin_building()
    launch(body, LaunchConfig(grid=1, block=1), module.get_kernel("count_to"), word, limit, condition)
    body.end_building()
    graph = gb.end_building().complete()
    for _ in range(2):  # the fill and the default value start every launch afresh
        graph.launch(stream)
        assert read_ints(word, stream, 1) == (limit,)


@pytest.mark.parametrize("value", [0, 1])
def test_if_else_runs_the_branch_the_device_chose(device, module, stream, value):
    words = device.allocate(8, stream=stream)
    gb = device.create_graph_builder().begin_building()
    words.fill(0, stream=gb)
    condition = gb.create_condition()
    launch(gb, LaunchConfig(grid=1, block=1), module.get_kernel("set_condition"), condition, value)
    then, else_ = gb.if_else(condition)
    for branch, index in ((then, 0), (else_, 1)):
        branch.begin_building()
        launch(branch, LaunchConfig(grid=1, block=1), module.get_kernel("add"), words.handle + 4 * index, 7, 1)
        branch.end_building()
    gb.end_building().complete().launch(stream)
    assert read_ints(words, stream, 2) == ((7, 0) if value else (0, 7))


def test_if_then_and_switch(device, module, stream):
    words = device.allocate(16, stream=stream)
    for value in (0, 2, 3, 9):
        gb = device.create_graph_builder().begin_building()
        words.fill(0, stream=gb)
        condition = gb.create_condition(value)  # a default value needs no kernel to set it
        cases = gb.switch(condition, 3)
        assert len(cases) == 3
        for index, case in enumerate(cases):
            case.begin_building()
            launch(case, LaunchConfig(grid=1, block=1), module.get_kernel("add"), words.handle + 4 * index, 1, 1)
            case.end_building()
        # A condition belongs to one conditional node: the if node has its own.
        only = gb.if_then(gb.create_condition(value))
        only.begin_building()
        launch(only, LaunchConfig(grid=1, block=1), module.get_kernel("add"), words.handle + 12, 1, 1)
        only.end_building()
        gb.end_building().complete().launch(stream)
        expected = tuple(1 if index == value else 0 for index in range(3)) + ((1 if value else 0),)
        assert read_ints(words, stream, 4) == expected, value


def test_update_takes_new_arguments_and_refuses_a_new_topology(device, module, stream):
    data = device.allocate(N * 4, stream=stream)

    def built(base, kernels=1):
        gb = device.create_graph_builder().begin_building()
        for _ in range(kernels):
            launch(gb, config(), module.get_kernel("fill"), data, base, N)
        return gb.end_building()

    graph = built(1).complete()
    graph.launch(stream)
    assert read_ints(data, stream, 3) == (1, 2, 3)
    graph.update(built(50))
    graph.launch(stream)
    assert read_ints(data, stream, 3) == (50, 51, 52)
    with pytest.raises(CUDAError, match="^Graph update failed: .*TOPOLOGY_CHANGED"):
        graph.update(built(7, kernels=2))
    graph.launch(stream)
    assert read_ints(data, stream, 3) == (50, 51, 52)


def test_embed_copies_a_finished_builder_in(device, module, stream):
    data = device.allocate(N * 4, stream=stream)
    child = device.create_graph_builder().begin_building()
    launch(child, config(), module.get_kernel("fill"), data, 3, N)
    child.end_building()
    parent = device.create_graph_builder().begin_building()
    parent.embed(child)
    launch(parent, config(), module.get_kernel("add"), data, 1, N)
    child.close()  # the child node holds a copy
    parent.end_building().complete().launch(stream)
    assert read_ints(data, stream, 3) == (4, 5, 6)
    unfinished = device.create_graph_builder()
    other = device.create_graph_builder().begin_building()
    with pytest.raises(RuntimeError, match="not finished building"):
        other.embed(unfinished)
    other.end_building()


def test_host_callbacks_run_at_every_launch_and_live_as_long_as_the_graph(device, stream):
    calls = []
    lock = threading.Lock()

    def record():
        with lock:
            calls.append(1)

    seen = []
    prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    c_callback = prototype(lambda data: seen.append(ctypes.string_at(data, 5)))

    gb = device.create_graph_builder().begin_building()
    gb.callback(record)
    gb.callback(c_callback, user_data=b"hello")
    graph = gb.end_building().complete()
    del record
    gc.collect()
    for _ in range(3):
        graph.launch(stream)
    stream.sync()
    assert len(calls) == 3
    assert seen == [b"hello"] * 3


def test_graph_memory_is_allocated_and_freed_by_the_graph(device, module, stream):
    mr = GraphMemoryResource(device)
    assert mr is GraphMemoryResource(device.device_id)
    assert mr.device_id == device.device_id and mr.is_device_accessible and not mr.is_host_accessible
    with pytest.raises(RuntimeError, match="non-capturing stream"):
        mr.allocate(64, stream=stream)

    result = device.allocate(N * 4, stream=stream)
    gb = device.create_graph_builder().begin_building()
    scratch = mr.allocate(N * 4, stream=gb)
    launch(gb, config(), module.get_kernel("fill"), scratch, 8, N)
    result.copy_from(scratch, stream=gb)
    scratch.close(stream=gb)
    graph = gb.end_building().complete()
    for _ in range(2):
        graph.launch(stream)
        assert read_ints(result, stream, 3) == (8, 9, 10)
    attributes = mr.attributes
    assert attributes.reserved_mem_current >= N * 4
    attributes.used_mem_high = 0
    with pytest.raises(AttributeError, match=r"Attribute 'reserved_mem_high' may only be set to zero \(got 5\)"):
        attributes.reserved_mem_high = 5
    with pytest.raises(AttributeError, match=r"attribute 'used_mem_current' .* is not writable"):
        attributes.used_mem_current = 0
    mr.trim()


def test_debug_dot_print_describes_the_graph(device, module, stream):
    data = device.allocate(N * 4, stream=stream)
    gb = device.create_graph_builder().begin_building()
    launch(gb, config(), module.get_kernel("fill"), data, 1, N)
    gb.end_building()
    path = os.path.join(tempfile.mkdtemp(), "graph.dot")
    gb.debug_dot_print(path, GraphDebugPrintOptions(kernel_node_params=True))
    text = open(path).read()
    assert "digraph" in text and "fill" in text


def test_an_invalidated_capture_is_reported_and_ended(device, stream):
    gb = stream.create_graph_builder().begin_building()
    with pytest.raises(CUDAError):
        stream.sync()  # synchronizing a capturing stream is illegal, and ends the capture's validity
    with pytest.raises(RuntimeError, match="invalidated"):
        gb.is_building
    with pytest.raises(CUDAError):
        gb.end_building()
    assert not gb.is_building
    with pytest.raises(RuntimeError, match="not finished building"):
        gb.complete()


ABANDONED = r"""
import sys
from cubind.core import Device
dev = Device(0)
dev.set_current()
stream = dev.create_stream()
word = dev.allocate(4, stream=stream)
how = sys.argv[1]
gb = dev.create_graph_builder().begin_building()
word.fill(0, stream=gb)
if how in ("while_body_open", "switch_done"):
    condition = gb.create_condition(1)
    if how == "while_body_open":
        gb.while_loop(condition).begin_building()
    else:
        for case in gb.switch(condition, 2):
            case.begin_building().end_building()
elif how == "split":
    gb.split(2)
if how == "dropped":
    del gb  # collected at once: the capture ends with the builder
    stream.sync()
    print("# dropped and synced")
else:
    raise RuntimeError("left while capturing")
"""


@pytest.mark.parametrize("how", ["dropped", "plain", "while_body_open", "switch_done", "split"])
def test_a_builder_abandoned_while_capturing_ends_its_capture_without_a_crash(how):
    # A program that raises between begin_building and end_building (or drops
    # the builder) exits as Python says, never with a signal.
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-X", "faulthandler", "-c", ABANDONED, how],
                            capture_output=True, text=True, timeout=120)
    report = f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr[-4000:]}"
    assert "Fatal Python error" not in result.stderr, report
    if how == "dropped":
        assert result.returncode == 0 and "# dropped and synced" in result.stdout, report
    else:
        assert result.returncode == 1 and "left while capturing" in result.stderr, report


def test_a_condition_controls_one_node_and_a_second_is_refused_clearly(device):
    gb = device.create_graph_builder().begin_building()
    condition = gb.create_condition(1)
    gb.if_then(condition).begin_building().end_building()
    with pytest.raises(ValueError, match="already controls a conditional node"):
        gb.while_loop(condition)
    gb.end_building()
    gb.close()
