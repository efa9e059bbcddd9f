# cython: language_level=3
# The DLPack 1.0 structs (dlpack.h), and the GIL calls of a deleter that a
# consumer may call from any thread, for this module and _memoryview.
from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint16_t, uint32_t, uint64_t, uint8_t
from cubind.core._memory._buffer cimport Buffer

# Declared here rather than cimported from cpython.pystate, whose
# declarations are not nogil.
cdef extern from "Python.h":
    ctypedef int PyGILState_STATE
    PyGILState_STATE PyGILState_Ensure() noexcept nogil
    void PyGILState_Release(PyGILState_STATE) noexcept nogil

cdef struct DLDevice:
    int device_type
    int32_t device_id

cdef struct DLDataType:
    uint8_t code
    uint8_t bits
    uint16_t lanes

cdef struct DLTensor:
    void* data
    DLDevice device
    int32_t ndim
    DLDataType dtype
    int64_t* shape
    int64_t* strides
    uint64_t byte_offset

cdef struct DLManagedTensor:
    DLTensor dl_tensor
    void* manager_ctx
    void (*deleter)(DLManagedTensor*) noexcept nogil

cdef struct DLPackVersion:
    uint32_t major
    uint32_t minor

cdef struct DLManagedTensorVersioned:
    DLPackVersion version
    void* manager_ctx
    void (*deleter)(DLManagedTensorVersioned*) noexcept nogil
    uint64_t flags
    DLTensor dl_tensor
cdef void _drop_owner(PyObject* owner) noexcept with gil
cdef void _capsule_destructor(object capsule) noexcept
cdef object _dlpack_capsule(Buffer buffer, bint versioned_form)
