# cython: language_level=3

cimport cubind.core._cpp as cpp

cdef class Linker:
    cdef object __weakref__
    cdef cpp.Linker* _cpp
    cdef object _options
    cdef bint _linked
    cdef int _require_open(self) except -1
