# cython: language_level=3
from libcpp.memory cimport unique_ptr

cimport cubind.core._cpp as cpp

cdef class GraphicsResource:
    cdef unique_ptr[cpp.GraphicsResource] _cpp
    cdef object _mapped_buffer
    cdef object _context_manager_stream
    cdef object _entered_buffer
    cdef object _map_stream
    cdef int _require_open(self, str method) except -1
    cpdef close(self, stream=*)
