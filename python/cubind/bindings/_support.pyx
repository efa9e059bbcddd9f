# cython: language_level=3, boundscheck=False, wraparound=False
"""Shared machinery of cubind.bindings: enum classes, handle and struct base
classes, argument conversions and the lifetime of Python callbacks."""

from cpython.buffer cimport PyBUF_ANY_CONTIGUOUS, PyBUF_WRITABLE, PyObject_CheckBuffer, PyBuffer_Release, PyObject_GetBuffer
from cpython.ref cimport Py_INCREF, Py_DECREF, PyObject
cimport cython
from libc.stdint cimport uintptr_t
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy, memset

import sys as _sys


# ---------------------------------------------------------------------------
# Enums: int subclasses whose members are created once and compared by
# identity or value. A value the class does not know (a status code of a newer
# driver) still converts: it becomes a member named <Class>_<value>, cached.

class _EnumType(type):
    def __call__(cls, value):
        try:
            return cls._value2member_[value]
        except KeyError:
            pass
        except TypeError:
            raise TypeError(f"{cls.__name__}() takes an int, got {type(value).__name__}") from None
        if isinstance(value, str):
            raise TypeError(f"{cls.__name__}() takes an int, got str (use {cls.__name__}[{value!r}] for a name)")
        try:
            value = _index(value)
        except TypeError:
            raise TypeError(f"{cls.__name__}() takes an int, got {type(value).__name__}") from None
        member = cls._value2member_.get(value)
        if member is None:
            member = _new_member(cls, f"{cls.__name__}_{value}", value)
            cls._value2member_[value] = member
        return member

    def __getitem__(cls, name):
        try:
            return cls._members_[name]
        except KeyError:
            raise KeyError(f"{cls.__name__} has no member {name!r}") from None

    def __iter__(cls):
        return iter(cls._members_.values())

    def __len__(cls):
        return len(cls._members_)

    def __contains__(cls, item):
        if isinstance(item, cls):
            return True
        return isinstance(item, int) and item in cls._value2member_

    def __repr__(cls):
        return f"<enum {cls.__name__!r}>"

    @property
    def __members__(cls):
        return dict(cls._members_)


class Enum(int, metaclass=_EnumType):
    """Base of every cubind enum: an int with a name."""

    _members_ = {}
    _value2member_ = {}

    @property
    def name(self):
        return self._name_

    @property
    def value(self):
        return int(self)

    def __repr__(self):
        return f"<{type(self).__name__}.{self._name_}: {int(self)}>"

    def __str__(self):
        return f"{type(self).__name__}.{self._name_}"

    def __format__(self, spec):
        return int.__format__(int(self), spec)

    def __reduce__(self):
        return (type(self), (int(self),))

    __hash__ = int.__hash__


def _new_member(cls, name, value):
    member = int.__new__(cls, value)
    member._name_ = name
    return member


def make_enum(name, module, names, values, doc=None, strip_prefix=None):
    """Builds an enum class from parallel sequences of member names and values.

    With strip_prefix, each member is also reachable without that prefix
    (nvjitlink.InputType.LTOIR as well as NVJITLINK_INPUT_LTOIR).
    """
    cls = _EnumType(name, (Enum,), {"__module__": module, "__doc__": doc, "__qualname__": name})
    members = {}
    by_value = {}
    for member_name, value in zip(names, values):
        member = by_value.get(value)
        if member is None:
            member = _new_member(cls, member_name, value)
            by_value[value] = member
        members[member_name] = member
        type.__setattr__(cls, member_name, member)
        if strip_prefix and member_name.startswith(strip_prefix) and len(member_name) > len(strip_prefix):
            short = member_name[len(strip_prefix):]
            if not short[0].isdigit():
                if member._name_ == member_name:
                    member._name_ = short
                members[short] = member
                type.__setattr__(cls, short, member)
    type.__setattr__(cls, "_members_", members)
    type.__setattr__(cls, "_value2member_", by_value)
    return cls


# ---------------------------------------------------------------------------
# Handles and structs

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


