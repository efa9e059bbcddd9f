# Small conversions of Python arguments used by the generated code: ints,
# bytes, counts, plain addresses, arrays and NUL-terminated text.

from cpython.number cimport PyNumber_Index as _index
from libc.stdint cimport uintptr_t
from libc.stdlib cimport calloc

# _index is operator.index from C: the module imports no operator (a third of
# a millisecond of every import of the bindings). The later .pxi files use it.


cdef object as_int(object obj, str name):
    if isinstance(obj, int):
        return obj
    try:
        return _index(obj)
    except TypeError:
        raise TypeError(f"{name}: expected an int, got {type(obj).__name__}") from None


cdef object _integer(object obj, str name):
    # An integer argument as cuda.bindings converts it: a float truncates (a
    # grid size written n / 256).
    if isinstance(obj, float):
        return _truncate(<double>obj, name)
    return as_int(obj, name)


cdef object _truncate(double value, str name):
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}: {value} is not a number") from None
    except OverflowError:
        raise OverflowError(f"{name}: {value} cannot be converted to an int") from None


cdef long long signed_slow(object obj, int nbytes, str name) except? -1:
    cdef int overflow = 0
    cdef long long v
    if PyLong_CheckExact(obj):
        # An int of more than one digit that fits a long long.
        v = PyLong_AsLongLongAndOverflow(obj, &overflow)
        if overflow == 0 and (nbytes >= 8 or (-(1LL << (8 * nbytes - 1)) <= v < (1LL << (8 * nbytes - 1)))):
            return v
    value = _integer(obj, name)
    cdef object bits = 8 * nbytes  # Python ints: 1 << 64 does not fit a C int
    lo = -(1 << (bits - 1))
    hi = (1 << (bits - 1)) - 1
    if not lo <= value <= hi:
        raise OverflowError(f"{name}: {value} does not fit in a {8 * nbytes}-bit signed int ({lo}..{hi})")
    return value


cdef unsigned long long unsigned_slow(object obj, int nbytes, str name) except? <unsigned long long>-1:
    cdef int overflow = 0
    cdef long long v
    if PyLong_CheckExact(obj):
        # An int of more than one digit that fits a long long.
        v = PyLong_AsLongLongAndOverflow(obj, &overflow)
        if overflow == 0 and v >= 0 and (nbytes >= 8 or v < (1LL << (8 * nbytes))):
            return <unsigned long long>v
    value = _integer(obj, name)
    if value < 0:
        raise OverflowError(f"{name}: {value} is negative; expected an unsigned int")
    cdef object bits = 8 * nbytes
    hi = (1 << bits) - 1
    if value > hi:
        raise OverflowError(f"{name}: {value} does not fit in a {8 * nbytes}-bit unsigned int (0..{hi})")
    return value


class CountError(ValueError, RuntimeError):
    """A list shorter than its count. A ValueError, and a RuntimeError as
    cuda.bindings raises for it."""


cdef Py_ssize_t check_list(object seq, Py_ssize_t count, str name, str count_name, str what) except -1:
    cdef Py_ssize_t n
    if type(seq) is list or type(seq) is tuple:
        n = len(seq)
        if 0 <= count <= n:
            return n
    return _check_list_slow(seq, count, name, count_name, what)


cdef Py_ssize_t _check_list_slow(object seq, Py_ssize_t count, str name, str count_name, str what) except -1:
    if count < 0:
        raise ValueError(f"{count_name} cannot be negative ({count})")
    if seq is None:
        if count == 0:
            return 0
        raise ValueError(f"{name} is None but {count_name} is {count}")
    if isinstance(seq, (bytes, str, bytearray, memoryview)):
        raise TypeError(f"{name}: expected a list of {what}, got {type(seq).__name__} (put it in a list: [{name}])")
    if count == 0:
        return 0  # nothing is read (an address given for an empty list included)
    cdef Py_ssize_t n
    try:
        n = len(seq)
    except TypeError:
        raise TypeError(f"{name}: expected a list of {what}, got {type(seq).__name__}") from None
    if n < count:
        raise CountError(f"{name} has {n} item(s) but {count_name} is {count}")
    return n


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
