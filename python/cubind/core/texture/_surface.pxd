# cython: language_level=3
from libcpp.memory cimport unique_ptr

cimport cubind.core._cpp as cpp
from cubind.core.texture._handle_object cimport _HandleObject

cdef class SurfaceObject(_HandleObject):
    cdef unique_ptr[cpp.SurfaceObject] _cpp
    cdef object _resource
    cdef bint _open(self)
    cdef unsigned long long _raw_handle(self)
    cpdef close(self)
