# cython: language_level=3
from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp

cdef class SMResource:
    cdef object __weakref__
    cdef cpp.SmResource* _cpp
    cdef bint _usable
    @staticmethod
    cdef SMResource _take(cpp.SmResource* resource, bint usable)

cdef class WorkqueueResource:
    cdef object __weakref__

cdef class DeviceResources:
    cdef object __weakref__
    cdef int _device_id
    cdef uintptr_t _context
    cdef shared_ptr[cpp.GreenContext] _green
    @staticmethod
    cdef DeviceResources _of(int device_id, uintptr_t context, shared_ptr[cpp.GreenContext] green)
cdef object _checked_options(options, cls, str where)
