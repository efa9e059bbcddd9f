# cython: language_level=3

from cubind.core._cpp cimport CUtensorMap

# A CUtensorMap's size; the storage below leaves room to align it to 64 bytes.
cdef enum:
    _TENSOR_MAP_BYTES = 128

cdef class TensorMapDescriptor:
    cdef char _storage[_TENSOR_MAP_BYTES + 64]
    cdef CUtensorMap* _map
    cdef object _source
    cdef int _device_id
    cdef str _kind
    cdef int _rank
    cdef object _data_type
    cdef object _swizzle
cdef void* _tensor_map_argument(object arg, size_t size, Py_ssize_t index, object kernel) except NULL
