# cython: language_level=3
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core._memory._buffer cimport Buffer, MemoryResource

cdef class ManagedBuffer(Buffer):
    pass

cdef class ManagedMemoryResource(MemoryResource):
    cdef shared_ptr[cpp.ManagedMemoryResource] _pool
    cdef object _preferred
    cdef bint _closed
    cdef int _ensure(self) except -1
cdef cpp.CUmemLocation _memory_location(location, str where, bint required) except *
