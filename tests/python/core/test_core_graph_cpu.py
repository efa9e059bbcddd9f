"""cubind.core.graph without a GPU: the option dataclasses, the classes that
cannot be made directly, GraphCondition, and a GraphBuilder's life against
the stand-in driver (tests/python/fake_driver/fake_libcuda.c): the state
errors, the capture modes, instantiation options reaching
cuGraphInstantiateWithParams, update, upload, DOT output, conditions, split
and join, and a GraphCondition passed to launch as its 8-byte handle."""
import dataclasses
import textwrap

import pytest
from conftest import STAND_IN_CHECKS, run_with_fake_driver

import cubind.core as cc
from cubind.core.graph import (
    Graph,
    GraphBuilder,
    GraphCompleteOptions,
    GraphCondition,
    GraphDebugPrintOptions,
)


def test_the_module_exports_its_names():
    import cubind.core.graph as graph

    assert {"Graph", "GraphBuilder", "GraphCompleteOptions", "GraphCondition", "GraphDebugPrintOptions",
            "GraphDefinition", "GraphNode", "KernelNode"} <= set(graph.__all__)
    assert cc.graph is graph
    assert "GraphMemoryResource" in cc.__all__


def test_complete_options_defaults():
    options = GraphCompleteOptions()
    assert (options.auto_free_on_launch, options.upload_stream, options.device_launch,
            options.use_node_priority) == (False, None, False, False)


def test_debug_print_flags_follow_cuda_h():
    assert GraphDebugPrintOptions()._to_flags() == 0
    assert GraphDebugPrintOptions(verbose=True)._to_flags() == 1
    assert GraphDebugPrintOptions(handles=True, conditional_node_params=True)._to_flags() == (1 << 10) | (1 << 15)
    every = GraphDebugPrintOptions(**{f.name: True for f in dataclasses.fields(GraphDebugPrintOptions)})
    assert every._to_flags() == (1 << 16) - 1


def test_builders_and_graphs_are_not_made_directly():
    with pytest.raises(NotImplementedError, match="create_graph_builder"):
        GraphBuilder()
    with pytest.raises(RuntimeError, match="GraphBuilder.complete"):
        Graph()


def test_condition_compares_and_hashes_by_value():
    a, b = GraphCondition(), GraphCondition()
    assert a == b and hash(a) == hash(b) and int(a) == 0
    assert "GraphCondition" in repr(a)
    assert a != 0


PRELUDE = STAND_IN_CHECKS + textwrap.dedent("""
    import ctypes, os, struct, tempfile
    import cubind.core as cc
    from cubind.core.graph import GraphBuilder, GraphCompleteOptions, GraphCondition, GraphDebugPrintOptions
    fake = ctypes.CDLL("libcuda.so.1")
    dev = cc.Device(0)
    dev.set_current()
    stream = dev.create_stream()
""")


def run(fake_driver_dir, body):
    run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


def test_builder_state_errors_and_modes(fake_driver_dir):
    run(fake_driver_dir, """
        gb = dev.create_graph_builder()
        assert not gb.is_building and not gb.is_join_required and not gb.is_closed
        assert gb.stream is not stream and gb.__cuda_stream__()[1] == int(gb.stream.handle)
        raises(RuntimeError, "Graph has not finished building", gb.complete)
        raises(RuntimeError, "not building", gb.end_building)
        raises(ValueError, "Unsupported build mode", gb.begin_building, "loose")
        raises(ValueError, "Unsupported build mode", gb.begin_building, None)
        assert gb.begin_building("global") is gb
        assert gb.is_building
        raises(RuntimeError, "building already", gb.begin_building)
        assert gb.end_building() is gb
        assert not gb.is_building
        raises(RuntimeError, "Cannot resume building", gb.begin_building, "thread_local")
        own_stream = gb.stream
        gb.close()
        assert gb.is_closed and own_stream.is_closed
        raises(RuntimeError, "closed", gb.complete)
        gb.close()

        # A builder on a stream of the caller's leaves the stream open.
        sb = stream.create_graph_builder()
        assert sb.stream is stream
        sb.begin_building().end_building()
        sb.close()
        assert not stream.is_closed
    """)


def test_complete_passes_the_options_and_the_graph_runs(fake_driver_dir):
    run(fake_driver_dir, """
        gb = stream.create_graph_builder().begin_building("relaxed").end_building()
        g = gb.complete()
        assert fake_int("fake_instantiate_flags", ctypes.c_ulonglong) == 0
        assert fake_int("fake_upload_stream", ctypes.c_void_p) is None
        upload = dev.create_stream()
        g2 = gb.complete(GraphCompleteOptions(auto_free_on_launch=True, upload_stream=upload,
                                              use_node_priority=True))
        # AUTO_FREE_ON_LAUNCH | UPLOAD | USE_NODE_PRIORITY
        assert fake_int("fake_instantiate_flags", ctypes.c_ulonglong) == 1 | 2 | 8
        assert fake_int("fake_upload_stream", ctypes.c_void_p) == int(upload.handle)
        raises(ValueError, "device_launch", gb.complete, GraphCompleteOptions(auto_free_on_launch=True,
                                                                              device_launch=True))
        raises(TypeError, "GraphCompleteOptions", gb.complete, {"auto_free_on_launch": True})

        assert int(g.handle) == 0xe6
        g.launch(stream)
        g.upload(stream)
        assert fake_int("fake_graph_uploads") == 1
        raises(TypeError, "stream", g.launch, 5)
        g.update(gb)
        assert fake_int("fake_graph_updates") == 1
        raises(TypeError, "expected GraphBuilder or GraphDefinition, got Graph", g.update, g2)
        # A graph that cannot take the source's parameters: cuda.core's words and the driver's reason.
        ctypes.c_int.in_dll(fake, "fake_update_result").value = 2  # CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED
        try:
            g.update(gb)
        except cc.CUDAError as error:
            assert str(error).startswith("Graph update failed: ") and "TOPOLOGY_CHANGED" in str(error), str(error)
            assert error.status == 910 and error.api_function == "cuGraphExecUpdate"
        else:
            raise AssertionError("a failed update did not raise CUDAError")
        ctypes.c_int.in_dll(fake, "fake_update_result").value = 0
        unfinished = stream.create_graph_builder()
        # cuda.core's ValueError for a builder that has not ended building.
        raises(ValueError, "Graph has not finished building.", g.update, unfinished)

        destroyed = fake_int("fake_execs_destroyed")
        g.close()
        assert g.is_closed and fake_int("fake_execs_destroyed") == destroyed + 1
        raises(RuntimeError, "Graph has been closed", g.launch, stream)
        g.close()
        graphs = fake_int("fake_graphs_destroyed")
        gb.close()
        assert fake_int("fake_graphs_destroyed") == graphs + 1
        g2.launch(stream)  # an instantiation outlives its builder
    """)


