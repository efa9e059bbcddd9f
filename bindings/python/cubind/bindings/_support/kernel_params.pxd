# Kernel arguments: None, an address, or (values, types) packed into a KernelParams.

cdef class KernelParams:
    # Kernel arguments packed from (values, types): one pointer per argument.
    cdef void** args
    cdef char* _data
    cdef char _inline[256]
    cdef void* _inline_args[64]
    cdef list _keep
    cdef void* _object_pointer(self, object v, Py_ssize_t i) except? NULL
    cdef int _store(self, object v, object t, char fmt, char* dst, Py_ssize_t size, Py_ssize_t i) except -1
    cdef _pack_many(self, tuple vals, tuple kinds)


cdef object kernel_params(object obj)
cdef void** kernel_params_pointer(object packed) except? NULL
