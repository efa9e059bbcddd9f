"""cubind.core's launch and allocation paths against the stand-in driver
(tests/python/fake_driver/fake_libcuda.c), so CI checks without a GPU what
each argument becomes in the kernel's parameter bytes, which config and
stream reach cuLaunchKernelEx, and that Device.allocate and Buffer.close
reach the pool. A kernel's parameter sizes are spelled in its name there:
"k4_8_1" takes 4, 8 and 1 bytes; the stand-in records the parameters of the
last launch, as many as the config's shmem_size says.
"""
import textwrap

from conftest import run_with_fake_driver

PRELUDE = textwrap.dedent("""
    import ctypes, struct
    import cubind.core as cc
    fake = ctypes.CDLL("libcuda.so.1")
    dev = cc.Device(0)
    dev.set_current()
    stream = dev.create_stream()
    code = cc.ObjectCode.from_cubin(b"stand-in cubin", name="standin")

    def launched(kernel, *args, grid=1, block=1):
        n = kernel.num_arguments
        cc.launch(stream, cc.LaunchConfig(grid=grid, block=block, shmem_size=n), kernel, *args)
        assert ctypes.c_int.in_dll(fake, "fake_nparams").value == n
        raw = (ctypes.c_ubyte * 256).in_dll(fake, "fake_params")
        return [bytes(raw[i * 16:(i + 1) * 16]) for i in range(n)]

    def config_seen():
        return list((ctypes.c_uint * 8).in_dll(fake, "fake_config"))
""")


def run(fake_driver_dir, body):
    run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


def test_ints_fill_4_and_8_byte_parameters_as_signed_or_unsigned(fake_driver_dir):
    run(fake_driver_dir, """
        k = code.get_kernel("k4_4_4_8_8_8")
        p = launched(k, -1, 2**32 - 1, 7, -2**63, 2**64 - 1, 123456789012)
        assert struct.unpack("<i", p[0][:4]) == (-1,)
        assert struct.unpack("<I", p[1][:4]) == (2**32 - 1,)
        assert struct.unpack("<i", p[2][:4]) == (7,)
        assert struct.unpack("<q", p[3][:8]) == (-2**63,)
        assert struct.unpack("<Q", p[4][:8]) == (2**64 - 1,)
        assert struct.unpack("<q", p[5][:8]) == (123456789012,)
    """)


def test_small_ints_bools_floats_buffers_and_numpy_scalars(fake_driver_dir):
    run(fake_driver_dir, """
        import numpy as np
        buf = dev.allocate(256, stream=stream)
        k = code.get_kernel("k1_2_4_8_8_4_1_2")
        p = launched(k, -3, 60000, 1.5, 0.25, buf, np.float32(2.5), True, np.int16(-2))
        assert struct.unpack("<b", p[0][:1]) == (-3,)
        assert struct.unpack("<H", p[1][:2]) == (60000,)
        assert struct.unpack("<f", p[2][:4]) == (1.5,)
        assert struct.unpack("<d", p[3][:8]) == (0.25,)
        assert struct.unpack("<Q", p[4][:8]) == (int(buf.handle),)
        assert struct.unpack("<f", p[5][:4]) == (2.5,)
        assert p[6][:1] == b"\\x01"
        assert struct.unpack("<h", p[7][:2]) == (-2,)
        buf.close()
    """)


def test_arguments_out_of_range_or_of_the_wrong_kind_name_the_argument(fake_driver_dir):
    run(fake_driver_dir, """
        k = code.get_kernel("k4_8")
        for args, kind, words in [((2**32, 0), ValueError, "argument 0"),
                                  ((-2**31 - 1, 0), ValueError, "argument 0"),
                                  ((0, 2**64), ValueError, "argument 1"),
                                  ((0, -2**63 - 1), ValueError, "argument 1"),
                                  (("x", 0), TypeError, "argument 0"),
                                  ((0,), TypeError, "takes 2 arguments, 1 given")]:
            try:
                cc.launch(stream, cc.LaunchConfig(grid=1, block=1), k, *args)
            except kind as e:
                assert words in str(e), (args, str(e))
            else:
                raise AssertionError(f"no {kind.__name__} for {args}")
        buf = dev.allocate(64, stream=stream)
        try:
            cc.launch(stream, cc.LaunchConfig(grid=1, block=1), k, buf, 0)
        except (TypeError, ValueError) as e:
            assert "argument 0" in str(e) and "Buffer" in str(e), str(e)
        else:
            raise AssertionError("a Buffer for a 4-byte parameter was accepted")
        buf.close()
    """)


