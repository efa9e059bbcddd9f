"""cubind.core.graph's GraphDefinition and node classes without a GPU,
against the stand-in driver (tests/python/fake_driver/fake_graphs.c keeps
real node and edge lists): nodes and edges read back as they were built,
each node type's properties, editing edges through pred/succ, node updates in
the definition and in an instantiated Graph (a kernel node's new arguments
reach the launch), host callbacks and their lifetime, conditional bodies,
child graphs, GraphBuilder.graph_definition, and the argument errors."""
import textwrap

import pytest
from conftest import STAND_IN_CHECKS, run_with_fake_driver

import cubind.core.graph as graph_module

NODE_CLASSES = [
    "GraphNode", "EmptyNode", "KernelNode", "MemsetNode", "MemcpyNode", "AllocNode", "FreeNode",
    "EventRecordNode", "EventWaitNode", "HostCallbackNode", "ChildGraphNode", "ConditionalNode", "IfNode",
    "IfElseNode", "SwitchNode", "WhileNode", "ExecutableGraphNode", "ExecutableKernelNode",
    "ExecutableMemsetNode", "ExecutableMemcpyNode", "ExecutableEventRecordNode", "ExecutableEventWaitNode",
    "ExecutableHostCallbackNode", "ExecutableChildGraphNode",
]


def test_the_module_exports_the_definition_and_node_classes():
    for name in ["GraphDefinition"] + NODE_CLASSES:
        assert name in graph_module.__all__, name
        assert isinstance(getattr(graph_module, name), type)
    assert issubclass(graph_module.IfNode, graph_module.ConditionalNode)
    assert issubclass(graph_module.KernelNode, graph_module.GraphNode)
    assert issubclass(graph_module.ExecutableKernelNode, graph_module.ExecutableGraphNode)


@pytest.mark.parametrize("name", ["GraphNode", "KernelNode", "ExecutableGraphNode", "ExecutableKernelNode"])
def test_nodes_are_not_made_directly(name):
    with pytest.raises(RuntimeError, match="directly"):
        getattr(graph_module, name)()


PRELUDE = STAND_IN_CHECKS + textwrap.dedent("""
    import ctypes, gc, struct, time
    import cubind.core as cc
    from cubind.core.graph import *
    from cubind.bindings import driver
    fake = ctypes.CDLL("libcuda.so.1")
    dev = cc.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    code = cc.ObjectCode.from_cubin(b"stand-in cubin", name="standin")
    config = cc.LaunchConfig(grid=(2, 3), block=64, shmem_size=16)

    def launched_args(*sizes):
        raw = bytes((ctypes.c_ubyte * 256).in_dll(fake, "fake_params"))
        return [raw[16 * i:16 * i + size] for i, size in enumerate(sizes)]

    def wait_for(predicate):
        for _ in range(500):
            if predicate():
                return
            time.sleep(0.01)
        raise AssertionError("timed out")
""")


def run(fake_driver_dir, body):
    run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


def test_nodes_and_edges_read_back_as_built(fake_driver_dir):
    run(fake_driver_dir, """
        g = GraphDefinition()
        assert g.is_valid and g.nodes() == set() and g.edges() == set()
        k = code.get_kernel("k8_4")
        alloc = g.allocate(256)
        assert isinstance(alloc, AllocNode) and alloc.bytesize == 256 and alloc.device_id == 0
        assert alloc.memory_type == "device" and alloc.peer_access == () and alloc.dptr != 0
        fill = alloc.memset(alloc.dptr, 7, 256)
        launch = fill.launch(config, k, alloc.dptr, 5)
        host = bytearray(256)
        copy = launch.memcpy(0x1000, alloc.dptr, 256)
        free = copy.deallocate(alloc.dptr)
        assert isinstance(fill, MemsetNode) and (fill.dptr, fill.value, fill.element_size, fill.width,
                                                fill.height, fill.pitch) == (alloc.dptr, 7, 1, 256, 1, 0)
        assert isinstance(launch, KernelNode)
        assert (launch.grid, launch.block, launch.shmem_size) == ((2, 3, 1), (64, 1, 1), 16)
        assert launch.kernel is k and launch.config == cc.LaunchConfig(grid=(2, 3), block=64, shmem_size=16)
        assert isinstance(copy, MemcpyNode) and (copy.dst, copy.src, copy.size) == (0x1000, alloc.dptr, 256)
        assert isinstance(free, FreeNode) and free.dptr == alloc.dptr

        assert g.nodes() == {alloc, fill, launch, copy, free}
        assert g.edges() == {(alloc, fill), (fill, launch), (launch, copy), (copy, free)}
        # The same objects come back, so what they hold (the Kernel) does too.
        assert any(n is launch for n in g.nodes())
        assert launch.pred == {fill} and launch.succ == {copy} and len(launch.succ) == 1
        assert launch.type == driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_KERNEL
        assert alloc.graph == g and int(launch.handle) != 0 and g._entry.type is None
        assert g._entry.handle is None

        # Edges edited through the set views reach the driver's lists.
        e1, e2 = g.empty(), g.empty()
        joined = g.join(e1, e2)
        assert isinstance(joined, EmptyNode) and joined.pred == {e1, e2}
        joined.pred.discard(e2)
        assert (e2, joined) not in g.edges() and joined.pred == {e1}
        e2.succ.add(joined)
        assert (e2, joined) in g.edges()
        joined.pred = [free]
        assert joined.pred == {free} and (e1, joined) not in g.edges()
        joined.pred.clear()
        assert len(joined.pred) == 0
        e1.succ |= {joined, e2}
        assert e1.succ == {joined, e2}
        e1.succ -= {e2}
        assert e1.succ == {joined}
        joined.destroy()
        assert not joined.is_valid and joined not in g.nodes() and e1.succ == set()
        joined.destroy()
        raises(RuntimeError, "destroyed", lambda: joined.pred)
        other = GraphDefinition().empty()
        raises(ValueError, "another graph", e1.succ.add, other)
        raises(ValueError, "another graph", g.join, other)
        raises(TypeError, "GraphNode", g.join, 3)
    """)


