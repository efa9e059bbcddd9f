"""Objects of cubind.core behave as cuda.core's do, checked against the
stand-in driver: event arithmetic and the errors of timing, weak references,
the peer set of a memory pool, IPC events opened in another process, a
0-byte buffer and copies with CopyOptions."""
import textwrap

from conftest import STAND_IN_CHECKS, run_with_fake_driver

PRELUDE = STAND_IN_CHECKS + textwrap.dedent("""
    import ctypes, pickle, weakref
    import cubind.core as cc
    from cubind.core import EventOptions
    fake = ctypes.CDLL("libcuda.so.1")
    dev = cc.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    elapsed_status = ctypes.c_int.in_dll(fake, "fake_elapsed_status")
""")


def run(fake_driver_dir, body):
    run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


def test_event_arithmetic_raises_what_cuda_core_raises(fake_driver_dir):
    run(fake_driver_dir, """
        timed = EventOptions(timing_enabled=True)
        start, end = stream.record(options=timed), stream.record(options=timed)
        assert end - start == 0.5
        plain = stream.record()
        for left, right in ((end, plain), (plain, start), (plain, plain)):
            raises(RuntimeError, "Both Events must be created with timing enabled", lambda: left - right)
        raises(RuntimeError, "EventOptions(timing_enabled=True)", lambda: end - plain)
        elapsed_status.value = 400   # CUDA_ERROR_INVALID_HANDLE: never recorded
        raises(RuntimeError, "Both Events must be recorded before they can be subtracted", lambda: end - start)
        elapsed_status.value = 600   # CUDA_ERROR_NOT_READY
        raises(RuntimeError, "One or both events have not completed", lambda: end - start)
        try:
            end - start
        except RuntimeError as error:
            assert isinstance(error.__cause__, cc.CUDAError) and error.__cause__.status == 600
        elapsed_status.value = 1     # anything else is the driver's CUDAError
        raises(cc.CUDAError, "", lambda: end - start)
        elapsed_status.value = 0
        # Only Event - Event is defined: the rest is Python's TypeError.
        for bad in (lambda: end - 1, lambda: 1 - end, lambda: end + start, lambda: end < start):
            raises(TypeError, "", bad)
        value = end
        value -= start
        assert value == 0.5
        holder = [end]
        def subtract_in_place():
            holder[0] -= 1
        raises(TypeError, "", subtract_in_place)
        assert (end == start) is False and (end == 1) is False and end == end
    """)


def test_weak_references_reach_the_objects_of_cubind(fake_driver_dir):
    run(fake_driver_dir, """
        buffer = dev.allocate(64, stream=stream)
        objects = [buffer, stream, stream.record(), dev.memory_resource, cc.LaunchConfig(grid=1, block=1),
                   cc.ObjectCode.from_cubin(b"stand-in cubin"), dev, dev.context]
        refs = [weakref.ref(o) for o in objects]
        assert [r() for r in refs] == objects
        ref = weakref.ref(buffer)
        buffer.close()
        del buffer, objects
        assert ref() is None
    """)


def test_peer_accessible_by_reads_back_devices_and_ignores_its_own(fake_driver_dir):
    run(fake_driver_dir, """
        mr = cc.DeviceMemoryResource(dev, cc.DeviceMemoryResourceOptions(max_size=1 << 20))
        peers = mr.peer_accessible_by
        assert set(peers) == set() and len(peers) == 0
        peers.add(0)
        peers.add(dev)
        assert 0 not in peers and dev not in peers and list(peers) == []
        mr.peer_accessible_by = [0, dev]
        assert set(mr.peer_accessible_by) == set()
        assert (peers | {dev}) == {dev}
        raises(ValueError, "device_id", peers.add, 5)
        raises(TypeError, "Device or an int", peers.add, "1")
    """)


def test_an_ipc_event_opened_elsewhere_has_no_device_or_context(fake_driver_dir):
    run(fake_driver_dir, """
        event = stream.record(options=EventOptions(ipc_enabled=True))
        assert event.device is dev and event.context == dev.context
        opened = cc.Event.from_ipc_descriptor(event.ipc_descriptor)
        assert opened.device is None and opened.context is None
        assert opened.is_ipc_enabled and not opened.is_timing_enabled
        # What a child process sends back about the event pickles.
        props = pickle.loads(pickle.dumps((opened.ipc_descriptor, opened.is_ipc_enabled, opened.device,
                                           opened.context)))
        assert props == (event.ipc_descriptor, True, None, None)
        stream.wait(opened)
    """)