def test_runs_of_one_argument_type_are_packed_per_parameter(fake_driver_dir):
    # launch works out how to pack a type once for a run of arguments of that
    # type; each argument of the run must still be checked against its own
    # parameter's size, and a run broken by another type starts afresh.
    run(fake_driver_dir, """
        import numpy as np
        from cubind.core._launch import _packed_arguments
        buf = dev.allocate(64, stream=stream)
        resized = ctypes.c_int32(-4)
        ctypes.resize(resized, 8)
        cases = [
            ("k4_4_4_4", [np.int32(1), np.int32(-2), np.int32(3), np.int32(4)]),
            ("k4_4_8_4", [np.int32(1), np.int32(2), np.int32(3), np.int32(4)]),     # the third differs in size
            ("k8_8_4", [np.float64(0.5), np.float64(1.5), np.float64(2.5)]),       # the third differs in size
            ("k1_1_2_2_8_8", [np.uint8(1), np.uint8(2), np.int16(-3), np.int16(4), np.uint64(5), np.uint64(6)]),
            ("k4_8_4", [ctypes.c_int32(1), resized, ctypes.c_int32(3)]),           # one object of the run is 8 bytes
            ("k4_4_4", [ctypes.c_int32(1), resized, ctypes.c_int32(3)]),           # ... where 4 are wanted
            ("k16_16_8", [np.complex128(1 + 2j), np.complex128(3), np.complex128(4)]),
            ("k4_4_4_8_8_4_4", [1, 2, np.int32(3), buf, buf, 4.5, np.float32(5.5)]),
            ("k4_8_4_8", [np.int32(7), buf, np.int32(8), buf]),
            ("k8_8_8", [buf, buf, np.int64(9)]),
            ("k8_4_8", [buf, buf, buf]),                                            # a Buffer for 4 bytes
            ("k4_4_4", [1, 2, 2**40]),                                              # out of range in a run of ints
            ("k2_2_4", [np.int16(1), np.int16(2), 3]),
        ]
        for name, args in cases:
            k = code.get_kernel(name)
            sizes = [int(s) for s in name[1:].split("_")]
            try:
                expected = _packed_arguments(sizes, args, name)
            except (TypeError, ValueError) as e:
                expected = e
            try:
                got = [p[:s] for p, s in zip(launched(k, *args), sizes)]
            except (TypeError, ValueError) as e:
                got = e
            if isinstance(expected, Exception):
                assert type(got) is type(expected) and str(got) == str(expected), (name, got, expected)
            else:
                assert got == expected, (name, got, expected)
        # The refusals above were refusals, and the rest packed each value.
        assert [p[:4] for p in launched(code.get_kernel("k4_4_4_4"), *map(np.int32, (1, -2, 3, 4)))] == [
            struct.pack("<i", v) for v in (1, -2, 3, 4)]
        for name, args in [("k4_4_8_4", [np.int32(1)] * 4), ("k8_8_4", [np.float64(1)] * 3),
                           ("k4_4_4", [ctypes.c_int32(1), resized, ctypes.c_int32(3)]),
                           ("k8_4_8", [buf] * 3), ("k4_4_4", [1, 2, 2**40])]:
            try:
                launched(code.get_kernel(name), *args)
            except (TypeError, ValueError) as e:
                assert "argument" in str(e), str(e)
            else:
                raise AssertionError(f"{name} took {args}")
        buf.close()
    """)