def test_alloc_nodes_of_each_memory_type_read_back_with_their_peers(fake_driver_dir):
    run(fake_driver_dir, """
        import enum

        class Kind(enum.Enum):
            MANAGED = "managed"

        g = GraphDefinition()
        host = g.allocate(64, memory_type="host")
        assert (host.memory_type, host.bytesize, host.device_id, host.peer_access) == ("host", 64, 0, ())
        managed = host.allocate(128, device=0, memory_type=Kind.MANAGED, peer_access=[dev, 0])
        assert (managed.memory_type, managed.bytesize, managed.device_id) == ("managed", 128, 0)
        assert managed.peer_access == (0, 0) and managed.dptr not in (0, host.dptr)
        on_device = managed.allocate(32, device=dev, peer_access=[0])
        assert (on_device.memory_type, on_device.peer_access) == ("device", (0,))
        assert g.nodes() == {host, managed, on_device}
        raises(ValueError, "GraphNode.allocate: memory_type: 'pinned' is not a valid GraphMemoryType",
               g.allocate, 8, memory_type="pinned")
        raises(ValueError, "device_id must be within", g.allocate, 8, peer_access=[3])
        raises(ValueError, "size is -1", g.allocate, -1)
        assert len(g.nodes()) == 3
    """)


def test_instantiated_kernel_node_takes_new_arguments(fake_driver_dir):
    run(fake_driver_dir, """
        g = GraphDefinition()
        k = code.get_kernel("k8_4")
        node = g.launch(config, k, 0x1234, 5)
        graph = g.instantiate()
        graph.launch(stream)
        assert launched_args(8, 4) == [struct.pack("<Q", 0x1234), struct.pack("<i", 5)]

        view = graph[node]
        assert type(view) is ExecutableKernelNode and view.is_enabled
        view.update(config=config, kernel=k, args=(0x5678, 9))
        graph.launch(stream)
        assert launched_args(8, 4) == [struct.pack("<Q", 0x5678), struct.pack("<i", 9)]
        view.disable()
        assert not view.is_enabled
        fake_params = ctypes.c_int.in_dll(fake, "fake_nparams")
        fake_params.value = -1
        graph.launch(stream)
        assert fake_params.value == -1, "a disabled node does not run"
        view.enable()
        raises(TypeError, "takes 2 arguments", view.update, config=config, kernel=k, args=(1,))
        raises(ValueError, "is out of range", view.update, config=config, kernel=k, args=(1, 2**40))
        raises(TypeError, "LaunchConfig", view.update, config=None, kernel=k, args=(1, 2))

        # The definition is unchanged by the Graph's update, and its own
        # update reaches later instantiations.
        node.update(args=(0x42, 1))
        again = g.instantiate()
        again.launch(stream)
        assert launched_args(8, 4) == [struct.pack("<Q", 0x42), struct.pack("<i", 1)]
        raises(ValueError, "needs its args", node.update, kernel=k)

        # Graph.update takes a GraphDefinition of the same topology.
        updates = fake_int("fake_graph_updates")
        graph.update(g)
        assert fake_int("fake_graph_updates") == updates + 1
        raises(TypeError, "GraphDefinition", graph.update, 5)
        raises(TypeError, "GraphNode", graph.__getitem__, 5)
        view = graph[g.empty()]
        assert type(view) is ExecutableGraphNode
    """)


