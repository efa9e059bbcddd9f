# cython: language_level=3, boundscheck=False, wraparound=False
"""The lifetime of Python callbacks handed to CUDA."""

from cpython.ref cimport Py_INCREF, Py_DECREF, PyObject

import sys as _sys


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