def test_mixed_arguments_follow_the_kernels_plan_until_a_type_changes(fake_driver_dir):
    # A kernel whose arguments mix Buffers, NumPy scalars, ints and floats is
    # planned by its first launch; later launches of the same types follow
    # the plan; one with a type launch has not seen plans again (the general
    # way), one with types seen before drops the plan for good; a value that
    # does not fit is refused as before; uniform or single-NumPy arguments
    # are not planned.
    run(fake_driver_dir, """
        import gc, sys
        import numpy as np
        from cubind.core._launch import _plan_count
        buf = dev.allocate(256, stream=stream)
        other = dev.allocate(256, stream=stream)
        k = code.get_kernel("k8_4_4_8_8_8_4_8_2_16")

        def args(i, buffer):
            return (buffer, np.int32(-i), np.float32(i + 0.5), buffer, np.float64(i / 4), np.int64(-2**40 - i),
                    i, 1.25 * i, np.int16(i - 7), np.complex128(i + 1j))

        def check(p, i, buffer):
            assert struct.unpack("<Q", p[0][:8]) == (int(buffer.handle),)
            assert struct.unpack("<i", p[1][:4]) == (-i,)
            assert struct.unpack("<f", p[2][:4]) == (i + 0.5,)
            assert struct.unpack("<Q", p[3][:8]) == (int(buffer.handle),)
            assert struct.unpack("<d", p[4][:8]) == (i / 4,)
            assert struct.unpack("<q", p[5][:8]) == (-2**40 - i,)
            assert struct.unpack("<i", p[6][:4]) == (i,)
            assert struct.unpack("<d", p[7][:8]) == (1.25 * i,)
            assert struct.unpack("<h", p[8][:2]) == (i - 7,)
            assert struct.unpack("<dd", p[9][:16]) == (float(i), 1.0)

        assert _plan_count(k) == -1
        for i in range(5):
            buffer = buf if i % 2 else other
            check(launched(k, *args(i, buffer)), i, buffer)
            assert _plan_count(k) == 10
        # Another type where np.int32 was: the plan is dropped, the bytes are
        # right, and the launch plans the new types.
        changed = list(args(3, buf))
        changed[1] = np.uint32(7)
        p = launched(k, *changed)
        assert struct.unpack("<I", p[1][:4]) == (7,) and _plan_count(k) == 10
        # The first types again (each seen before): the launch drops that
        # plan for good and packs them the usual way, as do the next.
        for i in range(5, 8):
            check(launched(k, *args(i, buf)), i, buf)
            assert _plan_count(k) == -2
        # An int out of range where the plan has an int: refused, naming it.
        bad = list(args(1, buf))
        bad[6] = 2**40
        try:
            cc.launch(stream, cc.LaunchConfig(grid=1, block=1, shmem_size=10), k, *bad)
        except ValueError as e:
            assert "argument 6" in str(e), str(e)
        else:
            raise AssertionError("an int of 2**40 for a 4-byte parameter was accepted")
        check(launched(k, *args(2, buf)), 2, buf)
        assert _plan_count(k) == -2
        # Arguments that are not mixed, or have one NumPy scalar, are not planned.
        for name, plain in [("k4_4_4_4", [np.int32(1)] * 4), ("k8_8_8_4", [buf, buf, buf, np.uint32(3)]),
                            ("k4_8_4", [1, 2.5, np.float32(1)])]:
            kernel = code.get_kernel(name)
            launched(kernel, *plain)
            launched(kernel, *plain)
            assert _plan_count(kernel) == -2, name
        # A kernel lets go of its plan's types with it.
        code2 = cc.ObjectCode.from_cubin(b"stand-in cubin", name="standin2")
        k2 = code2.get_kernel("k8_4_4_8_8_8_4_8_2_16")
        check(launched(k2, *args(4, buf)), 4, buf)
        assert _plan_count(k2) == 10
        held = sys.getrefcount(np.int16)
        del k2, code2
        gc.collect()
        assert sys.getrefcount(np.int16) == held - 1
        buf.close()
        other.close()
    """)


def test_many_parameters_go_beyond_the_small_array(fake_driver_dir):
    # 64 parameters fit launch's arrays on the stack, 140 take its vectors.
    run(fake_driver_dir, """
        for count in (64, 140):
            sizes = [8] * count
            k = code.get_kernel("k" + "_".join(map(str, sizes)))
            assert k.num_arguments == count
            first = 1000 * count
            cc.launch(stream, cc.LaunchConfig(grid=1, block=1, shmem_size=16), k, *range(first, first + count))
            raw = (ctypes.c_ubyte * 256).in_dll(fake, "fake_params")
            # The stand-in records as many parameters as shmem_size says, 16 at most.
            assert [struct.unpack("<q", bytes(raw[i * 16:i * 16 + 8]))[0] for i in range(16)] == \
                list(range(first, first + 16))
    """)


