# cython: language_level=3
from libcpp.memory cimport unique_ptr

cimport cubind.core._cpp as cpp

cdef class Process:
    cdef unique_ptr[cpp.Process] _cpp
    cdef int _pid
