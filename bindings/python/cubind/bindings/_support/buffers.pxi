# Addresses of void * parameters: None, an int, a handle, a struct, or an
# object exporting a contiguous buffer, held for the duration of one call.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.buffer cimport PyBUF_ANY_CONTIGUOUS, PyBUF_WRITABLE, PyObject_CheckBuffer, PyBuffer_Release, PyObject_GetBuffer
from libc.stdint cimport uintptr_t



cdef void* address_other(object obj, BufferRef* ref, bint writable, str name) except? NULL:
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
    # bytearray when obj is None, else the caller's, which must own memory
    # for them: bytes (filled in place, as programs written for cuda.bindings
    # expect: `ptx = b" " * size`) or an object exporting a writable buffer.
    # Never a bare int: an address says nothing of the memory behind it.
    # Sets *ptr; returns the buffer (release ref afterwards).
    ref.held = False
    if obj is None:
        obj = bytearray(n)
    elif isinstance(obj, bytes):
        ptr[0] = writable_bytes(<bytes>obj, n, name, reported_by)
        return obj
    elif not PyObject_CheckBuffer(obj):
        raise TypeError(f"{name}: expected bytes, a bytearray or another writable buffer of {n} bytes, "
                        f"{type(obj).__name__} found")
    ptr[0] = address(obj, ref, True, name)
    cdef Py_ssize_t held = ref.view.len
    if <size_t>held < n:
        release_address(ref)
        raise ValueError(f"{name} holds {held} bytes; {reported_by} reports {n}")
    return obj


cdef void* caller_buffer(object obj, size_t n, BufferRef* ref, str name, str size_name) except? NULL:
    # cuda.bindings declares such a parameter char *, so its programs pass
    # bytes (b" " * size) and read them after the call: bytes are filled in
    # place, a shared one (0 or 1 byte) never. A bytearray or another
    # writable buffer works as well. An int is refused as cuda.bindings
    # refuses it: an address says nothing of the memory behind it.
    ref.held = False
    if obj is None:
        return NULL
    cdef Py_ssize_t length
    if isinstance(obj, bytes):
        length = PyBytes_GET_SIZE(<bytes>obj)
        if <size_t>length < n and n > 1:
            raise ValueError(f"{name} holds {length} bytes but {size_name} is {n}")
        return writable_bytes(<bytes>obj, n, name, size_name)
    if not PyObject_CheckBuffer(obj):
        raise TypeError(f"{name}: expected bytes, a bytearray or another writable buffer of {n} bytes, "
                        f"{type(obj).__name__} found")
    cdef void* ptr = address(obj, ref, True, name)
    if <size_t>ref.view.len < n:
        length = ref.view.len
        release_address(ref)
        raise ValueError(f"{name} holds {length} bytes but {size_name} is {n}")
    return ptr


# Where a call writes an output of at most one byte (nothing, or the NUL of an
# empty log) that the caller passed in a bytes object the interpreter shares:
# one per thread, since the call runs without the GIL.
cdef extern from *:
    """
    #ifdef __cplusplus
    static thread_local char cubind_private_bytes[8];
    #else
    static _Thread_local char cubind_private_bytes[8];
    #endif
    """
    char* private_bytes "cubind_private_bytes"


cdef char* writable_bytes(bytes obj, size_t n, str name, str reported_by) except NULL:
    cdef Py_ssize_t length = PyBytes_GET_SIZE(obj)
    cdef char* data = PyBytes_AS_STRING(obj)
    # The empty bytes and every one-byte bytes made from a literal, a slice or
    # b" " * 1 are objects the interpreter shares: writing one would change
    # that value everywhere in the process. An output of 0 bytes (b" " * 0) or
    # of 1 (b" " * 1: only the NUL of an empty log) goes to a private byte
    # instead; the caller's object keeps its value, which holds no more than
    # the NUL would have.
    if n == 0:
        return private_bytes
    if length == 0 or (length == 1 and PyBytes_FromStringAndSize(data, 1) is obj):
        if n == 1:
            return private_bytes
        raise ValueError(f"{name} holds {length} bytes; {reported_by} reports {n}")
    if <size_t>length < n:
        raise ValueError(f"{name} holds {length} bytes; {reported_by} reports {n}")
    return data


cdef void release_address(BufferRef* ref) noexcept:
    if ref.held:
        ref.held = False
        PyBuffer_Release(&ref.view)