cdef void* handle_value(object obj, type cls, str name) except? NULL:
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
    # bytearray when obj is None, else the caller's, which must be writable and
    # hold them. Sets *ptr; returns the buffer (release ref afterwards).
    if obj is None:
        obj = bytearray(n)
    ptr[0] = address(obj, ref, True, name)
    if ref.held and <size_t>ref.view.len < n:
        release_address(ref)
        raise ValueError(f"{name} holds {len(obj)} bytes; {reported_by} reports {n}")
    return obj


cdef void release_address(BufferRef* ref) noexcept:
    if ref.held:
        ref.held = False
        PyBuffer_Release(&ref.view)


cdef void* struct_pointer(object obj, type cls, str name) except? NULL:
    if obj is None:
        return NULL
    if isinstance(obj, cls):
        return (<Struct>obj)._ptr
    raise TypeError(f"{name}: expected {cls.__name__} or None, got {type(obj).__name__}")


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


# ---------------------------------------------------------------------------
# Callbacks. A context holds (callable, user data); CUDA is handed the
# context as its userData and the generated trampoline calls back here.

cdef void* callback_context(object fn, object user_data, bint one_shot=True) except NULL:
    if not callable(fn):
        raise TypeError(f"expected a callable, got {type(fn).__name__}")
    context = (fn, user_data, one_shot)
    Py_INCREF(context)
    return <void*>context


cdef void callback_invoke(void* context, tuple leading) noexcept:
    cdef tuple entry = <tuple><PyObject*>context
    fn, user_data, one_shot = entry
    try:
        fn(*leading, user_data)
    except BaseException as e:
        # Reported through sys.unraisablehook: the caller of CUDA is gone.
        hook = _sys.unraisablehook
        try:
            hook(_Unraisable(type(e), e, e.__traceback__, f"Exception in CUDA callback {fn!r}", fn))
        except BaseException:
            pass


cdef void callback_discard(void* context) noexcept:
    Py_DECREF(<object>context)


cdef void callback_finished(void* context) noexcept:
    # A callback captured into a graph runs at every launch: its context stays.
    if (<tuple><PyObject*>context)[2]:
        Py_DECREF(<object>context)


class _Unraisable:
    __slots__ = ("exc_type", "exc_value", "exc_traceback", "err_msg", "object")

    def __init__(self, exc_type, exc_value, exc_traceback, err_msg, obj):
        self.exc_type = exc_type
        self.exc_value = exc_value
        self.exc_traceback = exc_traceback
        self.err_msg = err_msg
        self.object = obj


# ---------------------------------------------------------------------------
# Small conversions used by the generated code

from operator import index as _index

cdef object new_handle(type cls, void* value):
    cdef Handle h = cls.__new__(cls)
    h._value = value
    return h


cdef void set_handle(Handle h, void* value) noexcept:
    h._value = value


cdef object as_int(object obj, str name):
    if isinstance(obj, int):
        return obj
    try:
        return _index(obj)
    except TypeError:
        raise TypeError(f"{name}: expected an int, got {type(obj).__name__}") from None


cdef void* struct_pointer_required(object obj, type cls, str name) except NULL:
    if isinstance(obj, cls):
        return (<Struct>obj)._ptr
    raise TypeError(f"{name}: expected {cls.__name__}, got {type(obj).__name__}")


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


cdef bytes c_string(const char* buf, Py_ssize_t n):
    cdef Py_ssize_t i = 0
    while i < n and buf[i] != 0:
        i += 1
    return buf[:i]


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


# ---------------------------------------------------------------------------
# Scalars by struct-module format character, without the struct module.

