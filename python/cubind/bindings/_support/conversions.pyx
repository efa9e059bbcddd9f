# cython: language_level=3, boundscheck=False, wraparound=False
"""Small conversions of Python arguments used by the generated code: ints,
bytes, counts, plain addresses, arrays and NUL-terminated text."""

from libc.stdint cimport uintptr_t
from libc.stdlib cimport calloc

from cubind.bindings._support.handles cimport Handle, Struct

from operator import index as _index


cdef object as_int(object obj, str name):
    if isinstance(obj, int):
        return obj
    try:
        return _index(obj)
    except TypeError:
        raise TypeError(f"{name}: expected an int, got {type(obj).__name__}") from None


cdef bytes as_bytes(object obj, str name):
    if isinstance(obj, bytes):
        return <bytes>obj
    if isinstance(obj, str):
        return (<str>obj).encode()
    if isinstance(obj, (bytearray, memoryview)):
        return bytes(obj)
    raise TypeError(f"{name}: expected bytes or str, got {type(obj).__name__}")


cdef Py_ssize_t check_count(object seq, Py_ssize_t count, str name, str count_name) except -1:
    if count < 0:
        raise ValueError(f"{count_name} cannot be negative ({count})")
    if count == 0:
        return 0
    if seq is None:
        raise ValueError(f"{name} is None but {count_name} is {count}")
    cdef Py_ssize_t n = len(seq)
    if n < count:
        raise ValueError(f"{name} has {n} item(s) but {count_name} is {count}")
    return n


cdef void* alloc_array(Py_ssize_t count, size_t itemsize) except NULL:
    if count < 0:
        raise ValueError(f"a count cannot be negative ({count})")
    cdef void* p = calloc(<size_t>count if count > 0 else 1, itemsize if itemsize > 0 else 1)
    if p == NULL:
        raise MemoryError(f"cannot allocate {count} x {itemsize} bytes")
    return p


cdef void* plain_address(object obj, str name) except? NULL:
    if obj is None:
        return NULL
    if isinstance(obj, Handle):
        return (<Handle>obj)._value
    if isinstance(obj, Struct):
        return (<Struct>obj)._ptr
    value = as_int(obj, name)
    if value < 0:
        raise ValueError(f"{name}: an address cannot be negative ({value})")
    return <void*><uintptr_t>value


cdef bytes c_string(const char* buf, Py_ssize_t n):
    cdef Py_ssize_t i = 0
    while i < n and buf[i] != 0:
        i += 1
    return buf[:i]
