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


# What a kernelParams argument is kept as for the call: None, an int, a
# KernelParams, an array, or a held buffer (kernel_params_pointer reads it).
# None and an exact KernelParams go inline; the *_other functions take the rest.
cdef object kernel_params_other(object obj)
cdef void** kernel_params_pointer_other(object packed) except? NULL


cdef inline object kernel_params(object obj):
    if obj is None:
        return None
    return kernel_params_other(obj)


cdef inline void** kernel_params_pointer(object packed) except? NULL:
    if packed is None:
        return NULL
    if type(packed) is KernelParams:
        return (<KernelParams>packed).args
    return kernel_params_pointer_other(packed)
