# cython: language_level=3
from libcpp.memory cimport unique_ptr

cimport cubind.core._cpp as cpp

cdef class SurfaceObject:
    cdef unique_ptr[cpp.SurfaceObject] _cpp
    cdef object _resource
    cdef int _device_id
    cpdef close(self)
