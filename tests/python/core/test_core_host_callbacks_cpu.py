"""Host callbacks and stream capture without a GPU, against the stand-in
driver (tests/python/fake_driver): a ctypes function pointer taken by every
place that takes a callable (GraphDefinition and its nodes, GraphBuilder,
Stream.launch_host_func, instantiated nodes) is called as a C function with
its user data and kept alive until the driver is done with it, even after
the caller dropped every reference of its own (the stand-in holds the host
functions back while the test drops them and collects garbage); and a
capture refuses a pool allocation, as cuda.core does, before the driver is
asked, while graph memory and what a relaxed capture allows still work."""
import textwrap

from conftest import STAND_IN_CHECKS, run_with_fake_driver

PRELUDE = STAND_IN_CHECKS + textwrap.dedent("""
    import ctypes, gc, time, weakref
    import cubind.core as cc
    from cubind.core.graph import GraphDefinition
    fake = ctypes.CDLL("libcuda.so.1")
    dev = cc.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    hold = ctypes.c_int.in_dll(fake, "fake_hold_host_functions")

    def wait_for(predicate):
        for _ in range(500):
            if predicate():
                return
            time.sleep(0.01)
        raise AssertionError("timed out")

    def c_callback(seen, size):
        # A ctypes function pointer that records the user data it is given.
        return CALLBACK(lambda p: seen.append(ctypes.string_at(p, size) if p else None))
""")


def run(fake_driver_dir, body):
    run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


def test_a_graphs_ctypes_callback_outlives_the_callers_references(fake_driver_dir):
    run(fake_driver_dir, """
        seen = []
        raw_fn = c_callback(seen, 5)
        ref = weakref.ref(raw_fn)
        data = bytearray(b"hello")
        g = GraphDefinition()
        node = g.callback(raw_fn, user_data=data)
        assert node.callback is None
        del raw_fn
        data[:] = b"XXXXX"      # copied when the node was added
        gc.collect()
        assert ref() is not None, "the graph keeps the ctypes function"
        graph = g.instantiate()
        graph.upload(stream)
        hold.value = 1
        graph.launch(stream)
        graph.launch(stream)
        del g, node
        gc.collect()
        hold.value = 0
        stream.sync()
        wait_for(lambda: seen == [b"hello", b"hello"])

        # Cloned into a parent (a child graph node), instantiated three times.
        seen.clear()
        raw_fn = c_callback(seen, 3)
        ref = weakref.ref(raw_fn)
        child = GraphDefinition()
        child.callback(raw_fn, user_data=b"kid")
        parent = GraphDefinition()
        parent.embed(child)
        del raw_fn, child
        gc.collect()
        graphs = [parent.instantiate() for _ in range(3)]
        del parent
        gc.collect()
        assert ref() is not None
        for each in graphs:
            each.launch(stream)
        stream.sync()
        wait_for(lambda: seen == [b"kid"] * 3)
        for each in graphs:
            each.close()
        del graphs, each
        graph.close()
        del graph
        gc.collect()
        # Let go of on the main thread (a pending call) once the driver is done.
        wait_for(lambda: ref() is None)
        assert fake_int("fake_live_user_objects") == 0

        # user_data as an int address is passed as it is; None as NULL.
        seen.clear()
        buf = ctypes.create_string_buffer(b"addr!")
        g = GraphDefinition()
        g.callback(c_callback(seen, 5), user_data=ctypes.addressof(buf))
        g.callback(c_callback(seen, 1))
        gc.collect()
        g.instantiate().launch(stream)
        stream.sync()
        wait_for(lambda: sorted(seen, key=repr) == [None, b"addr!"])
    """)


def test_node_updates_keep_a_ctypes_callback_alive(fake_driver_dir):
    run(fake_driver_dir, """
        seen = []
        g = GraphDefinition()
        node = g.callback(lambda: seen.append("py"))
        raw_fn = c_callback(seen, 2)
        ref = weakref.ref(raw_fn)
        node.update(raw_fn, user_data=b"d1")
        del raw_fn
        gc.collect()
        assert ref() is not None and node.callback is None
        graph = g.instantiate()
        raw_fn = c_callback(seen, 2)
        exec_ref = weakref.ref(raw_fn)
        graph[node].update(raw_fn, user_data=b"x2")
        del raw_fn, g, node
        gc.collect()
        assert exec_ref() is not None, "the instantiation keeps what its node calls"
        graph.launch(stream)
        stream.sync()
        wait_for(lambda: seen == [b"x2"])
        graph.close()
        del graph
        gc.collect()
        wait_for(lambda: ref() is None and exec_ref() is None)
    """)


def test_captured_ctypes_callbacks_live_as_long_as_the_graph(fake_driver_dir):
    run(fake_driver_dir, """
        seen = []
        raw_fn = c_callback(seen, 4)
        ref = weakref.ref(raw_fn)
        gb = stream.create_graph_builder().begin_building()
        gb.callback(raw_fn, user_data=b"capt")
        gb.end_building()
        graph = gb.complete()
        del raw_fn
        gc.collect()
        assert ref() is not None
        for expected in (1, 2):
            graph.launch(stream)
            stream.sync()
            wait_for(lambda: seen == [b"capt"] * expected)
        graph.close()
        gb.close()
        del graph, gb
        gc.collect()
        wait_for(lambda: ref() is None)

        # Stream.launch_host_func under capture takes one the same way.
        seen.clear()
        raw_fn = c_callback(seen, 3)
        ref = weakref.ref(raw_fn)
        gb = stream.create_graph_builder().begin_building("relaxed")
        stream.launch_host_func(raw_fn, user_data=b"cap")
        gb.end_building()
        del raw_fn
        gc.collect()
        gb.complete().launch(stream)
        stream.sync()
        wait_for(lambda: seen == [b"cap"])
        assert ref() is not None
        gb.close()
        del gb
        gc.collect()
        wait_for(lambda: ref() is None)
    """)


