"""The driver bindings against a stand-in libcuda.so.1 (no GPU needed).

A small C library, fake_driver/fake_libcuda.c beside this file, exports
cuGetProcAddress_v2 and a handful of entry points that record what they
receive (kernel parameters, extra, launch configs) or call back (host
functions, stream callbacks, a host function replayed by a "graph"). Each
test runs in a child process whose LD_LIBRARY_PATH finds the stand-in first,
so the cubind loader picks it up as it would the real driver.
This checks in CI what the GPU tests check on a device: the packing of every
kernelParams form, callbacks and their user data, typed attribute values.
"""
import textwrap

from conftest import run_with_fake_driver

PRELUDE = textwrap.dedent("""
    import ctypes, gc, struct, sys
    from cubind.bindings import driver
    fake = ctypes.CDLL("libcuda.so.1")
    def ok(r):
        assert r[0] is driver.CUresult.CUDA_SUCCESS, r
        return r[1] if len(r) == 2 else (r[1:] or None)
    def params():
        n = ctypes.c_int.in_dll(fake, "fake_nparams").value
        raw = (ctypes.c_ubyte * 256).in_dll(fake, "fake_params")
        return [bytes(raw[i * 16:(i + 1) * 16]) for i in range(n)]
    ok(driver.cuInit(0))
""")


def run_fake(fake_driver_dir, body):
    return run_with_fake_driver(fake_driver_dir, PRELUDE + textwrap.dedent(body))


def test_loader_uses_the_stand_in(fake_driver_dir):
    run_fake(fake_driver_dir, """
        assert driver.cuDriverGetVersion() == (driver.CUresult.CUDA_SUCCESS, 13000)
        assert driver.cuDeviceGetName(64, 0) == (driver.CUresult.CUDA_SUCCESS, b"Stand-in GPU")
        # An entry point the library lacks raises, naming it.
        try:
            driver.cuMemAlloc(16)
        except RuntimeError as e:
            assert "cuMemAlloc" in str(e), str(e)
            # The stand-in reports CUDA 13.0, so it is new enough and simply lacks it.
            assert "new enough" in str(e) and "newer NVIDIA driver" not in str(e), str(e)
        else:
            raise AssertionError("no RuntimeError for a missing entry point")
    """)


def test_uuid_and_typed_attribute_values(fake_driver_dir):
    run_fake(fake_driver_dir, """
        uuid = ok(driver.cuDeviceGetUuid(0))
        assert bytes(uuid.bytes) == bytes(range(0xF0, 0x100))
        status, none = driver.cuDeviceGetUuid(1)
        assert int(status) == 101 and none is None
        a = driver.CUpointer_attribute
        ctx = ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_CONTEXT, 0x1000))
        assert isinstance(ctx, driver.CUcontext) and int(ctx) == 0xC0FFEE
        assert ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 0x1000)) == 2
        dptr = ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, driver.CUdeviceptr(0x1234)))
        assert isinstance(dptr, driver.CUdeviceptr) and dptr == 0x1234
        assert ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_RANGE_SIZE, 0x1000)) == 4096
        status, value = driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, 0x1000)
        assert status is driver.CUresult.CUDA_ERROR_INVALID_VALUE and value is None
    """)