def test_config_and_stream_reach_the_driver_and_a_config_is_reused(fake_driver_dir):
    run(fake_driver_dir, """
        k = code.get_kernel("k4")
        cfg = cc.LaunchConfig(grid=(3, 2), block=64, shmem_size=1)
        other = dev.create_stream()
        for s in (stream, other, stream):
            cc.launch(s, cfg, k, 5)
            seen = config_seen()
            assert seen[0] == 3 and seen[1] == 64 and seen[2] == 1 and seen[3] == 0, seen
            assert seen[4] == int(s.handle) & 0xFFFFFFFF, (seen, int(s.handle))
        coop = cc.LaunchConfig(grid=4, block=32, shmem_size=1, is_cooperative=True)
        cc.launch(stream, coop, k, 5)
        assert config_seen()[3] == 1
        assert ctypes.c_int.in_dll(fake, "fake_first_attr_id").value == 2   # CU_LAUNCH_ATTRIBUTE_COOPERATIVE
        # As in cuda.core, a cluster's grid counts clusters: 3 clusters of 2 blocks.
        clustered = cc.LaunchConfig(grid=3, cluster=2, block=32)
        assert clustered.grid == (3, 1, 1)
        cc.launch(stream, clustered, k, 5)
        assert config_seen()[0] == 6, config_seen()
        try:
            cc.LaunchConfig(grid=2**31, cluster=2, block=32)
        except ValueError as e:
            assert "does not fit in 32 bits" in str(e), str(e)
        else:
            raise AssertionError("a grid of 2**32 blocks was accepted")
    """)


def test_managed_buffers_close_once_and_free_when_dropped(fake_driver_dir):
    # ManagedBuffer has its own close() and frees through Buffer's deallocator.
    run(fake_driver_dir, """
        import gc
        live = ctypes.c_int.in_dll(fake, "fake_live_allocations")
        last_free = ctypes.c_ulonglong.in_dll(fake, "fake_last_free")
        mr = cc.ManagedMemoryResource()
        before = live.value
        buf = mr.allocate(4096, stream=stream)
        assert type(buf) is cc.ManagedBuffer and buf.memory_resource is mr and buf.size == 4096
        assert live.value == before + 1
        handle = int(buf.handle)
        buf.close()
        assert buf.is_closed and live.value == before and last_free.value == handle
        buf.close()                       # closing again frees nothing
        assert live.value == before
        other = dev.create_stream()
        buf = mr.allocate(64, stream=stream)
        buf.close(other)
        assert buf.is_closed and live.value == before
        for _ in range(40):               # past the free list's 16 kept objects
            mr.allocate(128, stream=stream)   # dropped open: freed by the deallocator
        assert live.value == before
        kept = [mr.allocate(128, stream=stream) for _ in range(40)]
        assert live.value == before + 40
        del kept
        gc.collect()
        assert live.value == before
        assert cc.ManagedBuffer.close.__doc__ == cc.Buffer.close.__doc__
        assert cc.ManagedBuffer.close.__text_signature__ == "($self, stream=None)"
        mr.close()
    """)


def test_device_allocate_and_close_reach_the_pool(fake_driver_dir):
    run(fake_driver_dir, """
        live = ctypes.c_int.in_dll(fake, "fake_live_allocations")
        before = live.value
        buf = dev.allocate(4096, stream=stream)
        assert ctypes.c_ulonglong.in_dll(fake, "fake_last_alloc").value == int(buf.handle)
        assert ctypes.c_size_t.in_dll(fake, "fake_last_alloc_size").value == 4096
        assert buf.size == 4096 and buf.memory_resource is dev.memory_resource
        assert live.value == before + 1
        buf.close()
        assert ctypes.c_ulonglong.in_dll(fake, "fake_last_free").value == 0x10000000 + 0x100000 * (before + 1)
        assert live.value == before and buf.is_closed
        # 0 bytes: an open, empty buffer of the resource, and no driver call.
        empty = dev.allocate(0, stream=stream)
        assert (empty.size, empty.handle, empty.is_closed) == (0, 0, False)
        assert empty.memory_resource is dev.memory_resource and empty.device_id == 0
        assert live.value == before
        empty.close()
        assert empty.is_closed and live.value == before
        for bad, kind in [(-5, OverflowError), (2**64, OverflowError), (2**63, ValueError), ("4096", TypeError),
                          (4.0, TypeError)]:
            try:
                dev.allocate(bad, stream=stream)
            except kind as e:
                assert "DeviceMemoryResource.allocate" in str(e) and "size" in str(e), str(e)
            else:
                raise AssertionError(f"allocate({bad!r}) gave no {kind.__name__}")
        # Sizes on both sides of an int's one-digit form (read in place below
        # 2**30) reach the driver as given.
        for size in (1, 2**30 - 1, 2**30, 2**31 + 3, 2**40, 2**62):
            buf = dev.allocate(size, stream=stream)
            assert buf.size == size and ctypes.c_size_t.in_dll(fake, "fake_last_alloc_size").value == size
            buf.close()
        class Size:
            def __index__(self):
                return 128
        buf = dev.allocate(Size(), stream=stream)
        assert buf.size == 128
        buf.close()
        assert live.value == before
    """)


