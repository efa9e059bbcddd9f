# cython: language_level=3

cimport cubind.core._cpp as cpp

cdef class LaunchConfig:
    # What launch reads, first (_launch_fast.hpp).
    cdef bint _rendered
    cdef cpp.NativeLaunchConfig _native
    cdef object __weakref__
    cdef cpp.LaunchConfig _cpp
    cdef bint _initialized
    cdef readonly tuple grid
    cdef readonly object cluster
    cdef readonly tuple block
    cdef readonly object shmem_size
    cdef readonly bint is_cooperative
    cdef readonly bint programmatic_stream_serialization
cdef LaunchConfig _launch_config(config)

# Where a kernel argument of another module's type keeps its bytes: a pointer
# to `size` bytes that live as long as the argument (a TensorMapDescriptor's
# 64-byte aligned CUtensorMap, a GraphCondition's handle), or an error that
# names the argument. Such a module registers its type as it loads, before
# any instance can exist, so that this module need not load it.
ctypedef void* (*ArgumentBytes)(object arg, size_t size, Py_ssize_t index, object kernel) except NULL
cdef int _accept_argument_type(type cls, ArgumentBytes bytes_of) except -1
cdef int _argument_error(object kernel, Py_ssize_t index, size_t size, value, str why) except -1
cdef int _pack(object arg, size_t size, char* slot, Py_ssize_t index, object kernel) except -1