def test_one_value_results_come_in_a_spare_pair_that_no_kept_result_shares(fake_driver_dir):
    # A call returning (status, one number or typed value) fills the module's
    # spare pair again while nothing else holds it: a result kept keeps its
    # values, one dropped is refilled, and a hash taken before does not stay.
    run_fake(fake_driver_dir, """
        a = driver.CUpointer_attribute
        success = driver.CUresult.CUDA_SUCCESS
        size = a.CU_POINTER_ATTRIBUTE_RANGE_SIZE
        kept = [driver.cuPointerGetAttribute(2, 0x1000), driver.cuPointerGetAttribute(size, 0x1000),
                driver.cuDriverGetVersion(), driver.cuDeviceGetCount()]
        kept += [driver.cuPointerGetAttribute(2, 0x1000) for _ in range(3)]
        assert kept == [(success, 2), (success, 4096), (success, 13000), (success, 1)] + [(success, 2)] * 3, kept
        assert len({id(r) for r in kept}) == len(kept)
        # The last result is also the spare: the module holds one reference.
        r = driver.cuPointerGetAttribute(size, 0x1000)
        assert sys.getrefcount(r) == 3, sys.getrefcount(r)
        del r
        h = hash(driver.cuPointerGetAttribute(2, 0x1000))
        assert h == hash((success, 2))
        t = driver.cuPointerGetAttribute(size, 0x1000)
        assert t == (success, 4096) and hash(t) == hash((success, 4096))
        assert {t: "found"}[(success, 4096)] == "found"
        # Handles are not put in it (the module reuses them in place), nor failures.
        status, ctx = driver.cuCtxGetCurrent()
        assert status is success
        r = driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, 0x1000)
        assert r[0] is driver.CUresult.CUDA_ERROR_INVALID_VALUE and r[1] is None and sys.getrefcount(r) == 2
        # A kept result is never refilled, whichever module's call comes next.
        err, count = driver.cuDeviceGetCount()
        assert (err, count) == (success, 1) and kept[3] == (success, 1) and t == (success, 4096)
        # Values stay right through the collector's passes.
        for i in range(200):
            assert driver.cuPointerGetAttribute(2 if i % 2 else size, 0x1000)[1] == (2 if i % 2 else 4096)
            if i % 50 == 0:
                gc.collect()
    """)


def test_typed_values_alternate_attributes_and_refuse_unknown_ones(fake_driver_dir):
    # Each attribute enum's table keeps the last attribute it found: calls that
    # alternate between attributes, as plain ints too, each get their own type.
    run_fake(fake_driver_dir, """
        a = driver.CUpointer_attribute
        for _ in range(3):
            ctx = ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_CONTEXT, 0x1000))
            assert type(ctx) is driver.CUcontext and int(ctx) == 0xC0FFEE
            assert ok(driver.cuPointerGetAttribute(2, 0x1000)) == 2
            assert ok(driver.cuPointerGetAttribute(2, 0x1000)) == 2
            managed = ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_IS_MANAGED, 0x1000))
            assert managed is True
            dptr = ok(driver.cuPointerGetAttribute(int(a.CU_POINTER_ATTRIBUTE_DEVICE_POINTER), 0x4321))
            assert type(dptr) is driver.CUdeviceptr and int(dptr) == 0x4321
            # An enum value comes back as its member (the stand-in answers the
            # pointer's page), and a value the enum lacks as a member of its own.
            flags = driver.CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS
            for page, member in ((3, flags.CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE), (1, flags.CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ),
                                 (0, flags.CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE)):
                assert ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, page << 12)) is member
            unknown = ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, 7 << 12))
            assert type(unknown) is flags and int(unknown) == 7
        # An attribute the table does not know, before and after a known one.
        for attribute in (12345, a.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 12345):
            try:
                value = ok(driver.cuPointerGetAttribute(attribute, 0x1000))
            except ValueError as e:
                assert attribute == 12345
                assert "data: CUpointer_attribute value 12345 has no known value type" in str(e), str(e)
            else:
                assert attribute != 12345 and value == 2
        # A list of attributes: one value of its own type per attribute.
        values = ok(driver.cuPointerGetAttributes(
            3, [a.CU_POINTER_ATTRIBUTE_CONTEXT, 2, a.CU_POINTER_ATTRIBUTE_RANGE_SIZE], 0x1000))
        assert type(values[0]) is driver.CUcontext and int(values[0]) == 0xC0FFEE
        assert values[1:] == [2, 4096]
        try:
            driver.cuPointerGetAttributes(1, [12345], 0x1000)
        except ValueError as e:
            assert "CUpointer_attribute value 12345" in str(e), str(e)
        else:
            raise AssertionError("no ValueError for an unknown attribute in a list")
    """)


def test_unknown_status_from_the_driver(fake_driver_dir):
    run_fake(fake_driver_dir, """
        status, value = driver.cuDeviceGetUuid(1)
        assert int(status) == 101 and isinstance(status, driver.CUresult)
        # 101 is CUDA_ERROR_INVALID_DEVICE; a code no header knows converts too:
        assert driver.CUresult(424242).value == 424242
    """)


def test_kernel_params_none(fake_driver_dir):
    run_fake(fake_driver_dir, """
        ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 0, None, None, None))
        assert ctypes.c_void_p.in_dll(fake, "fake_params_pointer").value is None
    """)