def test_every_argument_kind_reaches_the_kernel_as_the_general_conversion_makes_it(fake_driver_dir):
    # launch packs the common kinds in C; what reaches cuLaunchKernelEx must be
    # byte for byte what the general conversion (_packed_arguments, the rules
    # of _pack) makes, and a refusal the same exception with the same message.
    run(fake_driver_dir, """
        import array
        import numpy as np
        from cubind.core._launch import _packed_arguments

        class Pair(ctypes.Structure):
            _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

        class SubBuffer(cc.Buffer):
            pass

        class MyInt(int):
            pass

        buf = dev.allocate(64, stream=stream)
        # ctypes objects whose bytes lie elsewhere, or were resized.
        backing = bytearray(range(16))
        viewing = ctypes.c_int32.from_buffer(backing, 4)
        resized = ctypes.c_int32(-4)
        ctypes.resize(resized, 8)
        aligned = np.dtype([("a", "<i4"), ("b", "<f8")], align=True)
        packed = np.dtype([("a", "<i4"), ("b", "<f8")])
        values = [0, -1, 127, 128, 255, 256, -129, 2**15, 2**16 - 1, 2**16, 2**31, 2**32 - 1, 2**32, -2**31 - 1,
                  2**63, 2**64 - 1, 2**64, -2**63 - 1, True, False, 1.5, -0.0, 1e300, MyInt(5), buf,
                  SubBuffer.from_handle(0x5000, 8),
                  np.bool_(True), np.int8(-5), np.uint8(250), np.int16(-300), np.uint16(65000), np.int32(-7),
                  np.uint32(4000000000), np.int64(-2**40), np.uint64(2**63 + 5), np.float16(1.5), np.float32(2.5),
                  np.float64(3.5), np.complex64(1 + 2j), np.complex128(3 + 4j),
                  np.array([(1, 0.5)], dtype=aligned)[0], np.array([(1, 0.5)], dtype=packed)[0],
                  np.datetime64("2020-01-01"), np.array([1, 2], dtype=np.int32), np.array(5, dtype=np.int32),
                  np.array([[1, 2], [3, 4]], dtype=np.int16).T, np.arange(8, dtype=np.int8)[::2],
                  np.zeros((0,), np.int32), ctypes.c_bool(True), ctypes.c_int8(-3), ctypes.c_uint8(200),
                  ctypes.c_int16(-2), ctypes.c_uint16(9), ctypes.c_int32(-9), ctypes.c_uint32(9), ctypes.c_int64(-9),
                  ctypes.c_uint64(9), ctypes.c_float(1.5), ctypes.c_double(2.5), ctypes.c_void_p(0x1234),
                  Pair(3, 0.25), (ctypes.c_int * 2)(1, 2), viewing, resized, ctypes.c_int32(11), b"abcd", b"abcdefgh", bytearray(b"12345678"),
                  memoryview(b"abcdefgh")[::2], array.array("i", [7]), "text", None, object()]
        checked = 0
        for size in (1, 2, 4, 8, 16):
            k = code.get_kernel(f"k{size}")
            for v in values:
                try:
                    expected = _packed_arguments([size], [v], f"k{size}")[0]
                except (TypeError, ValueError) as e:
                    expected = e
                try:
                    got = launched(k, v)[0][:size]
                except (TypeError, ValueError) as e:
                    got = e
                if isinstance(expected, Exception):
                    assert type(got) is type(expected) and str(got) == str(expected), (size, v, got, expected)
                    continue
                assert got == expected, (size, v, got, expected)
                # And the bytes are the value's own: its buffer, a Buffer's address, an int or float converted.
                if isinstance(v, cc.Buffer):
                    assert got == struct.pack("<Q", int(v.handle)), (size, v)
                elif isinstance(v, (bool, int)) and not isinstance(v, np.generic):
                    assert int.from_bytes(got, "little", signed=v < 0) == v, (size, v, got)
                elif type(v) is float:
                    assert got == bytes(ctypes.c_double(v) if size == 8 else ctypes.c_float(v)), (size, v, got)
                else:
                    assert got == bytes(memoryview(v).cast("B")), (size, v, got)
                checked += 1
        assert checked > 90, checked   # the rest were refused alike
        buf.close()
    """)


