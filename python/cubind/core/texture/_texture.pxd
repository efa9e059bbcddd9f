# cython: language_level=3
from libcpp.memory cimport unique_ptr

cimport cubind.core._cpp as cpp
from cubind.core.texture._handle_object cimport _HandleObject

cdef class TextureObject(_HandleObject):
    cdef unique_ptr[cpp.TextureObject] _cpp
    cdef object _resource
    cdef object _options
    cdef bint _open(self)
    cdef unsigned long long _raw_handle(self)
    cpdef close(self)

cdef int _texture_options_fill(options, cpp.TextureOptions* out) except -1
