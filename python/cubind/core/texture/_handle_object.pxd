# cython: language_level=3

cdef class _HandleObject:
    # The Device the object was made on.
    cdef int _device_id
    # Each class: whether it still holds its driver object, and that
    # object's handle (a pointer or a 64-bit object id) as an integer.
    cdef bint _open(self)
    cdef unsigned long long _raw_handle(self)
    cpdef close(self)
