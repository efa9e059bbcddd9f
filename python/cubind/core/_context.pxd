# cython: language_level=3
from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr
from libcpp.optional cimport optional

cimport cubind.core._cpp as cpp

cdef class Context:
    cdef uintptr_t _handle
    cdef int _device_id
    cdef bint _closed
    cdef shared_ptr[cpp.GreenContext] _green
    cdef object __weakref__
    @staticmethod
    cdef Context _wrap(uintptr_t handle, int device_id)
    @staticmethod
    cdef Context _create_green(int device_id, resources)
    cdef int _require_open(self) except -1
cdef Context _context_of(uintptr_t handle, int device_id)
cdef object _green_contexts


# The current context, through cubind::Context.
cdef inline cpp.CUcontext _current_context() except? NULL nogil:
    # The context current on this thread, or NULL.
    cdef optional[cpp.Context] current = cpp.Context.current()
    return current.value().handle() if current.has_value() else NULL


# Through a Context value (cpp_locals, in _context.pyx).
cdef int _make_current(cpp.CUcontext context) except -1 nogil
cdef int _context_device(cpp.CUcontext context) except -1 nogil
