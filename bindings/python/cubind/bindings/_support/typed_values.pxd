# void * values whose C type an attribute parameter selects.

from cubind.bindings._support.enums cimport EnumTable

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


cdef int typed_init(TypedSlot* slot, TypedSpec spec, object value, str name, Py_ssize_t size_hint) except -1
cdef object typed_read(const TypedSlot* slot, TypedSpec spec)
cdef void typed_release(TypedSlot* slot) noexcept


cdef class TypedValue:
    # A TypedSlot in an object, for a list of values (cuPointerGetAttributes).
    cdef TypedSlot slot
    cdef TypedSpec _spec
    cpdef object value(self)


cdef TypedValue typed_value(TypedSpec spec, object value, str name, Py_ssize_t size_hint)
