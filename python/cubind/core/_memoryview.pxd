# cython: language_level=3
from libc.stdint cimport int64_t, intptr_t
from cubind.core._dlpack cimport DLManagedTensorVersioned, DLTensor

cdef class _Int64TupleMemo:
    cdef int n
    cdef int64_t values[8]
    cdef tuple value
    cdef tuple get(self, const int64_t* values, int n)

cdef class StridedMemoryView:
    cdef readonly intptr_t ptr
    cdef readonly int device_id
    cdef readonly bint is_device_accessible
    cdef readonly bint readonly
    cdef readonly object exporting_obj
    cdef object _capsule
    cdef DLTensor* _dl
    cdef bint _versioned
    cdef DLManagedTensorVersioned* _owned
    cdef dict _interface
    cdef object _layout_given
    cdef object _buffer
    cdef object _shape
    cdef object _strides
    cdef bint _have_strides
    cdef object _dtype
    cdef int _itemsize
    cdef object _get_buffer(self)
    cdef int _get_itemsize(self) except -1

cdef class _StridedMemoryViewProxy:
    cdef readonly object obj
    cdef readonly bint has_dlpack
