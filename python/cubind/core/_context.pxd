# cython: language_level=3
from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr

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
