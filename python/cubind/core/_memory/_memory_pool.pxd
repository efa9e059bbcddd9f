# cython: language_level=3
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core._memory._buffer cimport MemoryResource

cdef class _MemPool(MemoryResource):
    cdef shared_ptr[cpp.MemoryPool] _pool
    cdef object _alloc_handle
    cdef bint _mapped
    cdef int _adopt(self, cpp.MemoryPool* pool) except -1
    cdef cpp.MemoryPool* _get(self) except NULL
    cdef int _ensure(self) except -1

cdef class DeviceMemoryResource(_MemPool):
    cdef int _device_id

cdef class PinnedMemoryResource(_MemPool):
    cdef int _numa_id

cdef class LegacyPinnedMemoryResource(MemoryResource):
    cdef int _ensure(self) except -1
