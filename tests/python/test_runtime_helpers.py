"""The helpers cuda_runtime's headers define inline (driver_functions.h), and
caller buffers the driver fills: no GPU needed."""
import ctypes

import pytest

from cubind.bindings import driver, runtime


def test_make_cuda_extent_pos_and_pitched_ptr():
    e = runtime.make_cudaExtent(640, 480, 3)
    assert isinstance(e, runtime.cudaExtent)
    assert (e.width, e.height, e.depth) == (640, 480, 3)
    p = runtime.make_cudaPos(1, 2, 3)
    assert isinstance(p, runtime.cudaPos) and (p.x, p.y, p.z) == (1, 2, 3)
    buf = (ctypes.c_char * 64)()
    pp = runtime.make_cudaPitchedPtr(ctypes.addressof(buf), 16, 8, 4)
    assert isinstance(pp, runtime.cudaPitchedPtr)
    assert (pp.ptr, pp.pitch, pp.xsize, pp.ysize) == (ctypes.addressof(buf), 16, 8, 4)
    # The values are the struct's own storage: sizeof agrees with C.
    assert runtime.sizeof(e) == 3 * ctypes.sizeof(ctypes.c_size_t)


@pytest.mark.parametrize("bad", [-1, "640", None, 2 ** 64])
def test_make_cuda_extent_rejects_bad_sizes(bad):
    with pytest.raises((TypeError, OverflowError, ValueError)):
        runtime.make_cudaExtent(bad, 1, 1)


@pytest.mark.parametrize("fn", [driver.cuLogsDumpToMemory, runtime.cudaLogsDumpToMemory])
def test_logs_dump_to_memory_checks_the_caller_buffer(fn):
    # cuda.bindings' order: (iterator, buffer, size, flags). A buffer smaller
    # than size is refused before any library call.
    small = bytearray(8)
    with pytest.raises(ValueError, match="buffer holds 8 bytes but size is 64"):
        fn(None, small, 64, 0)
    with pytest.raises(ValueError, match="buffer holds 15 bytes but size is 64"):
        fn(None, b"too short bytes", 64, 0)
    # cuda.bindings takes the buffer as char *: an int is no buffer there
    # (TypeError), and taking it as an address would write through it.
    for bad in (12345, 0, object()):
        with pytest.raises(TypeError, match="buffer: expected bytes.*found"):
            fn(None, bad, 64, 0)
