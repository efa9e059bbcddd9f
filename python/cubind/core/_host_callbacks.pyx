# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# The host functions that run Python on the driver's threads, over the gate of
# _host_callbacks.hpp: one gate per process, so this module alone includes it
# and exports the functions (_host_callbacks.pxd). At exit, before the
# interpreter finalizes, the gate shuts and waits for the callbacks inside.

from cpython.ref cimport Py_INCREF, PyObject
from libc.stdint cimport uintptr_t
from libc.stdlib cimport malloc
from libc.string cimport memcpy

cimport cubind.core._cpp as cpp
from cubind.core._errors cimport _handle_address

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
    cppclass CHostFunction:
        cpp.CUhostFn fn
        void* data
        PyObject* owner
    void run_c_function(void* record) noexcept
    void run_c_function_once(void* record) noexcept
    void release_c_function(void* record) noexcept


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


cdef str _CUHOSTFN = "CUhostFn (void (*)(void*)), declared as ctypes.CFUNCTYPE(None, ctypes.c_void_p)"


cdef object host_function(object fn, object user_data, str owner, str method, str param,
                          cpp.CUhostFn* function, void** data, cpp.CUhostFn* release):
    cdef const unsigned char[::1] raw = None
    cdef size_t size = 0
    cdef uintptr_t address = 0
    cdef uintptr_t code
    cdef CHostFunction* record
    import ctypes

    if isinstance(fn, ctypes._CFuncPtr):
        if fn.restype is not None or tuple(fn.argtypes or ()) != (ctypes.c_void_p,):
            raise TypeError(
                f"{owner}.{method}: {param} {fn!r} is a host callback with prototype restype={fn.restype!r}, "
                f"argtypes={fn.argtypes!r}; CUDA requires a callback matching {_CUHOSTFN}. "
                "Alternatively, pass a Python callable."
            )
        # Read through from_buffer: ctypes.cast would make fn refer to itself
        # (a cycle that only the garbage collector frees).
        code = <uintptr_t>(ctypes.c_void_p.from_buffer(fn).value or 0)
        if code == 0:
            raise ValueError(f"{owner}.{method}: {param} {fn!r} is a NULL function pointer")
        if user_data is None:
            pass
        elif isinstance(user_data, int) and not isinstance(user_data, bool):
            address = _handle_address(user_data, owner, method, "user_data")
        else:
            try:
                raw = memoryview(user_data).cast("B")
            except (TypeError, ValueError):
                raise TypeError(f"{owner}.{method}: user_data must be an int address, a contiguous bytes-like "
                                f"object or None, not {type(user_data).__name__} ({user_data!r:.60})") from None
            size = raw.shape[0]
        record = <CHostFunction*>malloc(sizeof(CHostFunction) + size)
        if record == NULL:
            raise MemoryError()
        record.fn = <cpp.CUhostFn><void*>code
        if raw is None:
            record.data = <void*>address
        else:
            record.data = <void*>(<char*>record + sizeof(CHostFunction))
            if size:
                memcpy(record.data, &raw[0], size)
        Py_INCREF(fn)
        record.owner = <PyObject*>fn
        function[0] = run_c_function
        data[0] = <void*>record
        release[0] = release_c_function
        return None
    if not callable(fn):
        raise TypeError(f"{owner}.{method}: {param} must be callable or a ctypes function pointer matching {_CUHOSTFN}, "
                        f"not {type(fn).__name__} ({fn!r:.60})")
    if user_data is not None:
        raise ValueError(f"{owner}.{method}: user_data is only for ctypes function pointers (got {user_data!r:.60} "
                         "with a Python callable); bind state to a Python callable with a closure or "
                         "functools.partial")
    Py_INCREF(fn)
    function[0] = run_python_callable
    data[0] = <void*>fn
    release[0] = release_python_object
    return fn


cdef cpp.CUhostFn run_once(cpp.CUhostFn function) noexcept:
    if function == run_python_callable:
        return run_host_callback
    if function == run_c_function:
        return run_c_function_once
    return function


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
