# cython: language_level=3, boundscheck=False, wraparound=False
"""Fields of the struct classes that need more than a C assignment: pointer
fields (and what they keep alive) and array fields (views that write through)."""

from cpython.buffer cimport PyObject_CheckBuffer
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset

from cubind.bindings._support.buffers cimport BufferRef, address, release_address
from cubind.bindings._support.conversions cimport alloc_array, plain_address
from cubind.bindings._support.handles cimport Handle, Struct, struct_pointer_required


cdef void keep(Struct owner, str name, object value):
    if owner._refs is None:
        owner._refs = {}
    if value is None:
        owner._refs.pop(name, None)
    else:
        owner._refs[name] = value


# The pointer fields below change what the struct keeps only once the new
# value is accepted: a refused value leaves the field and what it points at
# as they were.
cdef void* field_address(object value, Struct owner, str name) except? NULL:
    cdef void* p
    if not (value is None or isinstance(value, (int, Handle, Struct))) and PyObject_CheckBuffer(value):
        # The struct holds the buffer export until the field changes, so the
        # object cannot be resized under the pointer.
        pinned = _Pinned(value, name)
        keep(owner, name, pinned)
        return (<_Pinned>pinned).ref.view.buf
    p = plain_address(value, name)
    keep(owner, name, value if isinstance(value, Struct) else None)
    return p


cdef class _Pinned:
    """A buffer export held for as long as this object lives."""
    cdef BufferRef ref
    cdef object obj

    def __cinit__(self, obj, str name):
        self.ref.held = False
        address(obj, &self.ref, False, name)
        self.obj = obj

    def __dealloc__(self):
        release_address(&self.ref)


cdef class _StructArray:
    """Contiguous copies of struct values, for a pointer field."""
    cdef char* data

    def __dealloc__(self):
        free(self.data)


cdef void* struct_array_field(object value, type cls, size_t size, Struct owner, str name) except? NULL:
    cdef _StructArray array
    cdef Py_ssize_t i, n
    cdef void* p
    if value is None or isinstance(value, (int, Struct)):
        if isinstance(value, Struct) and not isinstance(value, cls):
            raise TypeError(f"{name}: expected {cls.__name__}, a sequence of them, an address or None, "
                            f"got {type(value).__name__}")
        p = plain_address(value, name)
        keep(owner, name, value if isinstance(value, Struct) else None)
        return p
    try:
        n = len(value)
    except TypeError:
        raise TypeError(f"{name}: expected {cls.__name__}, a sequence of them, an address or None, "
                        f"got {type(value).__name__}") from None
    array = _StructArray()
    array.data = <char*>alloc_array(n, size)
    for i in range(n):
        memcpy(array.data + i * size, struct_pointer_required(value[i], cls, f"{name}[{i}]"), size)
    keep(owner, name, array)
    return array.data


cdef class _ArrayView:
    """Exports n items at an address as a buffer, keeping their owner alive."""
    cdef void* _ptr
    cdef Py_ssize_t _n
    cdef Py_ssize_t _itemsize
    cdef bytes _fmt
    cdef object _owner
    cdef Py_ssize_t _shape[1]
    cdef Py_ssize_t _strides[1]

    def __getbuffer__(self, Py_buffer* buf, int flags):
        self._shape[0] = self._n
        self._strides[0] = self._itemsize
        buf.buf = self._ptr
        buf.obj = self
        buf.len = self._n * self._itemsize
        buf.itemsize = self._itemsize
        buf.readonly = 0
        buf.ndim = 1
        buf.format = <char*>self._fmt
        buf.shape = self._shape
        buf.strides = self._strides
        buf.suboffsets = NULL
        buf.internal = NULL

    def __releasebuffer__(self, Py_buffer* buf):
        pass


cdef object array_view(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, str fmt, object owner):
    cdef _ArrayView v = _ArrayView.__new__(_ArrayView)
    v._ptr = ptr
    v._n = n
    v._itemsize = itemsize
    v._fmt = fmt.encode()
    v._owner = owner
    return memoryview(v)


cdef int array_assign(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, str fmt, object value, str name) except -1:
    view = array_view(ptr, n, itemsize, fmt, None)
    if fmt in ("b", "B") and isinstance(value, (bytes, bytearray, memoryview, str)):
        data = value.encode() if isinstance(value, str) else bytes(value)
        if len(data) > n:
            raise ValueError(f"{name}: {len(data)} bytes do not fit in {n}")
        memset(ptr, 0, n * itemsize)
        memcpy(ptr, <const char*>data, len(data))
        return 0
    items = list(value)
    if len(items) != n:
        raise ValueError(f"{name}: expected {n} items, got {len(items)}")
    for i in range(n):
        view[i] = items[i]
    return 0
