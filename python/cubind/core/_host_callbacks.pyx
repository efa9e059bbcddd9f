# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# The host functions that run Python on the driver's threads, over the gate of
# _host_callbacks.hpp: one gate per process, so this module alone includes it
# and exports the functions (_host_callbacks.pxd). At exit, before the
# interpreter finalizes, the gate shuts and waits for the callbacks inside.

from cpython.ref cimport PyObject

cimport cubind.core._cpp as cpp

import atexit


cdef extern from "_host_callbacks.hpp" namespace "cubind_core" nogil:
    bint enter_python_callback() noexcept
    void leave_python_callback() noexcept
    bint close_python_callbacks(int timeout_ms) noexcept
    void release_later(PyObject* object)
    void _run_python_callable "cubind_core::run_python_callable"(void* callable) noexcept
    void _release_python_object "cubind_core::release_python_object"(void* object) noexcept
    void _release_malloced "cubind_core::release_malloced"(void* data) noexcept
    void _release_nothing "cubind_core::release_nothing"(void* data) noexcept


cdef void _call_once(void* data) noexcept with gil:
    # The reference launch_host_func took is this call's, let go of through
    # release_later: on this driver thread, dropping the last reference to
    # what the callable holds (a Buffer, say) must not free it. An exception
    # is reported through sys.unraisablehook, as nothing waits for it.
    try:
        (<object>data)()
    finally:
        release_later(<PyObject*>data)


cdef void run_host_callback(void* callable) noexcept nogil:
    # Through the gate: once it shut at exit (or the interpreter finalizes)
    # taking the GIL could end this thread, which is the driver's, so the
    # callback is skipped and its reference left.
    if not enter_python_callback():
        return
    _call_once(callable)
    leave_python_callback()


cdef void run_python_callable(void* callable) noexcept nogil:
    _run_python_callable(callable)


cdef void release_python_object(void* obj) noexcept nogil:
    _release_python_object(obj)


cdef void release_malloced(void* data) noexcept nogil:
    _release_malloced(data)


cdef void release_nothing(void* data) noexcept nogil:
    _release_nothing(data)


def _close_host_callbacks():
    # At exit, before the interpreter finalizes: shut the gate and wait for
    # the callbacks running (a bounded wait). If some never return, the exit
    # leaves the primary contexts to the driver rather than release them, as
    # a release would wait for those callbacks forever.
    cdef bint drained
    with nogil:
        drained = close_python_callbacks(10000)
    if not drained:
        cpp.keep_primary_contexts_at_exit()


atexit.register(_close_host_callbacks)