cdef int store_scalar(void* dst, char fmt, object v) except -1:
    if fmt == b"i":
        (<int*>dst)[0] = v
    elif fmt == b"I":
        (<unsigned int*>dst)[0] = v
    elif fmt == b"q":
        (<long long*>dst)[0] = v
    elif fmt == b"Q":
        (<unsigned long long*>dst)[0] = v
    elif fmt == b"N":
        (<size_t*>dst)[0] = v
    elif fmt == b"n":
        (<Py_ssize_t*>dst)[0] = v
    elif fmt == b"l":
        (<long*>dst)[0] = v
    elif fmt == b"L":
        (<unsigned long*>dst)[0] = v
    elif fmt == b"h":
        (<short*>dst)[0] = v
    elif fmt == b"H":
        (<unsigned short*>dst)[0] = v
    elif fmt == b"b":
        (<signed char*>dst)[0] = v
    elif fmt == b"B":
        (<unsigned char*>dst)[0] = v
    elif fmt == b"?":
        (<unsigned char*>dst)[0] = 1 if v else 0
    elif fmt == b"f":
        (<float*>dst)[0] = v
    elif fmt == b"d":
        (<double*>dst)[0] = v
    elif fmt == b"P":
        (<void**>dst)[0] = plain_address(v, "value")
    elif fmt == b"c":
        (<char*>dst)[0] = (<bytes>v)[0] if isinstance(v, bytes) and len(v) == 1 else v
    else:
        raise ValueError(f"unsupported scalar format {chr(fmt)!r}")
    return 0


cdef object load_scalar(const void* src, char fmt):
    if fmt == b"i":
        return (<const int*>src)[0]
    if fmt == b"I":
        return (<const unsigned int*>src)[0]
    if fmt == b"q":
        return (<const long long*>src)[0]
    if fmt == b"Q":
        return (<const unsigned long long*>src)[0]
    if fmt == b"N":
        return (<const size_t*>src)[0]
    if fmt == b"n":
        return (<const Py_ssize_t*>src)[0]
    if fmt == b"l":
        return (<const long*>src)[0]
    if fmt == b"L":
        return (<const unsigned long*>src)[0]
    if fmt == b"h":
        return (<const short*>src)[0]
    if fmt == b"H":
        return (<const unsigned short*>src)[0]
    if fmt == b"b":
        return (<const signed char*>src)[0]
    if fmt == b"B" or fmt == b"?":
        return (<const unsigned char*>src)[0]
    if fmt == b"f":
        return (<const float*>src)[0]
    if fmt == b"d":
        return (<const double*>src)[0]
    if fmt == b"P":
        return <uintptr_t>(<void* const*>src)[0]
    raise ValueError(f"unsupported scalar format {chr(fmt)!r}")


# ---------------------------------------------------------------------------
# Values whose type an attribute selects. spec: (kind, size, format, cls, count);
# count 0 means as many as the size hint holds.

_TYPED_KINDS = {"scalar": TYPED_SCALAR, "enum": TYPED_WRAPPED, "value": TYPED_WRAPPED, "handle": TYPED_HANDLE, "pointer": TYPED_POINTER,
                "struct": TYPED_STRUCT, "bytes": TYPED_BYTES}


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
    return s


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
            elif spec.kind == TYPED_BYTES:
                array_assign(self._buf, spec.size * self._count, 1, "b", v, name)
            elif spec.fmt == b"f" or spec.fmt == b"d":
                store_scalar(self._buf + i * spec.size, spec.fmt, float(v))
            else:
                store_scalar(self._buf + i * spec.size, spec.fmt, as_int(v, name))

    cdef object _element(self, Py_ssize_t i):
        cdef TypedSpec spec = self._spec
        if spec.kind == TYPED_SCALAR:
            return load_scalar(self._buf + i * spec.size, spec.fmt)
        if spec.kind == TYPED_WRAPPED:
            return spec.cls(load_scalar(self._buf + i * spec.size, spec.fmt))
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


# ---------------------------------------------------------------------------
# Kernel arguments: (values, types) where each type is a ctypes type, or None
# for a cubind object passed by the address of its storage (getPtr()).

# ctypes is imported at the first (values, types) launch, not with the module.
cdef object _ctypes = None
cdef object _SimpleCData = None