def test_debug_dot_print_writes_the_flags_asked_for(fake_driver_dir):
    run(fake_driver_dir, """
        gb = stream.create_graph_builder().begin_building()
        path = os.path.join(tempfile.mkdtemp(), "g.dot")
        raises(RuntimeError, "not finished building", gb.debug_dot_print, path)
        gb.end_building()
        gb.debug_dot_print(path)
        assert open(path).read().strip() == "digraph fake { flags=0 }"
        gb.debug_dot_print(path, GraphDebugPrintOptions(verbose=True, handles=True))
        assert open(path).read().strip() == "digraph fake { flags=1025 }"
        raises(TypeError, "GraphDebugPrintOptions", gb.debug_dot_print, path, {"verbose": True})
        raises(TypeError, "path", gb.debug_dot_print, 3)
    """)


def test_conditions_and_their_arguments(fake_driver_dir):
    run(fake_driver_dir, """
        gb = stream.create_graph_builder()
        raises(RuntimeError, "not capturing", gb.create_condition)
        gb.begin_building()
        plain = gb.create_condition()
        assert int(plain) == 0x5eed0000  # no default: flags 0
        seven = gb.create_condition(7)
        assert int(seven) == 0x5eed0000 + 14 + 1  # CU_GRAPH_COND_ASSIGN_DEFAULT
        assert int(seven.handle) == int(seven) and seven != plain
        raises(TypeError, "default_value", gb.create_condition, "1")
        raises(ValueError, "default_value", gb.create_condition, -1)
        raises(ValueError, "default_value", gb.create_condition, 2**32)
        raises(TypeError, "GraphCondition", gb.while_loop, 3)
        raises(TypeError, "GraphCondition", gb.if_then, None)
        raises(TypeError, "count", gb.switch, plain, 2.0)
        raises(cc.CUDAError, "count is 0", gb.switch, plain, 0)
        raises(OverflowError, "count is -1", gb.switch, plain, -1)

        # Passed to a kernel, a condition is its 8-byte handle.
        code = cc.ObjectCode.from_cubin(b"stand-in cubin", name="standin")
        k = code.get_kernel("k8_4")
        cc.launch(gb, cc.LaunchConfig(grid=1, block=1, shmem_size=2), k, seven, 3)
        raw = (ctypes.c_ubyte * 256).in_dll(fake, "fake_params")
        assert struct.unpack("<Q", bytes(raw[0:8])) == (int(seven),)
        raises(TypeError, "GraphCondition", cc.launch, gb, cc.LaunchConfig(grid=1, block=1),
               code.get_kernel("k4"), seven)
        gb.end_building()
    """)


def test_split_and_join(fake_driver_dir):
    run(fake_driver_dir, """
        gb = dev.create_graph_builder()
        raises(RuntimeError, "not building", gb.split, 2)
        gb.begin_building()
        raises(ValueError, "Invalid split count", gb.split, 1)
        raises(TypeError, "count", gb.split, True)
        first, second, third = gb.split(3)
        assert first is gb and not gb.is_join_required
        assert second.is_join_required and third.is_join_required
        assert len({first.stream, second.stream, third.stream}) == 3
        raises(RuntimeError, "split", second.end_building)
        raises(RuntimeError, "split", second.begin_building)
        raises(ValueError, "at least two", GraphBuilder.join, gb)
        raises(TypeError, "GraphBuilder", GraphBuilder.join, gb, stream)
        # The builder that was not split off is the one returned, wherever it is.
        forked_streams = [second.stream, third.stream]
        assert GraphBuilder.join(third, gb, second) is gb
        assert second.is_closed and third.is_closed
        assert not any(s.is_closed for s in forked_streams), "closed once the capture ends"
        gb.end_building()
        assert all(s.is_closed for s in forked_streams)
        gb.complete().launch(stream)
    """)


def test_callback_arguments(fake_driver_dir):
    run(fake_driver_dir, """
        gb = stream.create_graph_builder()
        raises(RuntimeError, "not capturing", gb.callback, lambda: None)
        gb.begin_building()
        raises(TypeError, "callable", gb.callback, 5)
        raises(ValueError, "user_data", gb.callback, lambda: None, user_data=b"x")
        bad = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(lambda p: 0)
        raises(TypeError, "CUhostFn", gb.callback, bad)
        good = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda p: None)
        raises(TypeError, "user_data", gb.callback, good, user_data=1.5)
        gb.end_building()
    """)