def test_a_repeated_launch_packs_what_the_first_packed(fake_driver_dir):
    # A Kernel's first launch goes launch's general way (it reads the
    # parameter sizes and renders the config); the next ones its usual way,
    # in C over the caller's arguments. Both must give the driver the same
    # bytes, the ones _packed_arguments gives, for every kind of argument.
    run(fake_driver_dir, """
        import numpy as np
        from cubind.core._launch import _packed_arguments
        buf = dev.allocate(64, stream=stream)

        class Pair(ctypes.Structure):
            _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

        class Triple(ctypes.Structure):
            _fields_ = [("x", ctypes.c_double), ("y", ctypes.c_double), ("z", ctypes.c_double)]

        pair = np.array([(3, 0.5)], dtype=np.dtype([("a", "<i4"), ("b", "<f8")], align=True))[0]
        cases = [
            ("k4", [7]),
            ("k8", [-2**63]),
            ("k1_2_4_8", [True, 65535, -2**31, 2**40]),
            ("k4_8", [1.5, 2.25]),
            ("k8_8", [buf, int(buf.handle)]),
            ("k1_1_2_2_4_4_8_8", [np.bool_(True), np.uint8(200), np.int16(-3), np.float16(1.5),
                                  np.uint32(4000000000), np.float32(2.5), np.int64(-9), np.float64(0.125)]),
            ("k8_16", [np.complex64(1 + 2j), np.complex128(3 - 4j)]),
            ("k1_2_4_8_4_8", [ctypes.c_bool(True), ctypes.c_int16(-5), ctypes.c_uint32(6), ctypes.c_int64(-7),
                              ctypes.c_float(0.5), ctypes.c_double(1.25)]),
            ("k8_16_16", [ctypes.c_void_p(0x1234), Pair(5, 0.75), pair]),
            # NumPy structs: a void scalar of each dtype, an np.record, a packed one.
            ("k16_16_16_12", [pair, np.array([(-4, 1.5)], dtype=pair.dtype)[0],
                              np.rec.array([(9, 2.5)], dtype=pair.dtype)[0],
                              np.array([(6, -0.5)], dtype=np.dtype([("a", "<i4"), ("b", "<f8")]))[0]]),
            # A dtype with no buffer format (a datetime field): its bytes, either way.
            ("k16", [np.array([(np.datetime64(5, "s"), 7)], dtype=[("t", "M8[s]"), ("a", "<i8")])[0]]),
            ("k4_8_4_8_4", [np.int32(1), buf, 2, buf, np.float32(3)]),
            # 16 arguments in 32 slots at most are packed in launch's own
            # frame, more in another one's.
            ("k" + "_".join(["4"] * 16), [np.int32(i) for i in range(16)]),
            ("k" + "_".join(["4"] * 17), [np.int32(i) for i in range(17)]),
            ("k" + "_".join(["16"] * 9), [np.complex128(i) for i in range(9)]),
            ("k" + "_".join(["16"] * 16), [np.complex128(i - 2j * i) for i in range(16)]),
            ("k" + "_".join(["16"] * 16), [pair] * 16),
            ("k" + "_".join(["24"] * 11), [Triple(i, -i, 0.5 * i) for i in range(11)]),
        ]
        for name, args in cases:
            k = code.get_kernel(name)
            sizes = [int(s) for s in name[1:].split("_")]
            # The stand-in records 16 parameters at most, 16 bytes of each.
            expected = [p[:16] for p in _packed_arguments(sizes, args, name)[:16]]
            first = [p[:min(s, 16)] for p, s in zip(launched(k, *args)[:16], sizes)]
            again = [p[:min(s, 16)] for p, s in zip(launched(k, *args)[:16], sizes)]
            assert first == expected, (name, first, expected)
            assert again == expected, (name, again, expected)
            for arg, packed in zip(args, expected):
                if isinstance(arg, np.void):
                    assert packed == arg.tobytes()[:16], (name, packed, arg)
        # The usual way refuses what the general way refuses, with its message.
        k = code.get_kernel("k4_4")
        launched(k, 1, 2)
        for args, kind in [((1, 2**40), ValueError), ((1, buf), TypeError), ((np.int64(1), 2), ValueError),
                           ((1, "x"), TypeError), ((1, pair), ValueError)]:
            try:
                launched(k, *args)
            except kind as e:
                assert "argument" in str(e) and "'k4_4'" in str(e), str(e)
            else:
                raise AssertionError(f"k4_4 took {args}")
        buf.close()
    """)


