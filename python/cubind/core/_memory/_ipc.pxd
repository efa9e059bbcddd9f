# cython: language_level=3

cdef class IPCAllocationHandle:
    cdef int _fd
    cdef object _uuid

cdef class IPCBufferDescriptor:
    cdef bytes _payload
    cdef size_t _size

cdef class IPCEventDescriptor:
    cdef bytes _reserved
    cdef bint _blocking
cdef object _new_uuid()
cdef bytes _payload_of(object data, str where)
cdef int _require_ipc(object mr, str what) except -1
cdef object _pool_from_registry(object cls, object uuid)
cdef object _alloc_handle_arg(object alloc_handle, str where)
cdef object _pool_registry
