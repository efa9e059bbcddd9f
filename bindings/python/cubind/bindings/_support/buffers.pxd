# Addresses of void * parameters, buffers included.
from cpython.buffer cimport Py_buffer


# A buffer acquired for the duration of one call.
cdef struct BufferRef:
    Py_buffer view
    bint held


# Address for a void* parameter: None, an int, or an object exporting a
# contiguous buffer (then `view` holds it until release_address).
cdef void* address(object obj, BufferRef* ref, bint writable, str name) except? NULL
cdef void release_address(BufferRef* ref) noexcept
cdef object sized_output(object obj, size_t n, BufferRef* ref, void** ptr, str name, str reported_by)
# A char * of n bytes (the parameter `size_name`) that the call fills: None
# (NULL), bytes (filled in place) or a writable buffer, never an int.
cdef void* caller_buffer(object obj, size_t n, BufferRef* ref, str name, str size_name) except? NULL