def test_a_launch_the_driver_refuses_raises_its_error_either_way(fake_driver_dir):
    run(fake_driver_dir, """
        import numpy as np
        from cubind.core._errors import CUDAError
        k = code.get_kernel("k4")
        status = ctypes.c_int.in_dll(fake, "fake_launch_status")
        cfg = cc.LaunchConfig(grid=1, block=1, shmem_size=1)
        cc.launch(stream, cfg, k, 1)
        # np.int32 is new to launch: the first goes the general way, the second its usual way.
        seen = []
        for attempt in range(2):
            status.value = 701                   # CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
            try:
                cc.launch(stream, cfg, k, np.int32(attempt))
            except CUDAError as e:
                assert e.status == 701 and e.api_function == "cuLaunchKernelEx", (e.status, e.api_function)
                seen.append((type(e), str(e), e.error_name, e.error_string))
            else:
                raise AssertionError("a refused launch raised nothing")
            finally:
                status.value = 0
        assert seen[0] == seen[1], seen
        assert "cuLaunchKernelEx" in seen[0][1] and "701" in seen[0][1], seen[0]
        cc.launch(stream, cfg, k, 5)
        assert launched(k, 6)[0][:4] == struct.pack("<i", 6)
    """)


def test_launch_takes_keywords_and_refuses_what_is_not_a_launch(fake_driver_dir):
    # launch is a builtin over the caller's arguments; what its usual way does
    # not take (keywords, too few arguments, a closed stream, another object)
    # goes its general way, which launches or explains as it always has.
    run(fake_driver_dir, """
        import inspect
        k = code.get_kernel("k4")
        cfg = cc.LaunchConfig(grid=1, block=1, shmem_size=1)
        assert type(cc.launch).__name__ == "builtin_function_or_method"
        assert str(inspect.signature(cc.launch)) == "(stream, config, kernel, *kernel_args)"
        cc.launch(stream, cfg, k, 3)
        cc.launch(stream=stream, config=cfg, kernel=k)   # no kernel argument: the count is refused
    """.replace("        cc.launch(stream=stream, config=cfg, kernel=k)   # no kernel argument: the count is refused\n", """
        try:
            cc.launch(stream=stream, config=cfg, kernel=k)
        except TypeError as e:
            assert "takes 1 arguments, 0 given" in str(e), str(e)
        else:
            raise AssertionError("a launch of k4 with no argument was taken")
        for bad in [(), (stream,), (stream, cfg)]:
            try:
                cc.launch(*bad)
            except TypeError as e:
                assert "launch" in str(e) or "argument" in str(e), str(e)
            else:
                raise AssertionError(f"launch{bad} was taken")
        try:
            cc.launch(stream, "config", k, 1)
        except TypeError as e:
            assert "config must be a LaunchConfig, not str" in str(e), str(e)
        else:
            raise AssertionError("a str config was taken")
        try:
            cc.launch(stream, cfg, "kernel", 1)
        except TypeError as e:
            assert "kernel must be a Kernel, not str" in str(e), str(e)
        else:
            raise AssertionError("a str kernel was taken")
        closed = dev.create_stream()
        cc.launch(closed, cfg, k, 4)
        closed.close()
        try:
            cc.launch(closed, cfg, k, 4)
        except Exception as e:
            assert "closed" in str(e).lower(), (type(e), str(e))
        else:
            raise AssertionError("a launch on a closed stream was taken")
        # An object with __cuda_stream__ goes the general way and launches.
        class Foreign:
            def __cuda_stream__(self):
                return (0, int(stream.handle))
        cc.launch(Foreign(), cfg, k, 9)
        assert launched(k, 10)[0][:4] == struct.pack("<i", 10)
    """))