def test_a_buffer_of_zero_bytes_and_copies_with_options(fake_driver_dir):
    run(fake_driver_dir, """
        from cubind.core.utils import CopyOptions
        empty = dev.memory_resource.allocate(0, stream=stream)
        assert empty.size == 0 and empty.handle == 0 and not empty.is_closed
        assert weakref.ref(empty)() is empty
        empty.close()
        assert empty.is_closed
        raises(OverflowError, "size is -1", dev.memory_resource.allocate, -1, stream=stream)
        src, dst = dev.allocate(256, stream=stream), dev.allocate(256, stream=stream)
        # With options the copy is a batch of one: cuMemcpyBatchAsync, which the
        # stand-in driver lacks (the GPU tests run it).
        raises(RuntimeError, "cuMemcpyBatchAsync", src.copy_to, dst, stream=stream,
               options=CopyOptions(src_access_order="any"))
        raises(RuntimeError, "cuMemcpyBatchAsync", dst.copy_from, src, stream=stream, options=CopyOptions())
        raises(TypeError, "CopyOptions", src.copy_to, dst, stream=stream, options={"src_access_order": "any"})
        raises(TypeError, "LEGACY_DEFAULT_STREAM", src.copy_to, dst, stream=cc.LEGACY_DEFAULT_STREAM,
               options=CopyOptions())
        src.close(); dst.close()
    """)


def test_switch_of_no_branches_is_the_drivers_error(fake_driver_dir):
    run(fake_driver_dir, """
        from cubind.core.graph import GraphDefinition
        from cubind.core.typing import GraphConditionalType
        g = GraphDefinition()
        cond = g.create_condition(1)
        node = g.if_then(cond)
        assert node.cond_type is GraphConditionalType.IF and "'if'" in repr(node)
        try:
            g.switch(g.create_condition(0), 0)
        except cc.CUDAError as error:
            assert error.error_name == "CUDA_ERROR_INVALID_VALUE" and "count is 0" in str(error)
        else:
            raise AssertionError("switch(cond, 0) did not raise CUDAError")
        # The entry node has no edges, and none can be added to it.
        entry = g._entry
        assert set(entry.pred) == set() and set(entry.succ) == set() and len(entry.succ) == 0
        assert node not in entry.succ
        entry.succ.clear()
        try:
            entry.succ.add(node)
        except cc.CUDAError as error:
            assert error.error_name == "CUDA_ERROR_INVALID_VALUE" and "entry node" in str(error)
        else:
            raise AssertionError("an edge from the entry node did not raise CUDAError")
        other = g.join()
        raises(TypeError, "expected GraphNode, got int", other.succ.add, 5)
        other.succ.discard(5)
        assert 5 not in other.succ
    """)


def test_only_green_contexts_are_made_as_in_cuda_core(fake_driver_dir):
    run(fake_driver_dir, """
        raises(NotImplementedError, "only green contexts", dev.create_context)
        raises(NotImplementedError, "resources is None", dev.create_context, cc.ContextOptions(resources=None))
        raises(NotImplementedError, "resources is None", dev.create_context, {"resources": None})
        raises(TypeError, "ContextOptions", dev.create_context, object())
    """)


def test_set_current_takes_every_call_cuda_core_takes_and_raises_the_drivers_error(fake_driver_dir):
    run(fake_driver_dir, """
        import inspect
        set_status = ctypes.c_int.in_dll(fake, "fake_set_current_status")
        seen = ctypes.c_void_p()

        def current():
            assert fake.cuCtxGetCurrent(ctypes.byref(seen)) == 0
            return seen.value

        primary = current()
        assert primary
        bound = dev.set_current
        for call in (dev.set_current, lambda: dev.set_current(None), lambda: dev.set_current(ctx=None),
                     lambda: cc.Device.set_current(dev), bound):
            assert fake.cuCtxSetCurrent(None) == 0 and current() is None
            assert call() is None
            assert current() == primary
        assert str(inspect.signature(cc.Device.set_current)) == "(self, /, ctx=None)"
        assert "primary context" in cc.Device.set_current.__doc__

        # With a Context, the one that was current comes back, and the Device
        # keeps ctx until set_current() without one.
        ctx = dev.context
        assert fake.cuCtxSetCurrent(None) == 0
        assert dev.set_current(ctx) is None and dev._current is ctx
        assert dev.set_current(ctx).handle == ctx.handle
        dev.set_current()
        assert dev._current is None

        raises(TypeError, "ctx must be a Context or None, not int", dev.set_current, 5)
        raises(TypeError, "", dev.set_current, None, None)
        raises(TypeError, "", dev.set_current, context=None)
        raises(TypeError, "Device", cc.Device.set_current, 0)

        # The driver's error is raised with the call that failed, and the
        # next call, once the driver answers again, succeeds.
        assert fake.cuCtxSetCurrent(None) == 0
        set_status.value = 201          # CUDA_ERROR_INVALID_CONTEXT
        try:
            dev.set_current()
        except cc.CUDAError as error:
            assert "cuCtxSetCurrent" in str(error) and error.status == 201, str(error)
        else:
            raise AssertionError("set_current() did not raise CUDAError")
        assert current() is None
        set_status.value = 0
        dev.set_current()
        assert current() == primary
    """)


