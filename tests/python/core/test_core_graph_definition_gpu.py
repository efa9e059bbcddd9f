"""cubind.core.graph's GraphDefinition on a GPU: graphs built node by node
(graph memory, memset, kernels, copies, an event record/wait pair, host
callbacks, child graphs, a while loop counting on the device), instantiated,
launched several times and checked by value; kernel and memset nodes of an
instantiated Graph changed in place; a captured graph extended through
GraphBuilder.graph_definition; Stream.launch_host_func under capture running
at every launch."""
import struct
import threading

import pytest

from cubind.core import LaunchConfig, LegacyPinnedMemoryResource, launch
from cubind.core.graph import (
    AllocNode,
    ChildGraphNode,
    EventRecordNode,
    EventWaitNode,
    ExecutableKernelNode,
    FreeNode,
    GraphDefinition,
    HostCallbackNode,
    KernelNode,
    MemcpyNode,
    MemsetNode,
    WhileNode,
)

from _graph_kernels import BLOCK, N, compile_kernels, config, read_ints  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def module(device):
    return compile_kernels(device)


def test_alloc_memset_kernel_memcpy_free_runs_at_every_launch(device, module, stream):
    host = LegacyPinnedMemoryResource().allocate(N * 4, stream=stream)
    g = GraphDefinition()
    alloc = g.allocate(N * 4)
    zero = alloc.memset(alloc.dptr, 0, N * 4)
    add = zero.launch(config(), module.get_kernel("add"), alloc.dptr, 5, N)
    copy = add.memcpy(host, alloc.dptr, N * 4)
    free = copy.deallocate(alloc.dptr)
    assert isinstance(alloc, AllocNode) and alloc.bytesize == N * 4 and alloc.device_id == device.device_id
    assert isinstance(zero, MemsetNode) and isinstance(add, KernelNode)
    assert isinstance(copy, MemcpyNode) and isinstance(free, FreeNode) and free.dptr == alloc.dptr
    assert g.nodes() == {alloc, zero, add, copy, free}
    assert g.edges() == {(alloc, zero), (zero, add), (add, copy), (copy, free)}
    assert add.grid == ((N + BLOCK - 1) // BLOCK, 1, 1) and add.block == (BLOCK, 1, 1)

    graph = g.instantiate()
    for _ in range(3):
        memoryview(host)[:] = bytes(N * 4)
        graph.launch(stream)
        stream.sync()
        assert struct.unpack(f"{N}i", memoryview(host)) == (5,) * N
    graph.close()


def test_executable_kernel_and_memset_nodes_take_new_parameters(device, module, stream):
    data = device.allocate(N * 4, stream=stream)
    g = GraphDefinition()
    clear = g.memset(data, 0, N * 4)
    node = clear.launch(config(), module.get_kernel("fill"), data, 10, N)
    graph = g.instantiate()
    graph.launch(stream)
    assert read_ints(data, stream, N) == tuple(10 + i for i in range(N))

    view = graph[node]
    assert isinstance(view, ExecutableKernelNode)
    view.update(config=config(), kernel=module.get_kernel("fill"), args=(data, 100, N))
    graph.launch(stream)
    assert read_ints(data, stream, N) == tuple(100 + i for i in range(N))
    # The memset keeps its shape (1-byte elements), with a new value.
    view.update(config=config(), kernel=module.get_kernel("add"), args=(data, 1, N))
    graph[clear].update(dst=data, value=7, width=N * 4)
    graph.launch(stream)
    assert read_ints(data, stream, N) == (0x07070708,) * N
    view.disable()
    assert not view.is_enabled
    graph.launch(stream)
    assert read_ints(data, stream, N) == (0x07070707,) * N
    view.enable()
    assert view.is_enabled

    # The definition keeps its own parameters; Graph.update takes them back.
    graph.update(g)
    graph.launch(stream)
    assert read_ints(data, stream, N) == tuple(10 + i for i in range(N))


def test_event_pair_host_callback_and_child_graph(device, module, stream):
    data = device.allocate(N * 4, stream=stream)
    calls = []
    lock = threading.Lock()

    def callback():
        with lock:
            calls.append(1)

    child = GraphDefinition()
    child.launch(config(), module.get_kernel("add"), data, 1, N)
    event = device.create_event()
    g = GraphDefinition()
    filled = g.launch(config(), module.get_kernel("fill"), data, 0, N)
    rec = filled.record(event)
    wait = rec.wait(event)
    first = wait.embed(child)
    second = first.embed(child)
    host = second.callback(callback)
    assert isinstance(rec, EventRecordNode) and isinstance(wait, EventWaitNode)
    assert isinstance(first, ChildGraphNode) and isinstance(host, HostCallbackNode)
    assert len(first.child_graph.nodes()) == 1
    graph = g.instantiate()
    for launches in (1, 2, 3):
        graph.launch(stream)
        stream.sync()
        assert read_ints(data, stream, N) == tuple(2 + i for i in range(N))
        assert len(calls) == launches


def test_while_loop_counts_to_the_limit(device, module, stream):
    word = device.allocate(4, stream=stream)
    g = GraphDefinition()
    condition = g.create_condition(1)
    zero = g.memset(word, 0, 4)
    loop = zero.while_loop(condition)
    assert isinstance(loop, WhileNode)
    loop.body.launch(LaunchConfig(grid=1, block=1), module.get_kernel("count_to"), word, 25, condition)
    graph = g.instantiate()
    for _ in range(2):
        graph.launch(stream)
        assert read_ints(word, stream, 1) == (25,)


def test_captured_graph_extended_through_graph_definition(device, module, stream):
    data = device.allocate(N * 4, stream=stream)
    gb = stream.create_graph_builder().begin_building()
    launch(gb, config(), module.get_kernel("fill"), data, 3, N)
    gb.end_building()
    definition = gb.graph_definition
    (captured,) = definition.nodes()
    assert isinstance(captured, KernelNode)
    captured.launch(config(), module.get_kernel("add"), data, 4, N)
    graph = gb.complete()
    graph.launch(stream)
    assert read_ints(data, stream, N) == tuple(7 + i for i in range(N))
    gb.close()
    assert len(definition.nodes()) == 2


def test_conditional_body_built_through_graph_definition(device, module, stream):
    data = device.allocate(N * 4, stream=stream)
    gb = stream.create_graph_builder().begin_building()
    launch(gb, config(), module.get_kernel("fill"), data, 0, N)
    condition = gb.create_condition(1)
    body = gb.if_then(condition)
    # A body's graph exists as soon as its node does: filled explicitly,
    # without capturing into it.
    body_definition = body.graph_definition
    body_definition.launch(config(), module.get_kernel("add"), data, 5, N)
    gb.end_building()
    graph = gb.complete()
    body.close()
    gb.close()
    assert body_definition.is_valid and len(body_definition.nodes()) == 1
    graph.launch(stream)
    assert read_ints(data, stream, N) == tuple(5 + i for i in range(N))


def test_stream_host_func_under_capture_runs_at_every_launch(device, module, stream):
    calls = []
    gb = stream.create_graph_builder().begin_building()
    stream.launch_host_func(lambda: calls.append(1))
    gb.end_building()
    graph = gb.complete()
    gb.close()
    for launches in (1, 2, 3):
        graph.launch(stream)
        stream.sync()
        assert len(calls) == launches