# The layout of the last types tuple packed (held, so its identity stays unique).
cdef object _last_kinds = None
cdef char _last_fmts[32]
cdef Py_ssize_t _last_sizes[32]
cdef Py_ssize_t _last_offsets[32]
cdef Py_ssize_t _last_total = 0


cdef void _remember_layout(tuple kinds, Py_ssize_t n, char* fmts, Py_ssize_t* sizes, Py_ssize_t* offsets,
                           Py_ssize_t total) noexcept:
    global _last_kinds, _last_total
    memcpy(_last_fmts, fmts, n * sizeof(char))
    memcpy(_last_sizes, sizes, n * sizeof(Py_ssize_t))
    memcpy(_last_offsets, offsets, n * sizeof(Py_ssize_t))
    _last_total = total
    _last_kinds = kinds
cdef dict _CTYPE_INFO = None   # ctypes type -> (format byte or 0, size, alignment)


cdef _load_ctypes():
    global _ctypes, _CTYPE_INFO, _SimpleCData
    import ctypes
    _ctypes = ctypes
    _SimpleCData = ctypes._SimpleCData
    _CTYPE_INFO = {}
    for t, fmt in ((ctypes.c_bool, b"?"), (ctypes.c_char, b"c"), (ctypes.c_byte, b"b"), (ctypes.c_ubyte, b"B"),
                   (ctypes.c_short, b"h"), (ctypes.c_ushort, b"H"), (ctypes.c_int, b"i"), (ctypes.c_uint, b"I"),
                   (ctypes.c_long, b"l"), (ctypes.c_ulong, b"L"), (ctypes.c_longlong, b"q"),
                   (ctypes.c_ulonglong, b"Q"), (ctypes.c_size_t, b"N"), (ctypes.c_ssize_t, b"n"),
                   (ctypes.c_float, b"f"), (ctypes.c_double, b"d"), (ctypes.c_void_p, b"P")):
        _CTYPE_INFO[t] = (fmt[0], ctypes.sizeof(t), ctypes.alignment(t))


cdef tuple _ctype_info(object t):
    info = _CTYPE_INFO.get(t)
    if info is None:
        # Any other ctypes type (a Structure, an array): copied from a ctypes instance.
        try:
            info = (0, _ctypes.sizeof(t), _ctypes.alignment(t))
        except TypeError:
            raise TypeError(f"kernelParams: {t!r} is not a ctypes type or None") from None
        _CTYPE_INFO[t] = info
    return <tuple>info


