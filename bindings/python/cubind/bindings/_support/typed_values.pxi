# void * values whose C type an attribute parameter selects (cuPointerGetAttribute's data).

cimport cython
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memset



# spec: (kind, size, format, cls, count);
# count 0 means as many as the size hint holds.

_TYPED_KINDS = {"scalar": TYPED_SCALAR, "enum": TYPED_WRAPPED, "value": TYPED_WRAPPED, "handle": TYPED_HANDLE, "pointer": TYPED_POINTER,
                "struct": TYPED_STRUCT, "bytes": TYPED_BYTES, "bool": TYPED_BOOL}


cdef class TypedSpec:
    """The C type of one attribute's value (kind, element size, format, class, count)."""


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
    # An enum class's value -> member dict (None for the classes of values,
    # CUdeviceptr), so that a value read back is its member by one lookup,
    # not a call of the class.
    s.members = None
    if s.kind == TYPED_WRAPPED and isinstance(cls, type):
        members = cls.__dict__.get("_value2member_")
        if type(members) is dict:
            s.members = <dict>members
    return s


cdef class TypedTable:
    """One attribute enum's value types (its C value -> TypedSpec)."""

    def __init__(self, str enum_name, dict entries, EnumTable enums):
        self.enum_name = enum_name
        self.entries = entries
        self.enums = enums
        self._last_key = 0
        self._last = None

    cdef TypedSpec spec(self, long long key, str name):
        # name: the value's parameter, for the error of an attribute the table lacks.
        if self._last is not None and key == self._last_key:
            return self._last
        found = self.entries.get(key)
        if found is None:
            raise ValueError(f"{name}: {self.enum_name} value {key} has no known value type")
        if type(found) is tuple:
            cls = (<tuple>found)[3]
            found = typed_spec(<tuple>found, self.enums.enum_class(cls) if isinstance(cls, str) else cls)
            self.entries[key] = found
        self._last = <TypedSpec>found
        self._last_key = key
        return <TypedSpec>found


cdef int _store_typed(TypedSlot* slot, TypedSpec spec, object value, str name) except -1:
    cdef Py_ssize_t i
    values = list(value) if slot.count > 1 and not isinstance(value, (bytes, str, Struct)) else [value]
    if len(values) > slot.count:
        raise ValueError(f"{name}: expected at most {slot.count} values, got {len(values)}")
    for i in range(len(values)):
        v = values[i]
        if spec.kind == TYPED_STRUCT:
            memcpy(slot.buf + i * spec.size, struct_pointer_required(v, spec.cls, name), spec.size)
        elif spec.kind == TYPED_HANDLE:
            (<void**>slot.buf)[i] = handle_value(v, spec.cls, name)
        elif spec.kind == TYPED_POINTER:
            (<void**>slot.buf)[i] = plain_address(v, name)
        elif spec.kind == TYPED_BYTES and isinstance(v, (bytes, bytearray, str)):
            # A C string (CU_COREDUMP_FILE: b"corefile"), as cuda.bindings
            # takes it; the size passed is its length with the NUL.
            data = v.encode() if isinstance(v, str) else bytes(v)
            if len(data) >= spec.size * slot.count:
                raise ValueError(f"{name}: at most {spec.size * slot.count - 1} bytes and a NUL, got {len(data)}")
            char_array_assign(slot.buf, spec.size * slot.count, data, True, name)
            slot.nbytes = len(data) + 1
        elif spec.kind == TYPED_BYTES:
            array_assign(slot.buf, spec.size * slot.count, 1, "b", v, name)
        elif spec.kind == TYPED_BOOL:
            # Any truth value (True, 1, numpy.bool_), as cuda.bindings takes it.
            store_scalar(slot.buf + i * spec.size, spec.fmt, 1 if v else 0)
        elif spec.fmt == b"f" or spec.fmt == b"d":
            store_scalar(slot.buf + i * spec.size, spec.fmt, float(v))
        else:
            store_scalar(slot.buf + i * spec.size, spec.fmt, as_int(v, name))
    return 0


cdef object _element(const TypedSlot* slot, TypedSpec spec, Py_ssize_t i):
    if spec.kind == TYPED_SCALAR:
        return load_scalar(slot.buf + i * spec.size, spec.fmt)
    if spec.kind == TYPED_BOOL:
        return load_scalar(slot.buf + i * spec.size, spec.fmt) != 0
    if spec.kind == TYPED_WRAPPED:
        value = load_scalar(slot.buf + i * spec.size, spec.fmt)
        member = spec.members.get(value) if spec.members is not None else None
        # An unknown value gets a member of its own; a value class wraps it.
        return member if member is not None else spec.cls(value)
    if spec.kind == TYPED_HANDLE:
        return new_handle(spec.cls, (<void**>slot.buf)[i])
    if spec.kind == TYPED_POINTER:
        return <uintptr_t>(<void**>slot.buf)[i]
    obj = spec.cls()
    memcpy((<Struct>obj)._ptr, slot.buf + i * spec.size, spec.size)
    return obj


cdef int typed_init_other(TypedSlot* slot, TypedSpec spec, object value, str name, Py_ssize_t size_hint) except -1:
    # typed_init's general way. slot.buf is NULL until the storage is in
    # place, so that typed_release is safe after a failure here.
    cdef Py_ssize_t n = spec.count
    if n == 0:
        n = max(size_hint // spec.size, 1) if size_hint else 1
    slot.count = n
    slot.nbytes = spec.size * n
    cdef Py_ssize_t total = max(spec.size * n, size_hint, 8)
    if total <= sizeof(slot.inline_):
        memset(slot.inline_, 0, sizeof(slot.inline_))
        slot.buf = slot.inline_
    else:
        slot.buf = <char*>alloc_array(total, 1)
    slot.ptr = slot.buf
    if value is not None:
        _store_typed(slot, spec, value, name)
    return 0


cdef object typed_read_other(const TypedSlot* slot, TypedSpec spec):
    # typed_read's general way.
    cdef Py_ssize_t i
    if spec.kind == TYPED_BYTES:
        return c_string(slot.buf, spec.size * slot.count)
    if spec.count == 1:
        return _element(slot, spec, 0)
    return [_element(slot, spec, i) for i in range(slot.count)]


# One per attribute of a list of them (cuPointerGetAttributes); a free list
# spares the allocator.
@cython.freelist(8)
cdef class TypedValue:
    """Storage for a void * value whose C type an attribute selects."""

    def __dealloc__(self):
        typed_release(&self.slot)

    cpdef object value(self):
        """The value the call wrote: one element, or a list of count elements."""
        return typed_read(&self.slot, self._spec)


cdef TypedValue typed_value(TypedSpec spec, object value, str name, Py_ssize_t size_hint):
    cdef TypedValue tv = TypedValue.__new__(TypedValue)
    tv.slot.buf = NULL
    tv._spec = spec
    typed_init(&tv.slot, spec, value, name, size_hint)
    return tv
