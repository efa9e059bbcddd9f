# Small conversions of Python arguments used by the generated code.
from cpython.long cimport PyLong_Check, PyLong_CheckExact


cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object obj, int* overflow) except? -1


# The value of an int of at most one digit (|value| < 2**30), read in place:
# the common argument converts without a call into the interpreter.
cdef extern from *:
    """
    static inline int cubind_compact_int(PyObject* o, long long* out) {
    #if PY_VERSION_HEX >= 0x030C0000
        if (PyUnstable_Long_IsCompact((PyLongObject*)o)) {
            *out = (long long)PyUnstable_Long_CompactValue((PyLongObject*)o);
            return 1;
        }
    #else
        Py_ssize_t size = Py_SIZE(o);
        if (size == 0) { *out = 0; return 1; }
        if (size == 1) { *out = (long long)((PyLongObject*)o)->ob_digit[0]; return 1; }
        if (size == -1) { *out = -(long long)((PyLongObject*)o)->ob_digit[0]; return 1; }
    #endif
        return 0;
    }
    """
    bint cubind_compact_int(object o, long long* out)

# An int from an int or an object with __index__ (TypeError naming `name`).
cdef object as_int(object obj, str name)

# bytes for a const char* parameter (str is encoded as UTF-8).
cdef bytes as_bytes(object obj, str name)

# Checks that a sequence holds at least `count` items.
cdef Py_ssize_t check_count(object seq, Py_ssize_t count, str name, str count_name) except -1

# Zeroed memory for `count` items (MemoryError when it cannot be had).
cdef void* alloc_array(Py_ssize_t count, size_t itemsize) except NULL

# An address from an int, None, a handle or a struct (no buffers: nothing keeps them alive).
cdef void* plain_address(object obj, str name) except? NULL

# bytes up to the first NUL among n.
cdef bytes c_string(const char* buf, Py_ssize_t n)

# Checks a list argument against its count: a list or tuple (not bytes or
# str) of at least `count` items; more are allowed, as the library reads
# only `count`. Returns its length.
cdef Py_ssize_t check_list(object seq, Py_ssize_t count, str name, str count_name, str what) except -1

# Integer arguments of nbytes bytes, converted as cuda.bindings converts them
# (int, __index__, float truncated; OverflowError out of range), the errors
# naming the parameter. The inline part reads an int of one digit in range,
# and is small enough that the compiler inlines every use of it in a call of
# many arguments; the *_slow functions take every other value.
cdef long long signed_slow(object obj, int nbytes, str name) except? -1
cdef unsigned long long unsigned_slow(object obj, int nbytes, str name) except? <unsigned long long>-1


cdef inline long long signed_arg(object obj, int nbytes, str name) except? -1:
    cdef long long v
    if (PyLong_CheckExact(obj) and cubind_compact_int(obj, &v)
            and (nbytes >= 4 or (-(1LL << (8 * nbytes - 1)) <= v < (1LL << (8 * nbytes - 1))))):
        return v
    return signed_slow(obj, nbytes, name)


cdef inline unsigned long long unsigned_arg(object obj, int nbytes, str name) except? <unsigned long long>-1:
    cdef long long v
    if (PyLong_CheckExact(obj) and cubind_compact_int(obj, &v) and v >= 0
            and (nbytes >= 4 or v < (1LL << (8 * nbytes)))):
        return <unsigned long long>v
    return unsigned_slow(obj, nbytes, name)


# An enum argument: a member (an int subclass) or an int of one digit is read
# in place; anything else goes through as_int (TypeError naming `name`).
cdef inline long long enum_arg(object obj, str name) except? -1:
    cdef long long v
    if PyLong_Check(obj) and cubind_compact_int(obj, &v):
        return v
    return <long long>as_int(obj, name)
