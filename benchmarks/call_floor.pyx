# cython: language_level=3
"""The least a binding can do per call, for benchmarks/gpu_bench_bindings.py.

Each function takes as many arguments as the driver call it stands for and
returns a tuple as long as that call's, holding objects made beforehand, and
the *_nogil ones release the GIL around an empty C function, as cubind does
around every call. No binding of that call can cost less than its floor.
"""

cdef extern from *:
    """
    static void cubind_floor_opaque(void) { __asm__ __volatile__("" ::: "memory"); }
    """
    void cubind_floor_opaque() nogil

cdef object _status = object()
cdef object _value = object()


def ret2_0():
    return (_status, _value)


def ret2_0_nogil():
    with nogil:
        cubind_floor_opaque()
    return (_status, _value)


def ret2_1_nogil(a):
    with nogil:
        cubind_floor_opaque()
    return (_status, _value)


def ret2_2_nogil(a, b):
    with nogil:
        cubind_floor_opaque()
    return (_status, _value)


def ret1_1_nogil(a):
    with nogil:
        cubind_floor_opaque()
    return (_status,)


def ret1_2_nogil(a, b):
    with nogil:
        cubind_floor_opaque()
    return (_status,)
