# cython: language_level=3

cimport cubind.core._cpp as cpp
from cubind.core._module cimport ObjectCode

cdef class Program:
    cdef object __weakref__
    cdef cpp.Program* _cpp
    cdef object _options
    cdef str _code_type
    cdef str _ptx
    cdef str _source
    cdef bint _closed
    cdef int _require_open(self) except -1
cdef bytes _code_bytes(cpp.ObjectCode* code)
