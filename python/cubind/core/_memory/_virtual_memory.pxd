# cython: language_level=3
from libcpp.memory cimport shared_ptr

cimport cubind.core._cpp as cpp
from cubind.core._memory._buffer cimport MemoryResource

cdef class VirtualMemoryResource(MemoryResource):
    cdef shared_ptr[cpp.VirtualMemoryResource] _vmm
    cdef object _device
    cdef object _config
