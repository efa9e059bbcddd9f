# void * values whose C type an attribute parameter selects.

from cpython.dict cimport PyDict_GetItem
from cpython.object cimport PyObject
from libc.stdlib cimport free
from libc.string cimport memset

from cubind.bindings._support.enums cimport EnumTable
from cubind.bindings._support.scalars cimport load_scalar

# What a typed value holds, from an attribute's entry in a module's table.
cdef enum TypedKind:
    TYPED_SCALAR    # an integer or floating-point number
    TYPED_WRAPPED   # a number shown as an instance of a class (an enum member, a CUdeviceptr)
    TYPED_HANDLE    # a handle (void *)
    TYPED_POINTER   # an address
    TYPED_STRUCT    # a struct class's storage
    TYPED_BYTES     # raw bytes
    TYPED_BOOL      # a C integer holding a boolean: True/False, as cuda.bindings reads it


cdef class TypedSpec:
    # The C type of one attribute's value, prepared once per attribute.
    cdef TypedKind kind
    cdef Py_ssize_t size     # of one element
    cdef char fmt            # struct-module format character of a number; 0 otherwise
    cdef object cls          # enum, handle or struct class; None otherwise
    cdef Py_ssize_t count    # elements; 0: sized by the caller
    cdef dict members        # TYPED_WRAPPED: the enum class's value -> member dict; None otherwise


cdef TypedSpec typed_spec(tuple spec, object cls)


cdef class TypedTable:
    # One attribute enum's value types: its C value -> TypedSpec, each entry
    # prepared at its first use; the last one found is kept, so that a
    # getter called again with the same attribute does no lookup.
    cdef str enum_name
    cdef dict entries        # value -> (kind, size, format, class, count) or its TypedSpec
    cdef EnumTable enums     # resolves an entry's class named by a string
    cdef long long _last_key
    cdef TypedSpec _last
    cdef TypedSpec spec(self, long long key, str name)


# Storage for one typed value, on the caller's stack: `buf` is `inline_`
# unless the value needs more, when it is allocated (typed_release frees it).
ctypedef struct TypedSlot:
    void* ptr
    Py_ssize_t nbytes        # the value's size: the type's size times its count
    Py_ssize_t count
    char* buf
    char inline_[64]


# The usual getter's value (one element of at most 64 bytes, none given in),
# a number or an enum member read back, are handled inline; the *_other functions do
# the rest.
cdef int typed_init_other(TypedSlot* slot, TypedSpec spec, object value, str name, Py_ssize_t size_hint) except -1
cdef object typed_read_other(const TypedSlot* slot, TypedSpec spec)


cdef inline int typed_init(TypedSlot* slot, TypedSpec spec, object value, str name, Py_ssize_t size_hint) except -1:
    # Storage for one attribute's value: size_hint bytes for a caller-sized
    # value (count 0), else count elements; `value` (not None) is stored.
    if value is None and size_hint == 0 and spec.count == 1 and spec.size <= <Py_ssize_t>sizeof(slot.inline_):
        slot.count = 1
        slot.nbytes = spec.size
        memset(slot.inline_, 0, sizeof(slot.inline_))
        slot.buf = slot.inline_
        slot.ptr = slot.buf
        return 0
    return typed_init_other(slot, spec, value, name, size_hint)


cdef inline object typed_read(const TypedSlot* slot, TypedSpec spec):
    # The value the call wrote: one element, or a list of count elements.
    cdef PyObject* member
    if spec.count == 1:
        if spec.kind == TYPED_SCALAR:
            return load_scalar(slot.buf, spec.fmt)
        if spec.members is not None:
            member = PyDict_GetItem(spec.members, load_scalar(slot.buf, spec.fmt))
            if member != NULL:
                return <object>member
    return typed_read_other(slot, spec)


cdef inline void typed_release(TypedSlot* slot) noexcept:
    if slot.buf != NULL and slot.buf != slot.inline_:
        free(slot.buf)
    slot.buf = NULL
    slot.ptr = NULL


cdef class TypedValue:
    # A TypedSlot in an object, for a list of values (cuPointerGetAttributes).
    cdef TypedSlot slot
    cdef TypedSpec _spec
    cpdef object value(self)


cdef TypedValue typed_value(TypedSpec spec, object value, str name, Py_ssize_t size_hint)
