# cython: language_level=3
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp

cdef class MipmappedArray:
    cdef shared_ptr[cpp.MipmappedArray] _cpp
    cdef tuple _shape
    cdef object _format
    cdef unsigned int _num_channels
    cdef unsigned int _num_levels
    cdef int _device_id
    cdef bint _surface_load_store
    cdef int _require_open(self) except -1
    cpdef close(self)
