# Small conversions of Python arguments used by the generated code.

# An int from an int or an object with __index__ (TypeError naming `name`).
cdef object as_int(object obj, str name)

# bytes for a const char* parameter (str is encoded as UTF-8).
cdef bytes as_bytes(object obj, str name)

# Checks that a sequence holds at least `count` items.
cdef Py_ssize_t check_count(object seq, Py_ssize_t count, str name, str count_name) except -1

# Zeroed memory for `count` items (MemoryError when it cannot be had).
cdef void* alloc_array(Py_ssize_t count, size_t itemsize) except NULL

# An address from an int, None, a handle or a struct (no buffers: nothing keeps them alive).
cdef void* plain_address(object obj, str name) except? NULL

# bytes up to the first NUL among n.
cdef bytes c_string(const char* buf, Py_ssize_t n)
