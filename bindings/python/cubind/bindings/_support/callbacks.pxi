# The lifetime of Python callbacks handed to CUDA.

from cpython.ref cimport Py_INCREF, Py_DECREF, PyObject

import atexit as _atexit
import sys as _sys


cdef extern from *:
    """
    #include <time.h>
    static int cubind_callbacks_running = 0;
    static int cubind_callbacks_closed = 0;

    static int cubind_callback_enter(void) {
        __atomic_add_fetch(&cubind_callbacks_running, 1, __ATOMIC_SEQ_CST);
        int open = !__atomic_load_n(&cubind_callbacks_closed, __ATOMIC_SEQ_CST) && Py_IsInitialized();
    #if PY_VERSION_HEX >= 0x030D0000
        open = open && !Py_IsFinalizing();
    #else
        open = open && !_Py_IsFinalizing();
    #endif
        if (!open) __atomic_sub_fetch(&cubind_callbacks_running, 1, __ATOMIC_SEQ_CST);
        return open;
    }

    static void cubind_callback_leave(void) { __atomic_sub_fetch(&cubind_callbacks_running, 1, __ATOMIC_SEQ_CST); }

    /* Shuts the gate and waits up to timeout_ms for the callbacks inside it. */
    static int cubind_callbacks_close(int timeout_ms) {
        __atomic_store_n(&cubind_callbacks_closed, 1, __ATOMIC_SEQ_CST);
        for (int waited = 0; __atomic_load_n(&cubind_callbacks_running, __ATOMIC_SEQ_CST) != 0; ++waited) {
            if (waited >= timeout_ms) return 0;
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
        return 1;
    }
    """
    bint _gate_enter "cubind_callback_enter"() noexcept nogil
    void _gate_leave "cubind_callback_leave"() noexcept nogil
    bint _gate_close "cubind_callbacks_close"(int timeout_ms) noexcept nogil


cdef bint callback_enter() noexcept nogil:
    return _gate_enter()


cdef void callback_leave() noexcept nogil:
    _gate_leave()


def _close_callbacks():
    # At exit, before the interpreter finalizes: the callbacks running get
    # the GIL (released here) and finish; later ones are skipped. A callback
    # that never returns is waited for 10 s.
    with nogil:
        _gate_close(10000)


_atexit.register(_close_callbacks)


# A context holds (callable, user data); CUDA is handed the
# context as its userData and the generated trampoline calls back here.

cdef void* callback_context(object fn, object user_data, bint one_shot=True) except NULL:
    if not callable(fn):
        raise TypeError(f"expected a callable, got {type(fn).__name__}")
    context = (fn, user_data, one_shot)
    Py_INCREF(context)
    return <void*>context


cdef void callback_invoke(void* context, tuple leading) noexcept:
    cdef tuple entry = <tuple><PyObject*>context
    fn, user_data, one_shot = entry
    try:
        fn(*leading, user_data)
    except BaseException as e:
        # Reported through sys.unraisablehook: the caller of CUDA is gone.
        hook = _sys.unraisablehook
        try:
            hook(_Unraisable(type(e), e, e.__traceback__, f"Exception in CUDA callback {fn!r}", fn))
        except BaseException:
            pass


cdef void callback_discard(void* context) noexcept:
    Py_DECREF(<object>context)


cdef void callback_finished(void* context) noexcept:
    # A callback captured into a graph runs at every launch: its context stays.
    if (<tuple><PyObject*>context)[2]:
        Py_DECREF(<object>context)


class _Unraisable:
    __slots__ = ("exc_type", "exc_value", "exc_traceback", "err_msg", "object")

    def __init__(self, exc_type, exc_value, exc_traceback, err_msg, obj):
        self.exc_type = exc_type
        self.exc_value = exc_value
        self.exc_traceback = exc_traceback
        self.err_msg = err_msg
        self.object = obj
