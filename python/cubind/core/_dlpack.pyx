# cython: language_level=3, binding=True, embedsignature=True, embedsignature.format=clinic
# cython: auto_pickle=False
# DLPack export of a Buffer: a 1-D int8 tensor over its bytes, as cuda.core
# exports one. The structs are DLPack 1.0's (dlpack.h), field for field.

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid, PyCapsule_New
from cpython.ref cimport Py_DECREF, Py_INCREF, PyObject
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport free, malloc

from cubind.core._memory._buffer cimport Buffer


# One export: either managed form, the shape it points at, and the Buffer it
# keeps alive until the consumer calls the deleter.
cdef struct _Export:
    DLManagedTensor plain
    DLManagedTensorVersioned versioned
    int64_t shape
    PyObject* owner


cdef void _release_export(_Export* export) noexcept nogil:
    # A consumer may call the deleter from any thread, with or without the GIL.
    cdef PyGILState_STATE state = PyGILState_Ensure()
    _drop_owner(export.owner)
    PyGILState_Release(state)
    free(export)


cdef void _drop_owner(PyObject* owner) noexcept with gil:
    Py_DECREF(<object>owner)


cdef void _delete_plain(DLManagedTensor* managed) noexcept nogil:
    _release_export(<_Export*>managed.manager_ctx)


cdef void _delete_versioned(DLManagedTensorVersioned* managed) noexcept nogil:
    _release_export(<_Export*>managed.manager_ctx)


cdef void _capsule_destructor(object capsule) noexcept:
    # A capsule no consumer took (still named dltensor): its export is freed here.
    cdef DLManagedTensor* plain
    cdef DLManagedTensorVersioned* versioned
    if PyCapsule_IsValid(capsule, b"dltensor"):
        plain = <DLManagedTensor*>PyCapsule_GetPointer(capsule, b"dltensor")
        plain.deleter(plain)
    elif PyCapsule_IsValid(capsule, b"dltensor_versioned"):
        versioned = <DLManagedTensorVersioned*>PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        versioned.deleter(versioned)


cdef object _dlpack_capsule(Buffer buffer, bint versioned_form):
    cdef _Export* export = <_Export*>malloc(sizeof(_Export))
    cdef DLTensor* tensor
    if export == NULL:
        raise MemoryError()
    device_type, device_id = buffer.__dlpack_device__()
    export.shape = buffer._size
    export.owner = <PyObject*>buffer
    Py_INCREF(buffer)
    tensor = &export.versioned.dl_tensor if versioned_form else &export.plain.dl_tensor
    tensor.data = <void*>buffer._ptr
    tensor.device.device_type = device_type
    tensor.device.device_id = device_id
    tensor.ndim = 1
    tensor.dtype.code = 0  # kDLInt
    tensor.dtype.bits = 8
    tensor.dtype.lanes = 1
    tensor.shape = &export.shape
    tensor.strides = NULL
    tensor.byte_offset = 0
    if versioned_form:
        export.versioned.version.major = 1
        export.versioned.version.minor = 0
        export.versioned.manager_ctx = export
        export.versioned.deleter = _delete_versioned
        export.versioned.flags = 0
        return PyCapsule_New(&export.versioned, b"dltensor_versioned", _capsule_destructor)
    export.plain.manager_ctx = export
    export.plain.deleter = _delete_plain
    return PyCapsule_New(&export.plain, b"dltensor", _capsule_destructor)