def test_kernel_params_address(fake_driver_dir):
    run_fake(fake_driver_dir, """
        out = ctypes.c_uint64(0xDEADBEEF00)
        base = ctypes.c_int(-7)
        argv = (ctypes.c_void_p * 2)(ctypes.addressof(out), ctypes.addressof(base))
        ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 2, None, ctypes.addressof(argv), None))
        assert ctypes.c_void_p.in_dll(fake, "fake_params_pointer").value == ctypes.addressof(argv)
        p = params()
        assert struct.unpack_from("<Q", p[0])[0] == 0xDEADBEEF00
        assert struct.unpack_from("<i", p[1])[0] == -7
    """)


def test_kernel_params_array_of_pointers(fake_driver_dir):
    # As cuda.bindings takes it: an object with the buffer protocol (a NumPy
    # array of addresses) is the void* array itself, held for the call.
    run_fake(fake_driver_dir, """
        import numpy as np
        a, b = ctypes.c_int(7), ctypes.c_double(2.5)
        argv = np.array([ctypes.addressof(a), ctypes.addressof(b)], dtype=np.uint64)
        ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 2, None, argv, None))
        p = params()
        assert struct.unpack("<i", p[0][:4]) == (7,) and struct.unpack("<d", p[1][:8]) == (2.5,), p
        assert ctypes.c_void_p.in_dll(fake, "fake_params_pointer").value == argv.ctypes.data
        # Read in place whatever the array's kind: a view, a subclass, or bytes of the buffer protocol.
        wide = np.array([[ctypes.addressof(b), 0], [ctypes.addressof(a), 0]], dtype=np.uint64)
        column = wide[:, 0].copy()
        ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 2, None, column, None))
        assert ctypes.c_void_p.in_dll(fake, "fake_params_pointer").value == column.ctypes.data
        assert struct.unpack("<d", params()[0][:8]) == (2.5,)
        ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 2, None, argv.view(np.matrix), None))
        assert ctypes.c_void_p.in_dll(fake, "fake_params_pointer").value == argv.ctypes.data
        raw = bytearray(argv.tobytes())
        ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 2, None, raw, None))
        assert struct.unpack("<i", params()[0][:4]) == (7,)
        try:
            driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 1, None, wide[:, 0], None)
        except (ValueError, BufferError):
            pass  # not contiguous: refused, as NumPy's buffer export refuses it
        else:
            raise AssertionError("a strided array was taken as the pointer array")
        try:
            driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 0, None, "text", None)
        except TypeError as e:
            assert "kernelParams" in str(e) and "str" in str(e), str(e)
        else:
            raise AssertionError("a str was taken as kernelParams")
    """)


def test_kernel_params_of_up_to_64_and_more_arguments(fake_driver_dir):
    # Up to 64 arguments are packed with the layout kept from the previous
    # launch of the same types tuple; more go through a list of layouts.
    # The stand-in records the first 16 parameters.
    run_fake(fake_driver_dir, """
        for n in (33, 64, 70):
            types = tuple(ctypes.c_int if i % 2 else ctypes.c_double for i in range(n))
            for shift in (0, 5):   # the second launch reuses the layout
                values = tuple(i + shift for i in range(n))
                ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 16, None, (values, types), None))
                p = params()
                for i in range(16):
                    fmt = "<i" if i % 2 else "<d"
                    assert struct.unpack_from(fmt, p[i])[0] == i + shift, (n, shift, i, p[i])
    """)


def test_kernel_params_values_and_types(fake_driver_dir):
    run_fake(fake_driver_dir, """
        class Pair(ctypes.Structure):
            _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]
        dptr = driver.CUdeviceptr(0x7F0000001000)
        values = (dptr, -5, 300, 2**40 + 3, 1.5, 2.25, 0x1234, Pair(3, 0.25), True, driver.CUstream(0x55))
        types = (None, ctypes.c_byte, ctypes.c_short, ctypes.c_longlong, ctypes.c_float, ctypes.c_double,
                 ctypes.c_void_p, Pair, ctypes.c_bool, None)
        ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, len(values), None, (values, types), None))
        p = params()
        assert struct.unpack_from("<Q", p[0])[0] == 0x7F0000001000
        assert struct.unpack_from("<b", p[1])[0] == -5
        assert struct.unpack_from("<h", p[2])[0] == 300
        assert struct.unpack_from("<q", p[3])[0] == 2**40 + 3
        assert struct.unpack_from("<f", p[4])[0] == 1.5
        assert struct.unpack_from("<d", p[5])[0] == 2.25
        assert struct.unpack_from("<Q", p[6])[0] == 0x1234
        assert struct.unpack_from("<i4xd", p[7]) == (3, 0.25)
        assert p[8][0] == 1
        assert struct.unpack_from("<Q", p[9])[0] == 0x55
        # Lists, and pointers given as None.
        ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 3, None,
                                 ([9, None, 0.5], [ctypes.c_int, ctypes.c_void_p, ctypes.c_double]), None))
        p = params()
        assert struct.unpack_from("<i", p[0])[0] == 9
        assert struct.unpack_from("<Q", p[1])[0] == 0
        assert struct.unpack_from("<d", p[2])[0] == 0.5
    """)