def test_memset_memcpy_and_event_nodes_update(fake_driver_dir):
    run(fake_driver_dir, """
        g = GraphDefinition()
        buf = dev.memory_resource.allocate(64, stream=stream)
        fill = g.memset(buf, struct.pack("<I", 0xdeadbeef), 16)
        assert (fill.value, fill.element_size, fill.width) == (0xdeadbeef, 4, 16)
        fill.update(value=3, width=64)
        assert (fill.value, fill.element_size, fill.width, fill.dptr) == (3, 1, 64, buf.handle)
        raises(ValueError, "does not fit in a byte", g.memset, buf, 256, 1)
        raises(ValueError, "1, 2 or 4 bytes", g.memset, buf, b"abc", 1)
        raises(TypeError, "dst must be a Buffer or an int", g.memset, "x", 1, 1)
        raises(ValueError, "dst_owner", g.memset, buf, 1, 1, dst_owner=object())

        copy = fill.memcpy(0x2000, buf, 64)
        copy.update(size=32)
        assert (copy.dst, copy.src, copy.size) == (0x2000, int(buf.handle), 32)
        raises(ValueError, "negative", g.memcpy, 1, 2, -1)

        e1, e2 = dev.create_event(), dev.create_event()
        rec = copy.record(e1)
        wait = rec.wait(e1)
        assert isinstance(rec, EventRecordNode) and rec.event is e1
        assert isinstance(wait, EventWaitNode) and wait.event is e1
        rec.update(e2)
        assert rec.event is e2
        raises(TypeError, "Event", g.record, 5)

        graph = g.instantiate()
        assert type(graph[fill]) is ExecutableMemsetNode and type(graph[copy]) is ExecutableMemcpyNode
        assert type(graph[rec]) is ExecutableEventRecordNode and type(graph[wait]) is ExecutableEventWaitNode
        graph[fill].update(dst=buf, value=1, width=8)
        graph[copy].update(dst=0x3000, src=buf, size=8)
        graph[rec].update(e1)
        graph[wait].update(e2)
        graph[fill].disable()
        assert not graph[fill].is_enabled
    """)


def test_host_callbacks_run_at_every_launch_and_live_as_long_as_the_graph(fake_driver_dir):
    run(fake_driver_dir, """
        calls = []
        class Callback:
            def __call__(self):
                calls.append(1)
        fn = Callback()
        g = GraphDefinition()
        node = g.callback(fn)
        assert isinstance(node, HostCallbackNode) and node.callback is fn
        graph = g.instantiate()
        graph.launch(stream)
        graph.launch(stream)
        wait_for(lambda: len(calls) == 2)
        import weakref
        ref = weakref.ref(fn)
        del fn
        gc.collect()
        assert ref() is not None, "the graph keeps its callback"
        del g, node
        gc.collect()
        assert ref() is not None, "the instantiation keeps it after the definition is gone"
        graph.launch(stream)
        wait_for(lambda: len(calls) == 3)
        graph.close()
        # Let go of on the main thread, as a pending call, not inside the driver.
        wait_for(lambda: ref() is None)

        # ctypes function pointers with user data, and the errors.
        seen = []
        proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        cfn = proto(lambda p: seen.append(ctypes.string_at(p, 3)))
        g = GraphDefinition()
        node = g.callback(cfn, user_data=b"abc")
        assert node.callback is None
        g.instantiate().launch(stream)
        wait_for(lambda: seen == [b"abc"])
        raises(ValueError, "user_data", g.callback, print, user_data=b"x")
        raises(TypeError, "callable", g.callback, 3)
        bad = ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 0)
        raises(TypeError, "CUhostFn", g.callback, bad)

        # A node's callback replaced, in the definition and in a Graph.
        calls.clear()
        node.update(lambda: calls.append("new"))
        graph = g.instantiate()
        graph.launch(stream)
        wait_for(lambda: calls == ["new"])
        assert type(graph[node]) is ExecutableHostCallbackNode
        graph[node].update(lambda: calls.append("exec"))
        graph.launch(stream)
        wait_for(lambda: calls == ["new", "exec"])
        del graph, g, node
        gc.collect()
        assert fake_int("fake_live_user_objects") == 0
    """)


def test_what_only_a_graph_or_a_host_function_holds_is_freed_outside_the_driver(fake_driver_dir):
    # Neither a user object's destructor nor a host function may call CUDA
    # (the stand-in aborts if one does): the last references to a kernel
    # node's Buffer argument, an event, and callables holding a Buffer are
    # dropped on the main thread.
    run(fake_driver_dir, """
        live = ctypes.c_int.in_dll(fake, "fake_live_allocations")
        before = live.value
        buf = dev.allocate(64, stream=stream)
        held = dev.allocate(64, stream=stream)
        event = dev.create_event()
        g = GraphDefinition()
        node = g.launch(config, code.get_kernel("k8_4"), buf, 5)
        node.record(event).callback(lambda held=held: None)
        graph = g.instantiate()
        assert live.value == before + 2
        del buf, held, event, node
        del g
        graph.close()
        wait_for(lambda: live.value == before)
        assert fake_int("fake_live_user_objects") == 0
        # Stream.launch_host_func's callable, the last holder of a Buffer.
        held = dev.allocate(64, stream=stream)
        stream.launch_host_func(lambda held=held: None)
        del held
        stream.sync()
        wait_for(lambda: live.value == before)
    """)