def test_create_stream_and_create_event_on_every_kind_of_device_object(fake_driver_dir):
    run(fake_driver_dir, """
        # A Device of the class itself (read from its slots), a subclass's, the
        # unbound method, and a Device holding a Context set current: each makes
        # an open stream and event of device 0, and closing twice is harmless.
        # (A thread's first Device of an ordinal is of the class it was asked of.)
        import threading

        class MyDevice(cc.Device):
            pass

        def check(device):
            makers = [device.create_stream, lambda: cc.Device.create_stream(device),
                      lambda: device.create_stream(None, None),
                      lambda: device.create_stream(options=cc.StreamOptions())]
            for make in makers:
                s = make()
                assert type(s) is cc.Stream and s.device.device_id == 0 and not s.is_closed
                assert int(s.handle) != 0 and s.handle != stream.handle
                s.close()
                s.close()
                assert s.is_closed
            for make in (device.create_event, lambda: cc.Device.create_event(device)):
                e = make()
                assert type(e) is cc.Event and e.device.device_id == 0
                e.close()

        def in_thread():
            mine = MyDevice(0)
            assert type(mine) is MyDevice and mine.device_id == 0
            mine.set_current()
            check(mine)
            done.append(True)

        done = []
        thread = threading.Thread(target=in_thread)
        thread.start()
        thread.join()
        assert done == [True]
        check(dev)

        dev.set_current(dev.context)
        assert dev._current is not None
        s = dev.create_stream()
        assert s.device.device_id == 0 and not s.context.is_green
        s.close()
        dev.set_current()
        assert dev._current is None

        raises(TypeError, "StreamOptions", dev.create_stream, None, 5)
        raises(TypeError, "create_stream", cc.Device.create_stream, 0)
        import inspect
        assert str(inspect.signature(cc.Device.create_stream)) == "(self, /, obj=None, options=None)"
        assert "green context" in cc.Device.create_stream.__doc__

        # Many streams open at once and closed out of order: the core's table of
        # the streams it owns grows and shrinks, and each is destroyed once.
        many = [dev.create_stream() for _ in range(300)]
        assert len({int(s.handle) for s in many}) == 300
        for s in many[::2] + many[1::2]:
            s.close()
        assert all(s.is_closed for s in many)
        del many
        stream.sync()
    """)


def test_event_options_are_read_as_they_are_at_each_call(fake_driver_dir):
    run(fake_driver_dir, """
        # One EventOptions changed between calls, a field deleted from the
        # instance (the class default then), a subclass whose field is a
        # property, and a dict: each record and create_event follows what the
        # options say at that call.
        opts = EventOptions(timing_enabled=True)
        first = stream.record(options=opts)
        assert first.is_timing_enabled and not first.is_blocking_sync and not first.is_ipc_enabled
        opts.timing_enabled = False
        opts.blocking_sync = 1
        second = stream.record(options=opts)
        assert not second.is_timing_enabled and second.is_blocking_sync
        opts.timing_enabled = True
        opts.ipc_enabled = True
        raises(TypeError, "IPC-enabled events cannot use timing", stream.record, options=opts)
        raises(TypeError, "IPC-enabled events cannot use timing", dev.create_event, opts)
        opts.ipc_enabled = False
        del opts.timing_enabled
        assert opts.timing_enabled is False          # the dataclass's default
        third = stream.record(options=opts)
        assert not third.is_timing_enabled and third.is_blocking_sync

        class AlwaysTimed(EventOptions):
            @property
            def timing_enabled(self):
                return True

            @timing_enabled.setter
            def timing_enabled(self, value):
                pass

        fourth = stream.record(options=AlwaysTimed(timing_enabled=False))
        assert fourth.is_timing_enabled
        fifth = dev.create_event({"timing_enabled": True, "blocking_sync": True})
        assert fifth.is_timing_enabled and fifth.is_blocking_sync
        raises(TypeError, "options must be an EventOptions, a dict or None, not int", stream.record, options=3)
        for e in (first, second, third, fourth, fifth):
            e.close()
    """)