def test_kernel_params_reused_and_changed_types(fake_driver_dir):
    # The layout of a types tuple is remembered between launches: reusing it,
    # switching to another, and coming back must each pack what they say.
    run_fake(fake_driver_dir, """
        a = (ctypes.c_byte, ctypes.c_double, ctypes.c_int)
        b = (ctypes.c_double, ctypes.c_byte)
        f = driver.CUfunction(1)
        for round in range(3):
            # The stand-in driver takes the argument count from sharedMemBytes.
            ok(driver.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 3, None, ((1 + round, 2.5, -round), a), None))
            p = params()
            assert struct.unpack_from("<b", p[0])[0] == 1 + round
            assert struct.unpack_from("<d", p[1])[0] == 2.5
            assert struct.unpack_from("<i", p[2])[0] == -round
            ok(driver.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 2, None, ((0.125, 7), b), None))
            p = params()
            assert struct.unpack_from("<d", p[0])[0] == 0.125
            assert struct.unpack_from("<b", p[1])[0] == 7
        try:
            driver.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 3, None, (("x", 1.0, 1), a), None)
        except TypeError as e:
            assert "kernelParams[0]" in str(e), e
        else:
            raise AssertionError("a str for c_byte was accepted")
    """)


def test_kernel_params_ctypes_instances(fake_driver_dir):
    run_fake(fake_driver_dir, """
        ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 3, None,
                                 ((ctypes.c_int(9), ctypes.c_void_p(16), ctypes.c_double(0.5)),
                                  (ctypes.c_int, ctypes.c_void_p, ctypes.c_double)), None))
        p = params()
        assert struct.unpack_from("<i", p[0])[0] == 9
        assert struct.unpack_from("<Q", p[1])[0] == 16
        assert struct.unpack_from("<d", p[2])[0] == 0.5
    """)


def test_kernel_params_pointer_alignment(fake_driver_dir):
    run_fake(fake_driver_dir, """
        values = (1, 2.0, 3, 4.0)
        types = (ctypes.c_byte, ctypes.c_double, ctypes.c_byte, ctypes.c_double)
        ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 4, None, (values, types), None))
        argv = ctypes.c_void_p.in_dll(fake, "fake_params_pointer").value
        addresses = [ctypes.c_void_p.from_address(argv + 8 * i).value for i in range(4)]
        assert addresses[1] % 8 == 0 and addresses[3] % 8 == 0, [hex(a) for a in addresses]
    """)


def test_extra_buffer(fake_driver_dir):
    run_fake(fake_driver_dir, """
        args = ctypes.create_string_buffer(struct.pack("<Qii", 0xABCDEF, 400, 1000), 16)
        size = ctypes.c_size_t(16)
        extra = (ctypes.c_void_p * 5)(driver.CU_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(args),
                                      driver.CU_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size),
                                      driver.CU_LAUNCH_PARAM_END)
        for form in (ctypes.addressof(extra), extra):
            ok(driver.cuLaunchKernel(driver.CUfunction(1), 1, 1, 1, 1, 1, 1, 0, None, None, form))
            assert ctypes.c_size_t.in_dll(fake, "fake_extra_size").value == 16
            got = bytes((ctypes.c_ubyte * 16).in_dll(fake, "fake_extra_buffer"))
            assert got == struct.pack("<Qii", 0xABCDEF, 400, 1000)
    """)


