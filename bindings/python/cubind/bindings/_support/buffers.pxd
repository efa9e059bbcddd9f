# Addresses of void * parameters, buffers included.
from cpython.buffer cimport Py_buffer
from cpython.long cimport PyLong_CheckExact
from libc.stdint cimport uintptr_t

from cubind.bindings._support.conversions cimport cubind_compact_int


# A buffer acquired for the duration of one call.
cdef struct BufferRef:
    Py_buffer view
    bint held


# Address for a void* parameter: None, an int, or an object exporting a
# contiguous buffer (then `view` holds it until release_address).
cdef void* address_other(object obj, BufferRef* ref, bint writable, str name) except? NULL


cdef inline void* address(object obj, BufferRef* ref, bint writable, str name) except? NULL:
    # None and an int of one digit (`extra=0`, the usual ones) without a call.
    cdef long long v
    if obj is None:
        ref.held = False
        return NULL
    if PyLong_CheckExact(obj) and cubind_compact_int(obj, &v) and v >= 0:
        ref.held = False
        return <void*><uintptr_t>v
    return address_other(obj, ref, writable, name)
cdef void release_address(BufferRef* ref) noexcept
cdef object sized_output(object obj, size_t n, BufferRef* ref, void** ptr, str name, str reported_by)
# A char * of n bytes (the parameter `size_name`) that the call fills: None
# (NULL), bytes (filled in place) or a writable buffer, never an int.
cdef void* caller_buffer(object obj, size_t n, BufferRef* ref, str name, str size_name) except? NULL