cdef class KernelParams:
    def __cinit__(self, values, types):
        cdef tuple vals = values if type(values) is tuple else tuple(values)
        cdef tuple kinds = types if type(types) is tuple else tuple(types)
        cdef Py_ssize_t n = len(vals)
        cdef Py_ssize_t offset = 0
        cdef Py_ssize_t size, align, i
        cdef char fmt
        cdef tuple info
        # Per argument: format, size and alignment, read once from the cache.
        cdef char fmts[32]
        cdef Py_ssize_t sizes[32]
        cdef Py_ssize_t offsets[32]
        if len(kinds) != n:
            raise ValueError(f"kernelParams: {n} values but {len(kinds)} types")
        if n > 32:
            # Rare: more than 32 arguments go through a list of layouts.
            self._pack_many(vals, kinds)
            return
        if _ctypes is None:
            _load_ctypes()
        if kinds is _last_kinds:
            # The same types tuple as the previous launch (the usual case): its layout.
            memcpy(fmts, _last_fmts, n * sizeof(char))
            memcpy(sizes, _last_sizes, n * sizeof(Py_ssize_t))
            memcpy(offsets, _last_offsets, n * sizeof(Py_ssize_t))
            offset = _last_total
        else:
            for i in range(n):
                t = kinds[i]
                if t is None:
                    fmts[i] = 0
                    sizes[i] = -1
                    continue
                info = _ctype_info(t)
                fmts[i] = info[0]
                size = info[1]
                align = info[2]
                offset = (offset + align - 1) // align * align
                offsets[i] = offset
                sizes[i] = size
                offset += size
            _remember_layout(kinds, n, fmts, sizes, offsets, offset)
        self.args = self._inline_args
        if offset <= sizeof(self._inline):
            self._data = self._inline
        else:
            self._data = <char*>alloc_array(offset, 1)
        for i in range(n):
            v = vals[i]
            if sizes[i] < 0:
                self.args[i] = self._object_pointer(v, i)
                continue
            self._store(v, kinds[i], fmts[i], self._data + offsets[i], sizes[i], i)
            self.args[i] = self._data + offsets[i]

    cdef void* _object_pointer(self, object v, Py_ssize_t i) except? NULL:
        if self._keep is None:
            self._keep = []
        self._keep.append(v)
        if isinstance(v, Handle):
            return &(<Handle>v)._value
        if isinstance(v, Struct):
            return (<Struct>v)._ptr
        if hasattr(v, "getPtr"):
            return <void*><uintptr_t>v.getPtr()
        raise TypeError(f"kernelParams[{i}]: a value whose type is None must be a cubind object "
                        f"(handle, struct or value type), got {type(v).__name__}")

    cdef int _store(self, object v, object t, char fmt, char* dst, Py_ssize_t size, Py_ssize_t i) except -1:
        if fmt != 0:
            # Plain Python values convert directly; a ctypes instance fails the
            # conversion and is copied below.
            try:
                store_scalar(dst, fmt, v)
                return 0
            except TypeError:
                if not isinstance(v, _SimpleCData):
                    raise TypeError(f"kernelParams[{i}]: {v!r} does not convert to {t.__name__}") from None
            except (OverflowError, ValueError) as e:
                raise type(e)(f"kernelParams[{i}]: {v!r} does not convert to {t.__name__} ({e})") from None
        try:
            # A ctypes instance, or a ctypes type other than the simple ones.
            c = v if isinstance(v, t) else t(v)
            memcpy(dst, <void*><uintptr_t>_ctypes.addressof(c), size)
        except (TypeError, OverflowError, ValueError) as e:
            raise type(e)(f"kernelParams[{i}]: {v!r} does not convert to {t.__name__} ({e})") from None
        return 0

    cdef _pack_many(self, tuple vals, tuple kinds):
        cdef Py_ssize_t n = len(vals)
        cdef Py_ssize_t offset = 0
        cdef Py_ssize_t i, size, align
        if _ctypes is None:
            _load_ctypes()
        layout = []
        for i in range(n):
            t = kinds[i]
            if t is None:
                layout.append(None)
                continue
            info = _ctype_info(t)
            size = info[1]
            align = info[2]
            offset = (offset + align - 1) // align * align
            layout.append((info[0], offset, size))
            offset += size
        self._data = <char*>alloc_array(offset if offset > 0 else 1, 1)
        self.args = <void**>alloc_array(n, sizeof(void*))
        for i in range(n):
            v = vals[i]
            entry = layout[i]
            if entry is None:
                self.args[i] = self._object_pointer(v, i)
                continue
            self._store(v, kinds[i], <char>entry[0], self._data + <Py_ssize_t>entry[1], entry[2], i)
            self.args[i] = self._data + <Py_ssize_t>entry[1]

    def __dealloc__(self):
        if self._data != self._inline:
            free(self._data)
        if self.args != self._inline_args:
            free(self.args)


cdef object kernel_params(object obj):
    if obj is None or isinstance(obj, int):
        return obj
    if isinstance(obj, KernelParams):
        return obj
    if isinstance(obj, tuple) and len(obj) == 2:
        values, types = obj
        return KernelParams(values, types)
    try:
        return _index(obj)
    except TypeError:
        raise TypeError(f"kernelParams: expected None, an address or a (values, types) tuple, "
                        f"got {type(obj).__name__}") from None


cdef void** kernel_params_pointer(object packed) except? NULL:
    if packed is None:
        return NULL
    if isinstance(packed, KernelParams):
        return (<KernelParams>packed).args
    if packed < 0:
        raise ValueError(f"kernelParams: an address cannot be negative ({packed})")
    return <void**><uintptr_t>packed


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