def test_launch_kernel_ex_config(fake_driver_dir):
    run_fake(fake_driver_dir, """
        attr = driver.CUlaunchAttribute()
        attr.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PRIORITY
        config = driver.CUlaunchConfig(gridDimX=7, gridDimY=1, gridDimZ=1, blockDimX=64, blockDimY=1,
                                       blockDimZ=1, sharedMemBytes=1, hStream=driver.CUstream(0x99))
        config.attrs = attr
        config.numAttrs = 1
        ok(driver.cuLaunchKernelEx(config, driver.CUfunction(1), ((11,), (ctypes.c_int,)), None))
        got = list((ctypes.c_uint * 8).in_dll(fake, "fake_config"))
        assert got[:5] == [7, 64, 1, 1, 0x99], got
        assert ctypes.c_int.in_dll(fake, "fake_first_attr_id").value == int(attr.id)
        assert struct.unpack_from("<i", params()[0])[0] == 11
    """)


def test_host_func_and_stream_callback(fake_driver_dir):
    run_fake(fake_driver_dir, """
        import threading
        stream = driver.CUstream(0x77)
        got = []
        token = object()
        def fn(data):
            got.append(("host", data, threading.current_thread() is threading.main_thread()))
        ok(driver.cuLaunchHostFunc(stream, fn, token))
        ok(driver.cuStreamAddCallback(stream, lambda s, status, data: got.append(("cb", s, status, data)), [1, 2], 0))
        del fn
        gc.collect()
        ok(driver.cuStreamSynchronize(stream))
        host = [g for g in got if g[0] == "host"]
        cb = [g for g in got if g[0] == "cb"]
        assert host == [("host", token, False)]
        assert cb[0][1] == stream and isinstance(cb[0][1], driver.CUstream)
        assert cb[0][2] is driver.CUresult.CUDA_SUCCESS
        assert cb[0][3] == [1, 2]
        # A failing enqueue keeps no reference (flags must be 0 for the stand-in).
        data = object()
        before = sys.getrefcount(data)
        status, = driver.cuStreamAddCallback(stream, print, data, 1)
        assert status is not driver.CUresult.CUDA_SUCCESS
        assert sys.getrefcount(data) == before
    """)


def test_callbacks_take_c_function_addresses(fake_driver_dir):
    # As with cuda.bindings: a ctypes function's address, in the callback
    # typedef's class, is passed through with the user data as given.
    run_fake(fake_driver_dir, """
        HOSTFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
        got = []
        host = HOSTFN(lambda data: got.append(("host", data)))
        cb = CALLBACK(lambda s, status, data: got.append(("cb", s, status, data)))
        host_address = ctypes.cast(host, ctypes.c_void_p).value
        fn = driver.CUhostFn(host_address)
        assert int(fn) == host_address and fn == host_address
        ok(driver.cuLaunchHostFunc(driver.CUstream(0x55), fn, 0x1234))
        ok(driver.cuStreamSynchronize(None))
        ok(driver.cuLaunchHostFunc(None, driver.CUhostFn(host_address), None))
        ok(driver.cuStreamSynchronize(None))
        ok(driver.cuStreamAddCallback(driver.CUstream(0x66), driver.CUstreamCallback(ctypes.cast(cb, ctypes.c_void_p).value),
                                      0x99, 0))
        ok(driver.cuStreamSynchronize(None))
        assert ("host", 0x1234) in got and ("host", None) in got, got
        assert ("cb", 0x66, 0, 0x99) in got, got
        # A bare int is not taken for a function address.
        for bad in ((driver.CUhostFn(host_address), object()), ("not callable", None), (host_address, None)):
            try:
                driver.cuLaunchHostFunc(None, *bad)
            except TypeError:
                pass
            else:
                raise AssertionError(f"no TypeError for {bad!r}")
    """)


