# cython: language_level=3
from cpython.long cimport PyLong_CheckExact
from libc.stdint cimport uintptr_t
from libcpp.memory cimport shared_ptr, unique_ptr

cimport cubind.core._cpp as cpp

cdef class MemoryResource:
    cdef object __weakref__
    cdef shared_ptr[cpp.MemoryResource] _cpp
    # The pool allocate takes memory from directly (_owners.hpp's
    # buffer_allocate_from_pool) while the resource is open: null for a
    # resource that is not a pool, or one that cannot allocate.
    cdef cpp.CUmemoryPool _direct_pool
    cdef int _ensure(self) except -1

cdef class Buffer:
    cdef object __weakref__
    # The memory when a C++ Buffer owns it (allocated from a resource,
    # mapped); null otherwise. Inside the object: a Buffer costs no C++
    # allocation of its own.
    cdef cpp.Buffer _cpp
    cdef uintptr_t _ptr
    cdef size_t _size
    cdef object _mr
    cdef object _owner
    cdef object _stream
    cdef Py_ssize_t _exports
    cdef object _ipc
    cdef bint _mapped
    cdef bint _empty      # an open buffer of 0 bytes (no memory, no address), until closed
    cdef bint _direct     # its memory came from its resource's pool directly (buffer_allocate_from_pool)
    cdef int _free(self, object stream) except -1
    cdef int _close(self, object stream) except -1
    cdef int _require_open(self) except -1
cdef inline bint _holds(Buffer buffer) noexcept:
    # Its C++ Buffer holds memory.
    return buffer._cpp.data() != NULL

cdef int _allocate_into(Buffer buffer, MemoryResource mr, object size, object stream) except -1
cdef Buffer _allocate(MemoryResource mr, object size, object stream)
cdef size_t _size_arg_slow(object size, object owner, str method) except? 0

cdef extern from "_launch_args.hpp" namespace "cubind_core":
    bint read_small_int(object o, long long* out)


cdef inline size_t _size_arg(object size, object owner, str method) except? 0:
    # A size in bytes (an int, or anything with __index__) of at least 1; the
    # error names owner's class and method, and is only built on failure. An
    # int as CPython stores a small one is read in place.
    cdef long long value
    if PyLong_CheckExact(size) and read_small_int(size, &value) and value > 0:
        return <size_t>value
    return _size_arg_slow(size, owner, method)