def test_pool_allocations_on_a_stream_and_their_failures(fake_driver_dir):
    # A pool resource's allocate on a stream of the caller's calls the driver
    # itself (cuStreamIsCapturing, cuMemAllocFromPoolAsync), and the Buffer's
    # close frees on the right stream; a default stream, a failed allocation
    # and a failed free go through the resource, with the driver's error, and
    # lose nothing.
    run(fake_driver_dir, """
        import gc
        from cubind.core import (DeviceMemoryResource, DeviceMemoryResourceOptions, LEGACY_DEFAULT_STREAM,
                                 ManagedMemoryResource, PinnedMemoryResource)
        def fake_ptr(name):
            return ctypes.c_void_p.in_dll(fake, name).value or 0
        alloc_status = ctypes.c_int.in_dll(fake, "fake_pool_alloc_status")
        free_status = ctypes.c_int.in_dll(fake, "fake_free_status")
        other = dev.create_stream()
        own = DeviceMemoryResource(dev, DeviceMemoryResourceOptions())
        resources = (DeviceMemoryResource(dev), own, PinnedMemoryResource(), ManagedMemoryResource(), dev)
        for mr in resources:
            name = type(mr).__name__
            live = fake_int("fake_live_allocations")
            buf = mr.allocate(256, stream=stream)
            assert fake_ptr("fake_last_alloc_stream") == int(stream.handle), name
            assert buf.size == 256 and buf.handle == fake_int("fake_last_alloc", ctypes.c_ulonglong)
            assert fake_int("fake_live_allocations") == live + 1
            assert buf.memory_resource is (mr.memory_resource if mr is dev else mr)
            # Freed on the allocation's stream, on the one given, on the deallocation stream.
            address = buf.handle
            buf.close()
            assert fake_int("fake_last_free", ctypes.c_ulonglong) == address
            assert fake_ptr("fake_last_free_stream") == int(stream.handle), name
            assert buf.is_closed and fake_int("fake_live_allocations") == live
            buf = mr.allocate(256, stream=stream)
            buf.close(stream=other)
            assert fake_ptr("fake_last_free_stream") == int(other.handle), name
            buf = mr.allocate(256, stream=stream)
            buf.set_deallocation_stream(other)
            address = buf.handle
            del buf
            gc.collect()
            assert fake_int("fake_last_free", ctypes.c_ulonglong) == address, "freed when collected"
            assert fake_ptr("fake_last_free_stream") == int(other.handle), name
            # A default stream: the same, through the resource.
            buf = mr.allocate(256, stream=LEGACY_DEFAULT_STREAM)
            address = buf.handle
            buf.close(stream=stream)
            assert fake_int("fake_last_free", ctypes.c_ulonglong) == address
            assert fake_ptr("fake_last_free_stream") == int(stream.handle), name
            buf = mr.allocate(256, stream=stream)
            buf.close(stream=LEGACY_DEFAULT_STREAM)
            assert fake_int("fake_live_allocations") == live, name
            # The driver's errors: nothing allocated, nothing lost; a failed
            # close leaves the Buffer open, and closing it again frees it once.
            alloc_status.value = 2          # CUDA_ERROR_OUT_OF_MEMORY
            try:
                mr.allocate(256, stream=stream)
            except cc.CUDAError as error:
                assert error.status == 2 and "cuMemAllocFromPoolAsync" in str(error), str(error)
            else:
                raise AssertionError(f"{name}: allocate did not raise")
            finally:
                alloc_status.value = 0
            assert fake_int("fake_live_allocations") == live
            buf = mr.allocate(256, stream=stream)
            address = buf.handle
            free_status.value = 400         # CUDA_ERROR_INVALID_HANDLE
            try:
                raises(cc.CUDAError, "cuMemFreeAsync", buf.close)
                raises(cc.CUDAError, "cuMemFreeAsync", buf.close, stream=other)
            finally:
                free_status.value = 0
            assert not buf.is_closed and buf.handle == address
            assert fake_int("fake_live_allocations") == live + 1
            buf.close()
            assert fake_int("fake_last_free", ctypes.c_ulonglong) == address and buf.is_closed
            assert fake_int("fake_live_allocations") == live, name
        # A resource closed first: its buffers still close into its pool,
        # which is destroyed after the last of them.
        destroyed = fake_int("fake_pools_destroyed")
        buf = own.allocate(256, stream=stream)
        own.close()
        assert fake_int("fake_pools_destroyed") == destroyed
        raises(RuntimeError, "closed", own.allocate, 256, stream=stream)
        address = buf.handle
        buf.close()
        assert fake_int("fake_last_free", ctypes.c_ulonglong) == address
        assert fake_int("fake_pools_destroyed") == destroyed + 1
    """)