def test_graphics_interop_calls(fake_driver_dir):
    # EGL, OpenGL and VDPAU types as in cuda.bindings: EGLImageKHR a handle,
    # VdpDevice a value, VdpGetProcAddress a function's address in its class.
    run_fake(fake_driver_dir, """
        image = driver.EGLImageKHR(0x1234)
        resource = ok(driver.cuGraphicsEGLRegisterImage(image, 7))
        assert isinstance(resource, driver.CUgraphicsResource) and int(resource) == 0x7007
        assert ctypes.c_void_p.in_dll(fake, "fake_egl_image").value == 0x1234
        count, devices = ok(driver.cuGLGetDevices(4, driver.CUGLDeviceList.CU_GL_DEVICE_LIST_ALL))
        assert count == 2 and [int(d) for d in devices[:count]] == [3, 4], (count, devices)
        device = ok(driver.cuVDPAUGetDevice(driver.VdpDevice(9), driver.VdpGetProcAddress(0xabc)))
        assert int(device) == 5
        assert ctypes.c_uint.in_dll(fake, "fake_vdp_device").value == 9
        assert ctypes.c_void_p.in_dll(fake, "fake_vdp_get_proc_address").value == 0xabc
        assert driver.CUDA_EGL_INFINITE_TIMEOUT == 0xFFFFFFFF and driver.MAX_PLANES == 3
        frame = driver.CUeglFrame()
        frame.width = 640
        assert frame.width == 640 and driver.sizeof(frame) > 0
    """)


def test_callbacks_release_their_references(fake_driver_dir):
    run_fake(fake_driver_dir, """
        data = object()
        before = sys.getrefcount(data)
        for _ in range(500):
            ok(driver.cuLaunchHostFunc(None, lambda d: None, data))
            ok(driver.cuStreamAddCallback(None, lambda s, st, d: None, data, 0))
        ok(driver.cuStreamSynchronize(None))
        gc.collect()
        assert sys.getrefcount(data) == before, (sys.getrefcount(data), before)
    """)


def test_callback_exception_to_unraisablehook(fake_driver_dir):
    run_fake(fake_driver_dir, """
        seen = []
        sys.unraisablehook = seen.append
        def boom(*args):
            raise KeyError(args[-1])
        ok(driver.cuLaunchHostFunc(None, boom, "host"))
        ok(driver.cuStreamSynchronize(None))
        ok(driver.cuStreamAddCallback(None, boom, "cb", 0))
        ok(driver.cuStreamSynchronize(None))
        assert [type(s.exc_value) for s in seen] == [KeyError, KeyError]
        assert [s.exc_value.args[0] for s in seen] == ["host", "cb"]
        assert all("boom" in repr(s.object) or s.object is boom for s in seen)
    """)


def test_host_func_replayed_by_a_graph(fake_driver_dir):
    # A host function captured into a graph runs at every launch of the graph.
    run_fake(fake_driver_dir, """
        calls = []
        stream = driver.CUstream(0x10)
        ok(driver.cuStreamBeginCapture(stream, 0))
        ok(driver.cuLaunchHostFunc(stream, lambda d: calls.append(d), "captured"))
        graph = ok(driver.cuStreamEndCapture(stream))
        exe = ok(driver.cuGraphInstantiate(graph, 0))
        for i in range(3):
            ok(driver.cuGraphLaunch(exe, stream))
            ok(driver.cuStreamSynchronize(stream))
            gc.collect()
            junk = [(j, str(j)) for j in range(20000)]  # two-item tuples reuse the freed one
        assert calls == ["captured"] * 3, calls
    """)


def test_copies_pass_buffers_and_counts(fake_driver_dir):
    run_fake(fake_driver_dir, """
        buf = bytearray(64)
        ok(driver.cuMemcpyDtoH(buf, driver.CUdeviceptr(0x1000), 64))
        assert ctypes.c_size_t.in_dll(fake, "fake_copy_bytes").value == 64
        assert ctypes.c_void_p.in_dll(fake, "fake_copy_host").value == \\
            ctypes.addressof((ctypes.c_char * 64).from_buffer(buf))
        data = b"x" * 32
        ok(driver.cuMemcpyHtoD(0x1000, data, 32))
        assert ctypes.c_size_t.in_dll(fake, "fake_copy_bytes").value == 32
    """)


def test_copies_check_buffer_sizes(fake_driver_dir):
    run_fake(fake_driver_dir, """
        for call in (lambda: driver.cuMemcpyDtoH(bytearray(16), 0x1000, 4096),
                     lambda: driver.cuMemcpyHtoD(0x1000, b"x" * 16, 4096)):
            try:
                call()
            except ValueError:
                continue
            raise AssertionError("a buffer smaller than the byte count was accepted")
    """)