def test_conditionals_child_graphs_and_builder_views(fake_driver_dir):
    run(fake_driver_dir, """
        g = GraphDefinition()
        cond = g.create_condition(1)
        assert isinstance(cond, GraphCondition)
        raises(ValueError, "default_value", g.create_condition, -1)
        loop = g.while_loop(cond)
        assert isinstance(loop, WhileNode) and loop.condition == cond and loop.cond_type == "while"
        assert isinstance(loop.body, GraphDefinition) and loop.branches == (loop.body,)
        inside = loop.body.launch(config, code.get_kernel("k8"), cond)
        assert loop.body.nodes() == {inside} and inside.graph == loop.body
        branch = loop.if_else(cond)
        assert isinstance(branch, IfElseNode) and branch.then != branch.else_
        assert isinstance(g.if_then(cond), IfNode)
        sw = g.switch(cond, 3)
        assert isinstance(sw, SwitchNode) and len(sw.branches) == 3 and sw.cond_type == "switch"
        from cubind.core.typing import GraphConditionalType
        assert sw.cond_type is GraphConditionalType.SWITCH and loop.cond_type is GraphConditionalType.WHILE
        try:
            g.switch(cond, 0)
        except cc.CUDAError as error:
            assert "at least 1 branch" in str(error) and error.error_name == "CUDA_ERROR_INVALID_VALUE"
        else:
            raise AssertionError("switch(cond, 0) did not raise")
        raises(OverflowError, "-1", g.switch, cond, -1)
        raises(TypeError, "GraphCondition", g.while_loop, 1)

        child = GraphDefinition()
        child.empty().join(child.empty())
        node = g.embed(child)
        assert isinstance(node, ChildGraphNode)
        assert len(node.child_graph.nodes()) == 3 and node.child_graph != child
        raises(TypeError, "GraphDefinition", g.embed, 3)
        graph = g.instantiate()
        assert type(graph[node]) is ExecutableChildGraphNode
        graph[node].update(child)
        node.update(child)

        # A conditional read back from the driver is the base class.
        del loop, branch, sw, node
        gc.collect()
        found = [n for n in g.nodes() if isinstance(n, ConditionalNode)]
        assert len(found) == 4 and all(type(n) is ConditionalNode and n.branches == () for n in found)

        # A builder's graph as a definition: shared, and valid after close.
        gb = stream.create_graph_builder()
        raises(RuntimeError, "not finished building", lambda: gb.graph_definition)
        gb.begin_building()
        raises(RuntimeError, "building", lambda: gb.graph_definition)
        gb.end_building()
        view = gb.graph_definition
        assert view == gb.graph_definition
        graphs = fake_int("fake_graphs_destroyed")
        gb.close()
        assert view.is_valid and fake_int("fake_graphs_destroyed") == graphs, "the view keeps the graph"
        raises(RuntimeError, "closed", lambda: gb.graph_definition)
        del view
        gc.collect()
        assert fake_int("fake_graphs_destroyed") == graphs + 1
        gb = stream.create_graph_builder().begin_building()
        forked = gb.split(2)[1]
        raises(RuntimeError, "split()", lambda: forked.graph_definition)
        GraphBuilder.join(gb, forked)
        gb.end_building()
    """)


def test_stream_host_func_under_capture_is_owned_by_the_graph(fake_driver_dir):
    run(fake_driver_dir, """
        import weakref
        calls = []
        class Callback:
            def __call__(self):
                calls.append(1)
        fn = Callback()
        ref = weakref.ref(fn)
        gb = stream.create_graph_builder().begin_building()
        stream.launch_host_func(fn)
        gb.end_building()
        graph = gb.complete()
        del fn
        gc.collect()
        assert ref() is not None, "the captured graph keeps the callback"
        # The fake runs a captured host function at every launch.
        for expected in (1, 2, 3):
            graph.launch(stream)
            wait_for(lambda: len(calls) == expected)
        assert ref() is not None
        gb.close()
        gc.collect()
        assert ref() is None, "released with the graph"

        # Outside a capture it runs once and is let go after.
        fn = Callback()
        ref = weakref.ref(fn)
        stream.launch_host_func(fn)
        wait_for(lambda: len(calls) == 4)
        del fn
        time.sleep(0.05)
        gc.collect()
        assert ref() is None
    """)
