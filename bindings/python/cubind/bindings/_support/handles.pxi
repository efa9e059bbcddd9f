# Handle and struct base classes of cubind.bindings, and the conversions of
# Python arguments to the handles and structs they stand for.

cimport cython
from cpython.buffer cimport PyBUF_SIMPLE, Py_buffer, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset


# Handles are made by the million (every call that returns one): a free
# list, shared by the subclasses of the generated modules, spares the allocator.
@cython.freelist(32)
cdef class Handle:
    """An opaque CUDA handle. Compares, hashes and converts as its address."""

    def __init__(self, init_value=0, _ptr=0):
        if _ptr:
            self._value = (<void**><uintptr_t>_ptr)[0]
        elif init_value is None:
            self._value = NULL
        elif isinstance(init_value, Handle):
            self._value = (<Handle>init_value)._value
        else:
            self._value = <void*><uintptr_t>int(init_value)

    def __int__(self):
        return <uintptr_t>self._value

    def __index__(self):
        return <uintptr_t>self._value

    def __bool__(self):
        return self._value != NULL

    def __eq__(self, other):
        if isinstance(other, Handle):
            return type(self) is type(other) and self._value == (<Handle>other)._value
        if isinstance(other, int):
            return <uintptr_t>self._value == other
        return NotImplemented

    def __hash__(self):
        # Equal to an int of the same value, so hashes like it.
        return hash(<uintptr_t>self._value)

    def __repr__(self):
        return f"<{type(self).__name__} {<uintptr_t>self._value:#x}>"

    def getPtr(self):
        """Address of the handle's storage (a pointer to the handle)."""
        return <uintptr_t>&self._value

    def __reduce__(self):
        return (type(self), (<uintptr_t>self._value,))


cdef class Struct:
    """Base of the struct and union classes."""

    def getPtr(self):
        """Address of the C struct."""
        return <uintptr_t>self._ptr


cdef void* handle_value_other(object obj, type cls, str name) except? NULL:
    if type(obj) is cls:
        return (<Handle>obj)._value
    if obj is None:
        return NULL
    if isinstance(obj, cls):
        return (<Handle>obj)._value
    if isinstance(obj, int):
        if obj < 0:
            raise ValueError(f"{name}: a {cls.__name__} address cannot be negative ({obj})")
        return <void*><uintptr_t>obj
    if isinstance(obj, Handle):
        # The runtime's and the driver's classes for one C type (cudaStream_t, CUstream) mix.
        if getattr(type(obj), "_c_type", None) == getattr(cls, "_c_type", 0):
            return (<Handle>obj)._value
        raise TypeError(f"{name}: expected {cls.__name__}, an int or None, got {type(obj).__name__}")
    try:
        value = obj.__index__()
    except AttributeError:
        raise TypeError(f"{name}: expected {cls.__name__}, an int or None, got {type(obj).__name__}") from None
    cdef uintptr_t address = value
    return <void*>address


cdef int not_live(object obj, str name, str type_name, str made_by, str destroyed_by) except -1:
    raise ValueError(f"{name}: {obj!r} is not a live {type_name}: {made_by} made no such handle in this process "
                     f"(through cubind), or {destroyed_by} has destroyed it")


cdef object new_handle(type cls, void* value):
    cdef Handle h = cls.__new__(cls)
    h._value = value
    return h


cdef void set_handle(Handle h, void* value) noexcept:
    h._value = value


cdef void* struct_pointer(object obj, type cls, str name) except? NULL:
    if obj is None:
        return NULL
    if isinstance(obj, cls):
        return (<Struct>obj)._ptr
    raise TypeError(f"{name}: expected {cls.__name__} or None, got {type(obj).__name__}")


cdef void* struct_pointer_required(object obj, type cls, str name) except NULL:
    if isinstance(obj, cls):
        return (<Struct>obj)._ptr
    raise TypeError(f"{name}: expected {cls.__name__}, got {type(obj).__name__}")


cdef int detach_views(object items, void* start, size_t size, Py_ssize_t n) except -1:
    cdef char* lo = <char*>start
    cdef char* hi = lo + size * <size_t>n
    cdef Struct s
    cdef void* p
    for item in items:
        s = <Struct?>item
        if not s._own and lo <= <char*>s._ptr < hi:
            p = alloc_struct(size)
            memcpy(p, s._ptr, size)
            s._ptr = p
            s._own = True
            s._owner = None
    return 0


cdef extern from "<stdlib.h>" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)


cdef void* alloc_struct(size_t size) except NULL:
    cdef void* p = NULL
    # 64 bytes covers every alignment the CUDA headers ask for (double4_32a: 32).
    if posix_memalign(&p, 64, size if size > 0 else 1) != 0:
        raise MemoryError(f"cannot allocate a struct of {size} bytes")
    memset(p, 0, size)
    return p


cdef void free_struct(void* ptr) noexcept:
    free(ptr)


cdef int adopt_memory(Struct obj, size_t address, Py_ssize_t n, size_t size, object owner) except -1:
    if owner is None:
        if n != 1:
            free_struct(obj._ptr)
            obj._ptr = NULL
            obj._own = False
            obj._ptr = alloc_struct(<size_t>n * size)
            obj._own = True
        memcpy(obj._ptr, <const void*>address, <size_t>n * size)
    else:
        free_struct(obj._ptr)
        obj._own = False
        obj._ptr = <void*>address
        obj._owner = owner
    return 0


cdef size_t buffer_address(object view) except? 0:
    cdef Py_buffer b
    PyObject_GetBuffer(view, &b, PyBUF_SIMPLE)
    cdef size_t address = <size_t>b.buf
    PyBuffer_Release(&b)
    return address