def test_boolean_attribute_values(fake_driver_dir):
    # cuda.bindings' test_cuda_coredump_attr: the C bools of the coredump
    # settings (one byte each; the stand-in checks the size) take and give
    # True/False, as do the boolean pointer attributes.
    run_fake(fake_driver_dir, """
        s = driver.CUcoredumpSettings
        bools = (ctypes.c_ubyte * 5).in_dll(fake, "fake_coredump_bools")
        assert driver.cuCoredumpSetAttributeGlobal(s.CU_COREDUMP_TRIGGER_HOST, False) == (driver.CUresult.CUDA_SUCCESS,)
        assert driver.cuCoredumpSetAttributeGlobal(s.CU_COREDUMP_LIGHTWEIGHT, True) == (driver.CUresult.CUDA_SUCCESS,)
        assert bools[2] == 0 and bools[3] == 1
        assert ok(driver.cuCoredumpGetAttributeGlobal(s.CU_COREDUMP_TRIGGER_HOST)) is False
        assert ok(driver.cuCoredumpGetAttributeGlobal(s.CU_COREDUMP_LIGHTWEIGHT)) is True
        ok(driver.cuCoredumpSetAttributeGlobal(s.CU_COREDUMP_ENABLE_ON_EXCEPTION, 1))
        assert ok(driver.cuCoredumpGetAttributeGlobal(s.CU_COREDUMP_ENABLE_ON_EXCEPTION)) is True
        ok(driver.cuCoredumpSetAttributeGlobal(s.CU_COREDUMP_FILE, b"corefile"))
        assert ok(driver.cuCoredumpGetAttributeGlobal(s.CU_COREDUMP_FILE)) == b"corefile"
        a = driver.CUpointer_attribute
        assert ok(driver.cuPointerGetAttribute(a.CU_POINTER_ATTRIBUTE_IS_MANAGED, 0x1000)) is True
        values = ok(driver.cuPointerGetAttributes(2, [a.CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                                      a.CU_POINTER_ATTRIBUTE_MEMORY_TYPE], 0x1000))
        assert values[0] is False and values[1] == 2
    """)


def test_logs_dump_fills_bytes_as_cuda_bindings_programs_pass_them(fake_driver_dir):
    # cuda.bindings declares the buffer char *: programs pass b" " * size and
    # read it after the call. The interpreter's shared b" " and b"" take the
    # output privately and keep their values.
    run_fake(fake_driver_dir, """
        SUCCESS = driver.CUresult.CUDA_SUCCESS
        buf = b" " * 64
        status, iterator, written = driver.cuLogsDumpToMemory(None, buf, 64, 0)
        assert status is SUCCESS and iterator is None and written == 21, (status, written)
        assert buf[:written] == b"[fake] one log line\\n\\0" and buf[written:] == b" " * 43
        arr = bytearray(10)
        status, iterator, written = driver.cuLogsDumpToMemory(driver.CUlogIterator(3), arr, 10, 0)
        assert status is SUCCESS and int(iterator) == 4 and bytes(arr) == b"[fake] on\\0"
        one = b" " * 1
        status, _, written = driver.cuLogsDumpToMemory(None, one, 1, 0)
        assert status is SUCCESS and written == 1
        status, _, written = driver.cuLogsDumpToMemory(None, b"", 0, 0)
        assert status is SUCCESS and written == 0
        assert one == b" " and b" " == bytes([0x20]) and b"" == bytes(0)
        for bad in (12345, 0):
            try:
                driver.cuLogsDumpToMemory(None, bad, 64, 0)
            except TypeError as e:
                assert "buffer: expected bytes" in str(e) and "int found" in str(e), str(e)
            else:
                raise AssertionError("an int was taken as the buffer")
    """)


def test_conditional_node_graphs_after_the_call(fake_driver_dir):
    # The stand-in, as the driver, points phGraph_out at the `size` graphs it made.
    run_fake(fake_driver_dir, """
        graph = ok(driver.cuGraphCreate(0))
        params = driver.CUgraphNodeParams()
        params.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        params.conditional.size = 2
        assert [int(g) for g in params.conditional.phGraph_out] == [0, 0]
        ok(driver.cuGraphAddNode(graph, None, None, 0, params))
        bodies = params.conditional.phGraph_out
        assert len(bodies) == 2 and all(int(g) != 0 for g in bodies), bodies
        assert len(set(int(g) for g in bodies)) == 2
    """)
