# cython: language_level=3, boundscheck=False, wraparound=False
"""void * values whose C type an attribute parameter selects (cuPointerGetAttribute's data)."""

cimport cython
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset

from cubind.bindings._support.conversions cimport alloc_array, as_int, c_string, plain_address
from cubind.bindings._support.fields cimport array_assign, char_array_assign
from cubind.bindings._support.handles cimport Struct, handle_value, new_handle, struct_pointer_required
from cubind.bindings._support.scalars cimport load_scalar, store_scalar


# spec: (kind, size, format, cls, count);
# count 0 means as many as the size hint holds.

_TYPED_KINDS = {"scalar": TYPED_SCALAR, "enum": TYPED_WRAPPED, "value": TYPED_WRAPPED, "handle": TYPED_HANDLE, "pointer": TYPED_POINTER,
                "struct": TYPED_STRUCT, "bytes": TYPED_BYTES, "bool": TYPED_BOOL}


cdef class TypedSpec:
    """The C type of one attribute's value (kind, element size, format, class, count)."""


# An enum class's value -> member dict (None for the classes of values, CUdeviceptr),
# so that a value read back is its member by one lookup, not a call of the class.
cdef dict _MEMBERS_BY_CLASS = {}


cdef object _wrapped(object cls, object value):
    by_value = _MEMBERS_BY_CLASS.get(cls, False)
    if by_value is False:
        by_value = cls.__dict__.get("_value2member_") if isinstance(cls, type) else None
        _MEMBERS_BY_CLASS[cls] = by_value
    if by_value is not None:
        member = (<dict>by_value).get(value)
        if member is not None:
            return member
    return cls(value)  # an unknown value gets a member of its own; a value class wraps it


cdef TypedSpec typed_spec(tuple spec, object cls):
    # spec: (kind, size, format or None, class name or class, count) from a module's table;
    # cls: the class itself, resolved by the module.
    kind, size, fmt, _, count = spec
    cdef TypedSpec s = TypedSpec.__new__(TypedSpec)
    s.kind = _TYPED_KINDS[kind]
    s.size = size
    s.fmt = (<str>fmt).encode()[0] if fmt is not None else 0
    s.cls = cls
    s.count = count
    return s


# One per call of an attribute getter (cuPointerGetAttribute): a free list spares the allocator.
@cython.freelist(8)
cdef class TypedValue:
    """Storage for a void * value whose C type an attribute selects."""

    def __dealloc__(self):
        if self._buf != self._inline:
            free(self._buf)

    cdef _store(self, object value, str name):
        cdef Py_ssize_t i
        cdef TypedSpec spec = self._spec
        values = list(value) if self._count > 1 and not isinstance(value, (bytes, str, Struct)) else [value]
        if len(values) > self._count:
            raise ValueError(f"{name}: expected at most {self._count} values, got {len(values)}")
        for i in range(len(values)):
            v = values[i]
            if spec.kind == TYPED_STRUCT:
                memcpy(self._buf + i * spec.size, struct_pointer_required(v, spec.cls, name), spec.size)
            elif spec.kind == TYPED_HANDLE:
                (<void**>self._buf)[i] = handle_value(v, spec.cls, name)
            elif spec.kind == TYPED_POINTER:
                (<void**>self._buf)[i] = plain_address(v, name)
            elif spec.kind == TYPED_BYTES and isinstance(v, (bytes, bytearray, str)):
                # A C string (CU_COREDUMP_FILE: b"corefile"), as cuda.bindings
                # takes it; the size passed is its length with the NUL.
                data = v.encode() if isinstance(v, str) else bytes(v)
                if len(data) >= spec.size * self._count:
                    raise ValueError(f"{name}: at most {spec.size * self._count - 1} bytes and a NUL, got {len(data)}")
                char_array_assign(self._buf, spec.size * self._count, data, True, name)
                self.nbytes = len(data) + 1
            elif spec.kind == TYPED_BYTES:
                array_assign(self._buf, spec.size * self._count, 1, "b", v, name)
            elif spec.kind == TYPED_BOOL:
                # Any truth value (True, 1, numpy.bool_), as cuda.bindings takes it.
                store_scalar(self._buf + i * spec.size, spec.fmt, 1 if v else 0)
            elif spec.fmt == b"f" or spec.fmt == b"d":
                store_scalar(self._buf + i * spec.size, spec.fmt, float(v))
            else:
                store_scalar(self._buf + i * spec.size, spec.fmt, as_int(v, name))

    cdef object _element(self, Py_ssize_t i):
        cdef TypedSpec spec = self._spec
        if spec.kind == TYPED_SCALAR:
            return load_scalar(self._buf + i * spec.size, spec.fmt)
        if spec.kind == TYPED_BOOL:
            return load_scalar(self._buf + i * spec.size, spec.fmt) != 0
        if spec.kind == TYPED_WRAPPED:
            return _wrapped(spec.cls, load_scalar(self._buf + i * spec.size, spec.fmt))
        if spec.kind == TYPED_HANDLE:
            return new_handle(spec.cls, (<void**>self._buf)[i])
        if spec.kind == TYPED_POINTER:
            return <uintptr_t>(<void**>self._buf)[i]
        obj = spec.cls()
        memcpy((<Struct>obj)._ptr, self._buf + i * spec.size, spec.size)
        return obj

    cpdef object value(self):
        """The value the call wrote: one element, or a list of count elements."""
        cdef Py_ssize_t i
        if self._spec.kind == TYPED_BYTES:
            return c_string(self._buf, self._spec.size * self._count)
        if self._spec.count == 1:
            return self._element(0)
        return [self._element(i) for i in range(self._count)]


cdef TypedValue typed_value(TypedSpec spec, object value, str name, Py_ssize_t size_hint):
    # Storage for one attribute's value: size_hint bytes for a caller-sized
    # value (count 0), else count elements; `value` (not None) is stored.
    cdef TypedValue tv = TypedValue.__new__(TypedValue)
    cdef Py_ssize_t n = spec.count
    if n == 0:
        n = max(size_hint // spec.size, 1) if size_hint else 1
    tv._spec = spec
    tv._count = n
    tv.nbytes = spec.size * n
    cdef Py_ssize_t total = max(spec.size * n, size_hint, 8)
    if total <= sizeof(tv._inline):
        memset(tv._inline, 0, sizeof(tv._inline))
        tv._buf = tv._inline
    else:
        tv._buf = <char*>alloc_array(total, 1)
    tv.ptr = tv._buf
    if value is not None:
        tv._store(value, name)
    return tv
