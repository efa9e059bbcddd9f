# Pointer and array fields of the struct classes.
from cubind.bindings._support.handles cimport Struct


# The address a struct's pointer field takes; buffers are kept alive by `owner`.
cdef void* field_address(object value, Struct owner, str name) except? NULL
cdef void keep(Struct owner, str name, object value)

# A pointer-to-struct field: a struct, a sequence of them (copied into one array
# the owner keeps), an address or None.
cdef void* struct_array_field(object value, type cls, size_t size, Struct owner, str name) except? NULL

# A writable memoryview of n items at ptr that keeps `owner` alive.
cdef object array_view(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, str fmt, object owner)
cdef int array_assign(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, str fmt, object value, str name) except -1
