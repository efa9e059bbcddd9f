# cython: language_level=3, boundscheck=False, wraparound=False
"""Addresses of void * parameters: None, an int, a handle, a struct, or an
object exporting a contiguous buffer, held for the duration of one call."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.buffer cimport PyBUF_ANY_CONTIGUOUS, PyBUF_WRITABLE, PyObject_CheckBuffer, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport uintptr_t

from cubind.bindings._support.handles cimport Handle, Struct


cdef void* address(object obj, BufferRef* ref, bint writable, str name) except? NULL:
    ref.held = False
    if obj is None:
        return NULL
    if isinstance(obj, int):
        if obj < 0:
            raise ValueError(f"{name}: an address cannot be negative ({obj})")
        return <void*><uintptr_t>obj
    if PyObject_CheckBuffer(obj):
        flags = PyBUF_ANY_CONTIGUOUS | (PyBUF_WRITABLE if writable else 0)
        try:
            PyObject_GetBuffer(obj, &ref.view, flags)
        except (BufferError, ValueError) as e:
            what = "a writable contiguous buffer" if writable else "a contiguous buffer"
            raise TypeError(f"{name}: {type(obj).__name__} is not {what} ({e})") from None
        ref.held = True
        return ref.view.buf
    if isinstance(obj, Struct):
        return (<Struct>obj)._ptr
    if isinstance(obj, Handle):
        return (<Handle>obj)._value
    try:
        value = obj.__index__()
    except AttributeError:
        raise TypeError(f"{name}: expected an address (int), a buffer or None, got {type(obj).__name__}") from None
    cdef uintptr_t address = value
    return <void*>address


cdef object sized_output(object obj, size_t n, BufferRef* ref, void** ptr, str name, str reported_by):
    # The buffer a call fills with the n bytes `reported_by` announced: a new
    # bytearray when obj is None, else the caller's, which must hold them. A
    # bytes object is filled in place, as programs written for cuda.bindings
    # expect (`ptx = b" " * size`). Sets *ptr; returns the buffer (release ref
    # afterwards).
    ref.held = False
    if obj is None:
        obj = bytearray(n)
    elif isinstance(obj, bytes):
        ptr[0] = writable_bytes(<bytes>obj, n, name, reported_by)
        return obj
    ptr[0] = address(obj, ref, True, name)
    if ref.held and <size_t>ref.view.len < n:
        release_address(ref)
        raise ValueError(f"{name} holds {len(obj)} bytes; {reported_by} reports {n}")
    return obj


# Where a call that reports 0 bytes writes them: never a caller's bytes object.
cdef char _nothing[8]


cdef char* writable_bytes(bytes obj, size_t n, str name, str reported_by) except NULL:
    cdef Py_ssize_t length = PyBytes_GET_SIZE(obj)
    cdef char* data = PyBytes_AS_STRING(obj)
    if n == 0:
        # b"" (b" " * 0) for an empty output: nothing to fill, as in cuda.bindings.
        return _nothing
    # The empty bytes and every one-byte bytes made from a literal or a slice
    # are objects the interpreter shares: writing one would change that value
    # everywhere in the process.
    if length == 0 or (length == 1 and PyBytes_FromStringAndSize(data, 1) is obj):
        raise ValueError(f"{name}: a bytes object of length {length} is shared by the interpreter and cannot be "
                         f"filled; pass a bytearray or bytes made for the call (b\" \" * size, size > 1)")
    if <size_t>length < n:
        raise ValueError(f"{name} holds {length} bytes; {reported_by} reports {n}")
    return data


cdef void release_address(BufferRef* ref) noexcept:
    if ref.held:
        ref.held = False
        PyBuffer_Release(&ref.view)