def test_launch_host_func_keeps_a_ctypes_function_until_it_ran(fake_driver_dir):
    run(fake_driver_dir, """
        seen = []
        raw_fn = c_callback(seen, 3)
        ref = weakref.ref(raw_fn)
        data = bytearray(b"one")
        hold.value = 1
        stream.launch_host_func(raw_fn, user_data=data)
        data[:] = b"XXX"
        del raw_fn
        gc.collect()
        assert ref() is not None, "kept until the driver called it"
        hold.value = 0
        stream.sync()
        wait_for(lambda: seen == [b"one"])
        wait_for(lambda: ref() is None)

        # A Python callable still works, and is let go of after its call.
        calls = []
        class Callback:
            def __call__(self):
                calls.append(1)
        fn = Callback()
        ref = weakref.ref(fn)
        hold.value = 1
        stream.launch_host_func(fn)
        del fn
        gc.collect()
        assert ref() is not None
        hold.value = 0
        stream.sync()
        wait_for(lambda: calls == [1] and ref() is None)
    """)


def test_bad_callbacks_and_user_data_name_the_parameter(fake_driver_dir):
    run(fake_driver_dir, """
        g = GraphDefinition()
        gb = stream.create_graph_builder().begin_building()
        good = c_callback([], 0)
        places = [("GraphNode.callback: fn", g.callback), ("GraphBuilder.callback: fn", gb.callback),
                  ("Stream.launch_host_func: callback", stream.launch_host_func)]
        for where, add in places:
            raises(TypeError, where + " must be callable", add, 3)
            raises(TypeError, "not int (3)", add, 3)
            raises(ValueError, where.split(":")[0] + ": user_data is only for ctypes", add, print, user_data=b"x")
            wrong = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(lambda p: 0)
            raises(TypeError, "restype=<class 'ctypes.c_int'>", add, wrong)
            raises(TypeError, "CUDA requires a callback matching CUhostFn", add, wrong)
            raises(TypeError, "argtypes=(<class 'ctypes.c_int'>,)", add,
                   ctypes.CFUNCTYPE(None, ctypes.c_int)(lambda p: None))
            # A function of a library keeps ctypes' default prototype until declared.
            raises(TypeError, "CUhostFn", add, ctypes.CDLL(None).free)
            raises(ValueError, "NULL function pointer", add, CALLBACK())
            raises(TypeError, where.split(":")[0] + ": user_data must be", add, good, user_data=1.5)
            raises(ValueError, where + " <CFunctionType", add, CALLBACK())
            raises(TypeError, "not str ('text')", add, good, user_data="text")
            raises(OverflowError, "user_data is -1", add, good, user_data=-1)
        gb.end_building()
        # Nothing was kept by the failed calls.
        gb.close()
        del g, gb
        gc.collect()
        assert fake_int("fake_live_user_objects") == 0
    """)


def test_a_capture_refuses_pool_allocations_before_the_driver_is_asked(fake_driver_dir):
    run(fake_driver_dir, """
        from cubind.core import (DeviceMemoryResource, DeviceMemoryResourceOptions, GraphMemoryResource,
                                 ManagedMemoryResource, PinnedMemoryResource)
        dmr = DeviceMemoryResource(dev)
        pinned = PinnedMemoryResource()
        managed = ManagedMemoryResource()
        gmr = GraphMemoryResource(dev)
        dmr.allocate(64, stream=stream).close(stream=stream)     # before the capture: fine
        for mode in ("global", "thread_local", "relaxed"):
            live = fake_int("fake_live_allocations")
            gb = dev.create_graph_builder().begin_building(mode)
            for mr in (dmr, pinned, managed):
                raises(RuntimeError, f"{type(mr).__name__} cannot perform memory operations on a capturing stream "
                       "(consider using GraphMemoryResource).", mr.allocate, 64, stream=gb)
            raises(RuntimeError, "capturing stream", dev.allocate, 64, stream=gb.stream)
            assert fake_int("fake_pool_allocs_in_capture") == 0, "refused before the driver was asked"
            assert fake_int("fake_live_allocations") == live
            # Graph memory is what a capture allocates: an allocation node.
            graph_allocs = fake_int("fake_graph_allocs")
            buf = gmr.allocate(64, stream=gb)
            assert fake_int("fake_graph_allocs") == graph_allocs + 1
            buf.close()
            gb.end_building().complete().launch(stream)
            stream.sync()
        # After the capture the pools allocate again.
        dmr.allocate(64, stream=stream).close(stream=stream)
        assert fake_int("fake_capture_refusals") == 0, "nothing unsafe was called during the captures"
        raises(RuntimeError, "non-capturing stream", gmr.allocate, 64, stream=stream)

        # What the driver refuses during a global capture surfaces as its error
        # (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900);
        # a relaxed capture allows it.
        from cubind.core import CUDAError
        gb = dev.create_graph_builder().begin_building("global")
        raises(CUDAError, "cuMemPoolCreate", DeviceMemoryResource, dev,
               DeviceMemoryResourceOptions(max_size=1 << 20))
        gb.end_building()
        gb = dev.create_graph_builder().begin_building("relaxed")
        DeviceMemoryResource(dev, DeviceMemoryResourceOptions(max_size=1 << 20)).close()
        gb.end_building()
    """)
