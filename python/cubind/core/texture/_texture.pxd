# cython: language_level=3
from libcpp.memory cimport unique_ptr

cimport cubind.core._cpp as cpp

cdef class TextureObject:
    cdef unique_ptr[cpp.TextureObject] _cpp
    cdef object _resource
    cdef object _options
    cdef int _device_id
    cpdef close(self)

cdef int _texture_options_fill(options, cpp.TextureOptions* out) except -1
