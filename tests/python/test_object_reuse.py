"""Handle and value objects returned by the bindings are reused in place only
while nothing but the module refers to them: an object a program holds, in a
variable, a container or a struct, keeps its value whatever later calls return."""
import gc
import sys

import pytest

from cubind.bindings import nvrtc

from conftest import run_with_fake_driver

SOURCE = b'extern "C" __global__ void k() {}'


def _program(name):
    err, prog = nvrtc.nvrtcCreateProgram(SOURCE, name, 0, [], [])
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS
    return prog


def test_held_handles_keep_their_values():
    held = [_program(b"p%d.cu" % i) for i in range(8)]
    values = [int(p) for p in held]
    assert len(set(values)) == 8
    assert len({id(p) for p in held}) == 8
    # Programs made and dropped in between do not disturb the held ones.
    for i in range(8):
        extra = _program(b"extra.cu")
        nvrtc.nvrtcDestroyProgram(extra)
        del extra
    assert [int(p) for p in held] == values
    for p in held:
        assert nvrtc.nvrtcDestroyProgram(p) == (nvrtc.nvrtcResult.NVRTC_SUCCESS,)
        assert int(p) == 0


def test_a_dropped_result_may_be_reused_but_a_kept_one_is_not():
    first = _program(b"a.cu")
    first_value = int(first)
    second = _program(b"b.cu")
    assert second is not first
    assert int(first) == first_value
    # Held by a tuple only (as `err, prog = ...` leaves it before unpacking).
    kept = nvrtc.nvrtcCreateProgram(SOURCE, b"c.cu", 0, [], [])
    third = _program(b"d.cu")
    assert kept[1] is not third and int(kept[1]) != int(third)
    for p in (first, second, kept[1], third):
        nvrtc.nvrtcDestroyProgram(p)


def test_a_destroyed_handle_is_zeroed_only_where_it_is_held():
    a = _program(b"a.cu")
    b = _program(b"b.cu")
    b_value = int(b)
    nvrtc.nvrtcDestroyProgram(a)
    assert int(a) == 0 and int(b) == b_value
    nvrtc.nvrtcDestroyProgram(b)


def test_reference_counts_stay_balanced():
    for _ in range(100):
        nvrtc.nvrtcDestroyProgram(_program(b"warm.cu"))
    gc.collect()
    p = _program(b"x.cu")
    value = int(p)
    for _ in range(1000):
        q = _program(b"y.cu")
        nvrtc.nvrtcDestroyProgram(q)
        del q
    # Held by this frame only (and getrefcount's argument): the module's
    # spare slot moved on to an object made later, and nothing leaked.
    assert sys.getrefcount(p) == 2
    assert int(p) == value
    nvrtc.nvrtcDestroyProgram(p)


def test_driver_handles_and_values_are_not_shared(fake_driver_dir):
    """Device pointers (a value class), streams and events (handles) from the
    stand-in driver: what a program holds is never handed out again."""
    run_with_fake_driver(fake_driver_dir, """
from cubind.bindings import driver as d
ok = d.CUresult.CUDA_SUCCESS
assert d.cuInit(0) == (ok,)
err, dev = d.cuDeviceGet(0)
err, ctx = d.cuDevicePrimaryCtxRetain(dev)
assert err == ok
d.cuCtxSetCurrent(ctx)
err, pool = d.cuDeviceGetDefaultMemPool(dev)
err, stream = d.cuStreamCreateWithPriority(0, 0)
pointers = [d.cuMemAllocFromPoolAsync(64, pool, stream)[1] for _ in range(6)]
values = [int(p) for p in pointers]
assert len(set(values)) == 6 and len({id(p) for p in pointers}) == 6, values
for _ in range(10):
    err, p = d.cuMemAllocFromPoolAsync(64, pool, stream)
    d.cuMemFreeAsync(p, stream)
    del p
assert [int(p) for p in pointers] == values
events = [d.cuEventCreate(0)[1] for _ in range(4)]
event_values = [int(e) for e in events]
assert len(set(event_values)) == 4 and len({id(e) for e in events}) == 4
for _ in range(10):
    err, e = d.cuEventCreate(0)
    d.cuEventDestroy(e)
assert [int(e) for e in events] == event_values
streams = {int(d.cuStreamCreateWithPriority(0, 0)[1]) for _ in range(4)}
assert len(streams) == 4
err, current = d.cuCtxGetCurrent()
assert int(current) == int(ctx) and current is not ctx
""")
