# cython: language_level=3
cdef int _device_count() except -1
cdef int _device_ordinal(device) except -1
cdef object _Device
cdef object _primary_context(int ordinal)
