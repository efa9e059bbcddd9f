# cython: language_level=3
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core.texture._handle_object cimport _HandleObject

cdef class MipmappedArray(_HandleObject):
    cdef shared_ptr[cpp.MipmappedArray] _cpp
    cdef tuple _shape
    cdef object _format
    cdef unsigned int _num_channels
    cdef unsigned int _num_levels
    cdef bint _surface_load_store
    cdef int _require_open(self) except -1
    cdef bint _open(self)
    cdef unsigned long long _raw_handle(self)
    cpdef close(self)
