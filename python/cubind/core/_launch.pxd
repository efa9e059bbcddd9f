# cython: language_level=3

cimport cubind.core._cpp as cpp

cdef class LaunchConfig:
    cdef cpp.LaunchConfig _cpp
    cdef cpp.NativeLaunchConfig _native
    cdef bint _rendered
    cdef readonly tuple grid
    cdef readonly object cluster
    cdef readonly tuple block
    cdef readonly object shmem_size
    cdef readonly bint is_cooperative
    cdef readonly bint programmatic_stream_serialization
cdef LaunchConfig _launch_config(config)
cdef int _argument_error(object kernel, Py_ssize_t index, size_t size, value, str why) except -1
cdef int _pack(object arg, size_t size, char* slot, Py_ssize_t index, object kernel) except -1
